/**
 * The versions row of a host, read from the bundle's versions.txt (VERSIONS_SCRIPT's `### name`
 * blocks). A tool that is missing or failing leaves its field undefined; the side-by-side table
 * prints `—` there, so "not installed on node 2" shows as plainly as a different version.
 */
import { blocks } from '../../checks/vllm/shared-facts.js';

export interface HostVersions {
  kernel?: string;
  os?: string;
  /** The loaded kernel module's version (what runs), else nvidia-smi's. */
  driver?: string;
  /** `open` or `proprietary` module. */
  driverFlavour?: string;
  /** nvidia-smi's "CUDA Version" (what the driver supports). */
  cuda?: string;
  /** nvcc's release (the toolkit), when installed. */
  nvcc?: string;
  ofed?: string;
  mlx5Core?: string;
  rdmaCore?: string;
  perftest?: string;
  docaOfed?: string;
  libnccl2?: string;
  vllm?: string;
  ray?: string;
  torch?: string;
  nccl?: string;
}

export const VERSION_ROWS: ReadonlyArray<[keyof HostVersions, string]> = [
  ['os', 'OS'],
  ['kernel', 'kernel'],
  ['driver', 'NVIDIA driver'],
  ['driverFlavour', 'kernel module'],
  ['cuda', 'CUDA (driver)'],
  ['nvcc', 'CUDA toolkit (nvcc)'],
  ['ofed', 'OFED/DOCA (ofed_info -s)'],
  ['docaOfed', 'doca-ofed package'],
  ['mlx5Core', 'mlx5_core module'],
  ['rdmaCore', 'rdma-core'],
  ['perftest', 'perftest'],
  ['libnccl2', 'libnccl2'],
  ['nccl', 'NCCL (torch)'],
  ['torch', 'torch'],
  ['ray', 'Ray'],
  ['vllm', 'vLLM'],
];

const NOT_FOUND = /not found|No such file|command not found|has failed|Failed to initialize|ERROR/i;

export function parseVersionsText(text: string): HostVersions {
  const v: HostVersions = {};
  for (const b of blocks(text)) {
    const body = b.body.trim();
    const first = body.split('\n')[0]?.trim() ?? '';
    const usable = first !== '' && !NOT_FOUND.test(first);
    switch (b.name) {
      case 'kernel':
        if (usable) v.kernel = first;
        break;
      case 'os':
        if (usable) v.os = first;
        break;
      case 'nvidia-module': {
        const m = /Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)/.exec(first);
        if (m) {
          v.driver = m[1]!;
          v.driverFlavour = /Open Kernel Module/.test(first) ? 'open' : 'proprietary';
        }
        break;
      }
      case 'nvidia-smi': {
        const d = /Driver Version:\s*(\S+)/.exec(body);
        const c = /CUDA Version:\s*(\S+)/.exec(body);
        if (d && !v.driver) v.driver = d[1]!;
        if (c) v.cuda = c[1]!;
        break;
      }
      case 'nvcc': {
        const m = /release (\d+\.\d+)/.exec(body);
        if (m) v.nvcc = m[1]!;
        break;
      }
      case 'ofed':
        if (usable) v.ofed = first.replace(/:$/, '');
        break;
      case 'mlx5_core':
        if (usable && !/^modinfo:/.test(first)) v.mlx5Core = first;
        break;
      case 'packages':
        for (const line of body.split('\n')) {
          const [name, version] = line.trim().split(/\s+/);
          if (!name || !version) continue;
          if (name === 'rdma-core') v.rdmaCore = version;
          else if (name === 'perftest') v.perftest = version;
          else if (name === 'doca-ofed') v.docaOfed = version;
          else if (name === 'libnccl2') v.libnccl2 = version;
        }
        break;
      case 'python': {
        // One line: `vllm ray torch (major, minor, patch)` — torch.cuda.nccl.version() is a tuple.
        const m = /^(\S+) (\S+) (\S+) \((\d+), (\d+), (\d+)\)$/m.exec(body);
        if (m) {
          v.vllm = m[1]!;
          v.ray = m[2]!;
          v.torch = m[3]!;
          v.nccl = `${m[4]}.${m[5]}.${m[6]}`;
        }
        break;
      }
      default:
        break;
    }
  }
  return v;
}
