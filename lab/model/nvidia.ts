/**
 * The NVIDIA driver of a machine (docs/STAGES.md §4.1 "versions", §4.3 "Packages"): what is installed on
 * disk (derived from the dpkg database, as Ubuntu names the packages, or a runfile install) and what
 * the running kernel has loaded (`machine.nvidia.loaded`). The two differ exactly as on a server:
 * installing a driver loads nothing until the next boot (nouveau keeps the GPUs), and a new userspace
 * over an old loaded module gives NVML's version mismatch. Boot loads whatever module is installed.
 */
import type { InstalledPackage, Machine, NvidiaRuntime } from './types.js';

export interface DriverBuild {
  /** Upstream version: `580.126.09`. */
  version: string;
  open: boolean;
  /** Ubuntu's `-server` packaging (DKMS module `nvidia-srv`) or the desktop one (`nvidia`). */
  server: boolean;
  /** `dkms` (built at install), `prebuilt` (linux-modules-nvidia-*), `runfile` (nvidia-installer). */
  source: 'dkms' | 'prebuilt' | 'runfile';
  /** The package that carries the module, when from apt. */
  package?: string;
}

/** `580.126.09-0ubuntu0.22.04.1` → `580.126.09`. */
export function upstream(debianVersion: string): string {
  return debianVersion.replace(/^\d+:/, '').replace(/-[^-]*$/, '');
}

const usable = (p: InstalledPackage): boolean => p.status[1] === 'i';

/** The kernel module the next boot loads: a DKMS or prebuilt package for the running kernel, else a runfile install. */
export function installedModule(m: Machine): DriverBuild | undefined {
  for (const p of m.packages.values()) {
    if (!usable(p)) continue;
    const dkms = /^nvidia-dkms-(\d+)(-server)?(-open)?$/.exec(p.name);
    if (dkms)
      return {
        version: upstream(p.version),
        open: dkms[3] !== undefined,
        server: dkms[2] !== undefined,
        source: 'dkms',
        package: p.name,
      };
    const pre = /^linux-modules-nvidia-(\d+)(-server)?(-open)?-(.+)$/.exec(p.name);
    if (pre && pre[4] === m.os.kernelRelease)
      return {
        version: upstream(p.version),
        open: pre[3] !== undefined,
        server: pre[2] !== undefined,
        source: 'prebuilt',
        package: p.name,
      };
  }
  const rf = m.nvidia?.runfile;
  return rf ? { version: rf.version, open: rf.open, server: false, source: 'runfile' } : undefined;
}

/** The userspace (NVML, nvidia-smi, libcuda) installed: its version. */
export function installedUserspace(m: Machine): string | undefined {
  for (const p of m.packages.values()) {
    if (usable(p) && /^(?:nvidia-utils|libnvidia-compute)-\d+(?:-server)?$/.test(p.name)) return upstream(p.version);
  }
  return m.nvidia?.runfile?.version;
}

/** Whether nvidia-smi exists (nvidia-utils of any branch, or a runfile install). */
export function hasNvidiaSmi(m: Machine): boolean {
  return (
    [...m.packages.values()].some((p) => usable(p) && /^nvidia-utils-\d+(?:-server)?$/.test(p.name)) ||
    m.nvidia?.runfile !== undefined
  );
}

export function runtime(m: Machine): NvidiaRuntime {
  m.nvidia ??= { persistence: false };
  return m.nvidia;
}

/** The CUDA version the driver's API supports (nvidia-smi's `CUDA Version:`), by branch. */
export function cudaOf(version: string): string {
  const branch = Number(version.split('.')[0]);
  const table: Array<[number, string]> = [
    [580, '13.0'],
    [575, '12.9'],
    [570, '12.8'],
    [565, '12.7'],
    [560, '12.6'],
    [555, '12.5'],
    [550, '12.4'],
    [545, '12.3'],
    [535, '12.2'],
    [525, '12.0'],
    [470, '11.4'],
  ];
  return table.find(([b]) => branch >= b)?.[1] ?? '11.0';
}

