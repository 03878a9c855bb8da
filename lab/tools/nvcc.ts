/**
 * nvcc --version / -V of the toolkits the lab's archive carries. The five-line format and the 13.0
 * build stamp are real (fixtures/h200-x2/nvcc_--version.txt; fixtures/corpus/nvcc--version__cuda-12.4-ubuntu22.txt
 * for the layout); 12.8 and Ubuntu's 11.5 use their release builds' stamps.
 */
import { isInstalled } from '../model/packages.js';
import type { Machine } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

interface Toolkit {
  pkg: string;
  release: string;
  build: string;
  builtOn: string;
  compiler: string;
  year: number;
}

const TOOLKITS: Toolkit[] = [
  {
    pkg: 'cuda-nvcc-13-0',
    release: '13.0',
    build: '13.0.88',
    builtOn: 'Wed_Aug_20_01:58:59_PM_PDT_2025',
    compiler: '36424714_0',
    year: 2025,
  },
  {
    pkg: 'cuda-nvcc-12-8',
    release: '12.8',
    build: '12.8.93',
    builtOn: 'Fri_Feb_21_20:23:50_PST_2025',
    compiler: '35583870_0',
    year: 2025,
  },
  {
    pkg: 'nvidia-cuda-toolkit',
    release: '11.5',
    build: '11.5.119',
    builtOn: 'Thu_Nov_18_09:45:30_PST_2021',
    compiler: '30672275_0',
    year: 2021,
  },
];

function installed(m: Machine): Toolkit | undefined {
  return TOOLKITS.find((t) => isInstalled(m.packages, t.pkg));
}

export const nvcc: Tool = {
  name: 'nvcc',
  path: '/usr/bin/nvcc',
  packages: TOOLKITS.map((t) => t.pkg),
  run(args, { machine }) {
    const t = installed(machine);
    if (!t) return fail(127, 'bash: nvcc: command not found\n');
    if (args.includes('--version') || args.includes('-V')) {
      return ok(
        `nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-${t.year} NVIDIA Corporation\nBuilt on ${t.builtOn}\nCuda compilation tools, release ${t.release}, V${t.build}\nBuild cuda_${t.release}.r${t.release}/compiler.${t.compiler}\n`,
      );
    }
    return fail(1, 'nvcc fatal   : No input files specified; use option --help for more information\n');
  },
};
