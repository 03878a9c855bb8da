/**
 * Small NVIDIA tool outputs as doctor kinds: `nvcc --version`, `/proc/driver/nvidia/version`,
 * `nvidia-smi topo -m`, `nvidia-smi -L` and `nvidia-smi --version` (facts and summaries, no rules).
 */
import { parseNvcc, type NvccFacts } from '../../../parse/nvcc.js';
import { parseNvidiaDriverVersion, type NvidiaDriverVersionFacts } from '../../../parse/nvidia-driver-version.js';
import {
  parseNvidiaSmiList,
  parseNvidiaSmiVersion,
  type NvidiaSmiListFacts,
  type NvidiaSmiVersionFacts,
} from '../../../parse/nvidia-smi-misc.js';
import { parseNvidiaSmiTopo, type NvidiaSmiTopoFacts } from '../../../parse/nvidia-smi-topo.js';
import type { KindDef } from '../../types.js';
import { hasAny, head, lineIndexOf } from './common.js';

export const nvcc: KindDef<NvccFacts> = {
  kind: 'nvcc',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Cuda compil', 'nvcc')) return 0;
    const a = /Cuda compilation tools,\s*release \d+\.\d+/.test(t);
    const b = /nvcc: NVIDIA \(R\) Cuda compiler driver/.test(t);
    return a && b ? 0.8 : a || b ? 0.7 : 0;
  },
  parse: parseNvcc,
  findings: () => [],
  summary: (f) => [
    ['CUDA toolkit', f.cudaVersion ?? '?'],
    ...(f.cudaBuildVersion ? ([['build', f.cudaBuildVersion]] as Array<[string, string]>) : []),
  ],
};

export const nvidiaDriverVersion: KindDef<NvidiaDriverVersionFacts> = {
  kind: 'nvidia-driver-version',
  detect: (text) => {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'NVRM version', '/proc/driver/nvidia/version')) return 0;
    return /NVRM version:\s*NVIDIA\b/.test(t)
      ? 0.95
      : /\/proc\/driver\/nvidia\/version: No such file/.test(t)
        ? 0.7
        : 0;
  },
  parse: parseNvidiaDriverVersion,
  findings: () => [],
  summary(f) {
    if (f.present === false) return [['driver', 'not loaded (/proc/driver/nvidia/version missing)']];
    return [
      ['driver', f.version ?? '?'],
      [
        'kernel module',
        f.openKernelModule === undefined ? '?' : f.openKernelModule ? 'open (DMA-BUF capable)' : 'proprietary',
      ],
      ...(f.gccVersion ? ([['GCC', f.gccVersion]] as Array<[string, string]>) : []),
    ];
  },
};

export const nvidiaSmiTopo: KindDef<NvidiaSmiTopoFacts> = {
  kind: 'nvidia-smi-topo',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'GPU0', 'X ', 'NIC')) return 0;
    const at = lineIndexOf(t, /\bGPU0\b.*(?:CPU Affinity|\bGPU1\b|\bNIC0\b|\bmlx5_\d)/);
    // Another output above the matrix (`lsmod | grep nvidia` then `topo -m`) is the primary one.
    if (at >= 0) return at <= 2 ? 0.95 : 0.7;
    if (/^\s*X\s*=\s*Self\b/m.test(t) && /^\s*GPU\d+\s+X\b/m.test(t)) return 0.8;
    // A fragment: matrix rows only (`NIC30  SYS  SYS  NODE  PIX …`).
    return /^\s*(?:GPU|NIC)\d+(?:\s+(?:X|SYS|NODE|PHB|PXB|PIX|NV\d+)){3}/m.test(t) ? 0.7 : 0;
  },
  parse: parseNvidiaSmiTopo,
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [
      ['GPUs', String(f.gpus.length)],
      ['NICs', f.nics.length > 0 ? f.nics.map((n) => f.nicNames[n] ?? n).join(' ') : 'none'],
    ];
    for (const g of f.gpus.slice(0, 16)) {
      const near = f.nics.filter((n) => /^(?:PIX|PXB)$/.test(f.links[g]?.[n] ?? ''));
      if (f.nics.length > 0)
        rows.push([
          g,
          near.length > 0 ? `GDR-close NIC: ${near.map((n) => f.nicNames[n] ?? n).join(', ')}` : 'no NIC at PIX/PXB',
        ]);
    }
    return rows;
  },
};

export const nvidiaSmiList: KindDef<NvidiaSmiListFacts> = {
  kind: 'nvidia-smi-list',
  detect: (text) =>
    text.includes('(UUID: GPU-') && /^GPU \d+: .+ \(UUID: GPU-[0-9a-fA-F-]+\)/m.test(head(text, 64 * 1024)) ? 0.8 : 0,
  parse: parseNvidiaSmiList,
  findings: () => [],
  summary: (f) => [
    ['GPUs', `${f.gpus.length}${f.gpus[0]?.name ? ` × ${[...new Set(f.gpus.map((g) => g.name))].join(', ')}` : ''}`],
  ],
};

export const nvidiaSmiVersion: KindDef<NvidiaSmiVersionFacts> = {
  kind: 'nvidia-smi-version',
  detect: (text) =>
    text.includes('NVIDIA-SMI version') &&
    /^NVIDIA-SMI version\s*:/m.test(head(text, 64 * 1024)) &&
    /^DRIVER version\s*:/im.test(head(text, 64 * 1024))
      ? 0.9
      : 0,
  parse: parseNvidiaSmiVersion,
  findings: () => [],
  summary: (f) => [
    ['driver', f.driverVersion ?? '?'],
    ['CUDA (driver)', f.cudaVersion ?? '?'],
  ],
};
