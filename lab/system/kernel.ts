/**
 * Kernel modules and the kernel ring buffer.
 *
 * `machine.modules` (names in load order) stays the one list of loaded modules every view reads
 * (/sys/module, /proc/modules, lsmod, lspci's driver lines); this module adds what the tools need
 * to print and to decide: a registry of module definitions (size, version, dependencies, whether
 * the module exists on the machine, load-time failures, boot autoloading), modprobe/rmmod logic,
 * modprobe.d blacklists, modules-load.d, and the dmesg ring.
 *
 * Other parts of the lab declare their modules with registerKernelModule(), e.g. the GPU driver:
 *   registerKernelModule({ name: 'nvidia_peermem', size: 16384, depends: ['nvidia', 'ib_core'],
 *     available: (m) => driverInstalled(m),
 *     load: (m) => peerMemoryIbCore(m) ? undefined : { error: 'Invalid argument',
 *       dmesg: ['nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)'] } });
 */
import type { Machine } from '../model/types.js';

export interface ModuleLoadFailure {
  /** strerror text modprobe prints after `could not insert 'NAME': `. */
  error: string;
  /** Lines the kernel logs (dmesg) about the failure. */
  dmesg?: string[];
}

export interface KernelModuleDef {
  /** Name as lsmod prints it (underscores). */
  name: string;
  /** Size in bytes (lsmod). */
  size: number;
  /** `modinfo -F version`; absent for in-tree modules without MODULE_VERSION (prints nothing). */
  version?: string | ((m: Machine) => string | undefined);
  /** Modules modprobe loads first and that show this module in their "Used by". */
  depends?: readonly string[];
  description?: string;
  license?: string;
  author?: string;
  /** Path below /lib/modules/<release>/ (default kernel/drivers/misc/<name>.ko). */
  path?: string | ((m: Machine) => string);
  /** Whether the module file exists on this machine (default: always, an in-tree module). */
  available?: (m: Machine) => boolean;
  /** Refuses the load (modprobe prints `could not insert`); runs before the module is listed. */
  load?: (m: Machine) => ModuleLoadFailure | undefined;
  /** After the module was added to machine.modules: change the model (devices appear …). */
  loaded?: (m: Machine) => void;
  /** After it was removed. */
  unloaded?: (m: Machine) => void;
  /** Loaded at boot by hardware autodetection (udev), unless blacklisted in modprobe.d. */
  autoload?: (m: Machine) => boolean;
  /** Kernel messages logged when it loads. */
  messages?: (m: Machine) => string[];
}

const REGISTRY = new Map<string, KernelModuleDef>();

export const moduleName = (name: string): string => name.replace(/-/g, '_');

/** Declares a module (replacing an earlier definition of the same name). */
export function registerKernelModule(def: KernelModuleDef): void {
  REGISTRY.set(moduleName(def.name), def);
}

export function kernelModule(name: string): KernelModuleDef | undefined {
  return REGISTRY.get(moduleName(name));
}

export function registeredModules(): KernelModuleDef[] {
  return [...REGISTRY.values()];
}

export function moduleVersion(def: KernelModuleDef, m: Machine): string | undefined {
  return typeof def.version === 'function' ? def.version(m) : def.version;
}

export function modulePath(def: KernelModuleDef, m: Machine): string {
  const rel = typeof def.path === 'function' ? def.path(m) : (def.path ?? `kernel/drivers/misc/${def.name}.ko`);
  return `/lib/modules/${m.os.kernelRelease}/${rel}`;
}

export const isAvailable = (def: KernelModuleDef | undefined, m: Machine): def is KernelModuleDef =>
  def !== undefined && (def.available?.(m) ?? true);

/** One line of the kernel ring buffer. */
export interface KernelMessage {
  /** Seconds since boot. */
  t: number;
  /** Console log level 0 (emerg) … 7 (debug). */
  level: number;
  text: string;
}

export class KernelLog {
  ring: KernelMessage[] = [];