/**
 * `/proc/driver/nvidia/version` first line body. Open: `NVIDIA UNIX Open Kernel Module for x86_64  580.126.09  Release Build  (root@l20-n1)  <date>`
 * (fixtures/h200-x2/proc_driver_nvidia_version.txt); proprietary: `NVIDIA UNIX x86_64 Kernel Module  535.183.01  <date>`
 * (fixtures/corpus/proc-driver-nvidia-version__proprietary-515-and-580.txt).
 */
export function nvrmLine(l: NonNullable<NvidiaRuntime['loaded']>): string {
  return l.open
    ? `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  ${l.version}  Release Build  (${l.builder})  ${l.built}`
    : `NVRM version: NVIDIA UNIX x86_64 Kernel Module  ${l.version}  ${l.built}`;
}

/** NVIDIA's build dates of the proprietary modules the lab carries (the open modules show the DKMS build). */
const PROPRIETARY_BUILT: Record<string, string> = {
  '535.183.01': 'Sun May 12 19:39:15 UTC 2024',
  '570.172.08': 'Tue Jul  8 18:21:46 UTC 2025',
  '580.126.09': 'Wed Jan  7 22:43:18 UTC 2026',
  '580.95.05': 'Tue Sep 23 09:52:19 UTC 2025',
};

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `date`'s default format in UTC: `Mon Jan  6 08:50:00 UTC 2025`. */
export function dateText(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC ${d.getUTCFullYear()}`;
}

/** What loading `build` records: the module's identity as /proc/driver/nvidia/version prints it. */
export function loadedFrom(m: Machine, build: DriverBuild, builtAtMs: number): NonNullable<NvidiaRuntime['loaded']> {
  return {
    version: build.version,
    open: build.open,
    builder: build.source === 'runfile' ? 'buildmeister@builder' : `root@${m.hostname}`,
    built: build.open ? dateText(builtAtMs) : (PROPRIETARY_BUILT[build.version] ?? dateText(builtAtMs)),
  };
}

/** Whether `nvidia-smi` can talk to the driver, and if not, what it prints (exit code as real). */
export function smiFailure(m: Machine): { text: string; exitCode: number } | undefined {
  const loaded = m.nvidia?.loaded;
  if (!loaded) {
    return {
      text: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n",
      exitCode: 9,
    };
  }
  const user = installedUserspace(m);
  if (user && user !== loaded.version) {
    // R565+ also name the library version; the lab's userspace branches are 535, 570 and 580.
    const lib =
      Number(user.split('.')[0]) >= 565 ? `NVML library version: ${user.split('.').slice(0, 2).join('.')}\n` : '';
    return { text: `Failed to initialize NVML: Driver/library version mismatch\n${lib}`, exitCode: 18 };
  }
  return undefined;
}

/**
 * The GPUDirect RDMA path that works on this machine now (the NCCL model asks): DMA-BUF with the
 * open module on a kernel ≥ 5.12, else nvidia-peermem when it is loaded, else none.
 */
export function gdrPath(m: Machine): 'dmabuf' | 'peermem' | 'none' {
  const l = m.nvidia?.loaded;
  if (!l) return 'none';
  const [maj = 0, min = 0] = m.os.kernelRelease.split(/[.-]/).map(Number);
  if (l.open && (maj > 5 || (maj === 5 && min >= 12))) return 'dmabuf';
  return m.modules.includes('nvidia_peermem') ? 'peermem' : 'none';
}

/** Which driver the GPUs are bound to (lspci -k `Kernel driver in use`, `Kernel modules`). */
export function bindGpus(m: Machine): void {
  const driver = m.nvidia?.loaded ? 'nvidia' : m.modules.includes('nouveau') ? 'nouveau' : undefined;
  const candidates = installedModule(m) ? ['nvidiafb', 'nouveau', 'nvidia_drm', 'nvidia'] : ['nvidiafb', 'nouveau'];
  for (const p of m.pci) {
    if (p.kind !== 'gpu') continue;
    if (driver) p.driver = driver;
    else delete p.driver;
    p.modules = candidates;
  }
  m.revision++;
}