  constructor(private readonly uptime: () => number) {}

  /** Appends a line at the current uptime (level 6, info, unless given). */
  log(text: string, level = 6): void {
    this.ring.push({ t: this.uptime(), level, text });
  }

  clear(): void {
    this.ring = [];
  }
}

export type LoadResult =
  | { ok: true; loaded: string[] }
  | { ok: false; failed: string; failure: ModuleLoadFailure }
  | { ok: false; missing: string };

/**
 * Loads `name` and its dependencies as modprobe does (dependencies first, already-loaded ones
 * skipped). Changes machine.modules and bumps the revision.
 */
export function loadModule(m: Machine, log: KernelLog, name: string): LoadResult {
  const mod = moduleName(name);
  const def = kernelModule(mod);
  if (!isAvailable(def, m)) return { ok: false, missing: mod };
  if (m.modules.includes(mod)) return { ok: true, loaded: [] };
  const loaded: string[] = [];
  for (const dep of def.depends ?? []) {
    const r = loadModule(m, log, dep);
    if (!r.ok) return r;
    loaded.push(...r.loaded);
  }
  const failure = def.load?.(m);
  if (failure) {
    for (const line of failure.dmesg ?? []) log.log(line, 3);
    return { ok: false, failed: mod, failure };
  }
  m.modules.push(mod);
  for (const line of def.messages?.(m) ?? []) log.log(line);
  def.loaded?.(m);
  m.revision++;
  loaded.push(mod);
  return { ok: true, loaded };
}

/** Loaded modules that depend on `mod`. */
export function holders(m: Machine, mod: string): string[] {
  return [...m.modules].reverse().filter((x) => kernelModule(x)?.depends?.includes(mod));
}

export type UnloadResult = { ok: true } | { ok: false; reason: 'not-loaded' | 'in-use'; module: string };

/** `modprobe -r`: removes `name`, then the dependencies nothing else holds. */
export function unloadModule(m: Machine, name: string): UnloadResult {
  const mod = moduleName(name);
  if (!m.modules.includes(mod)) return { ok: false, reason: 'not-loaded', module: mod };
  if (holders(m, mod).length > 0) return { ok: false, reason: 'in-use', module: mod };
  m.modules.splice(m.modules.indexOf(mod), 1);
  kernelModule(mod)?.unloaded?.(m);
  m.revision++;
  for (const dep of kernelModule(mod)?.depends ?? []) {
    if (m.modules.includes(dep) && holders(m, dep).length === 0 && !kernelModule(dep)?.autoload?.(m))
      unloadModule(m, dep);
  }
  return { ok: true };
}

/** Module names listed in modules-load.d style text (`#`/`;` comments, one per line). */
export function parseModulesLoad(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'))
    .map((l) => l.split(/\s+/)[0] as string);
}

/** `blacklist NAME` lines of modprobe.d files. */
export function parseBlacklist(text: string): string[] {
  return text
    .split('\n')
    .map((l) => /^\s*blacklist\s+(\S+)/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined)
    .map(moduleName);
}

// The modules of a fresh L20 server (Linux 5.15.0-126, in-tree, no MODULE_VERSION).
const K = (dir: string, name: string): string => `kernel/${dir}/${name}.ko`;
const always = (): boolean => true;
const MLX = 'drivers/net/ethernet/mellanox/mlx5/core';
for (const def of [
  {
    name: 'mlxfw',
    size: 36864,
    path: K('drivers/net/ethernet/mellanox/mlxfw', 'mlxfw'),
    description: 'Mellanox firmware flash lib',
    author: 'Yotam Gigi <yotamg@mellanox.com>',
  },
  {
    name: 'mlx5_core',
    size: 1626112,
    depends: ['mlxfw'],
    path: K(MLX, 'mlx5_core'),
    description: 'Mellanox 5th generation network adapters (ConnectX series) core driver',
    author: 'Eli Cohen <eli@mellanox.com>',
  },
  {
    name: 'ib_core',
    size: 417792,
    path: K('drivers/infiniband/core', 'ib_core'),
    description: 'core kernel InfiniBand API',
    author: 'Roland Dreier',
  },
  {
    name: 'ib_uverbs',
    size: 163840,
    depends: ['ib_core'],
    path: K('drivers/infiniband/core', 'ib_uverbs'),
    description: 'InfiniBand userspace verbs access',
    author: 'Roland Dreier',
  },
  {
    name: 'mlx5_ib',
    size: 397312,
    depends: ['ib_uverbs', 'ib_core', 'mlx5_core'],
    path: K('drivers/infiniband/hw/mlx5', 'mlx5_ib'),
    description: 'Mellanox 5th generation network adapters (ConnectX series) IB driver',
    author: 'Eli Cohen <eli@mellanox.com>',
  },
  {
    name: 'igb',
    size: 245760,
    path: K('drivers/net/ethernet/intel/igb', 'igb'),
    description: 'Intel(R) Gigabit Ethernet Network Driver',
    author: 'Intel Corporation, <e1000-devel@lists.sourceforge.net>',
  },
  { name: 'ast', size: 57344, path: K('drivers/gpu/drm/ast', 'ast'), description: 'AST', author: 'Dave Airlie' },
  {
    name: 'nouveau',
    size: 2269184,
    path: K('drivers/gpu/drm/nouveau', 'nouveau'),
    description: 'nVidia Riva/TNT/GeForce/Quadro/Tesla/Tegra K1+',
    author: 'Nouveau Project',
  },
  {
    name: 'nvidiafb',
    size: 53248,
    path: K('drivers/video/fbdev/nvidia', 'nvidiafb'),
    description: 'Framebuffer driver for nVidia graphics chipset',
    author: 'Antonino Daplas',
  },
  {
    name: 'ib_ipoib',
    size: 139264,
    depends: ['ib_core'],
    path: K('drivers/infiniband/ulp/ipoib', 'ipoib/ib_ipoib'),
    description: 'IP-over-InfiniBand net driver',
    author: 'Roland Dreier',
  },
  {
    name: 'ib_umad',
    size: 40960,
    depends: ['ib_core'],
    path: K('drivers/infiniband/core', 'ib_umad'),
    description: 'InfiniBand userspace MAD packet access',
    author: 'Roland Dreier',
  },
  {
    name: 'rdma_cm',
    size: 126976,
    depends: ['ib_core'],
    path: K('drivers/infiniband/core', 'rdma_cm'),
    description: 'Generic RDMA CM Agent',
    author: 'Sean Hefty',
  },
  {
    name: 'rdma_ucm',
    size: 28672,
    depends: ['ib_uverbs', 'rdma_cm', 'ib_core'],
    path: K('drivers/infiniband/core', 'rdma_ucm'),
    description: 'RDMA Userspace Connection Manager Access',
    author: 'Sean Hefty',
  },
  {
    name: 'bonding',
    size: 196608,
    path: K('drivers/net/bonding', 'bonding'),
    description: 'Ethernet Channel Bonding Driver, v5.15.0-126-generic',
    author: 'Thomas Davis, tadavis@lbl.gov and many others',
  },
  {
    name: 'dummy',
    size: 16384,
    path: K('drivers/net', 'dummy'),
    description: 'Dummy netdevice driver which discards all packets sent to it',
    author: '',
  },
] as KernelModuleDef[]) {
  const base = {
    license: def.name === 'igb' || def.name === 'bonding' || def.name === 'dummy' ? 'GPL' : 'Dual BSD/GPL',
    available: always,
  };
  const autoload = [
    'mlxfw',
    'mlx5_core',
    'ib_core',
    'ib_uverbs',
    'mlx5_ib',
    'igb',
    'ast',
    'nouveau',
    'nvidiafb',
  ].includes(def.name);
  registerKernelModule({ ...base, ...def, ...(autoload ? { autoload: always } : {}) });
}
