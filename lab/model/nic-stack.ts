/**
 * The NIC software stack of a machine (docs/STAGES.md §3.3, §4.3 "Packages"): which mlx5 driver is loaded
 * (the kernel's inbox one or an out-of-tree MLNX_OFED / DOCA-OFED build), and what the RDMA devices
 * are called.
 *
 * Names are given when the driver registers the devices (boot or driver reload), never in between:
 * the kernel names them `mlx5_N` in probe (PCI) order; Ubuntu's rdma-core ships
 * /lib/udev/rules.d/60-rdma-persistent-naming.rules (`NAME_FALLBACK`), which renames them
 * `rocep<bus>s<slot>f<fn>` (bus in decimal, `roceP<dom>p…` outside domain 0). MLNX_OFED and DOCA-OFED
 * ship their own rdma-core whose rule keeps the kernel names. Installing a package therefore changes
 * nothing until the next reload, exactly as on a server.
 */
import { isInstalled } from './packages.js';
import { resetQos } from './qos.js';
import { resetRdmaRuntime } from './rdma.js';
import type { Machine, OfedStack, RdmaDevice } from './types.js';

/** DOCA-Host 2.9.1 LTS installs DOCA-OFED built from this OFED tree (`ofed_info -s`: `OFED-internal-24.10-1.1.4:`). */
export const DOCA_OFED_VERSION = '24.10-1.1.4';

/**
 * The tutorial's MLNX_OFED as the lab installs it (23.10-1.1.9.0, the real build nearest the recipe's
 * unpublished 23.10-1.1.8.0): dpkg names and versions of the MLNX_OFED 23.10 Ubuntu 22.04 bundle.
 */
export const MLNX_OFED_23_10_PACKAGES: ReadonlyArray<[name: string, version: string]> = [
  ['mlnx-ofed-all', '23.10-1.1.9.0'],
  ['ofed-scripts', '23.10-OFED.23.10.1.1.9'],
  ['mlnx-ofed-kernel-utils', '23.10.OFED.23.10.1.1.9.1-1'],
  ['mlnx-ofed-kernel-dkms', '23.10.OFED.23.10.1.1.9.1-1'],
  ['mlnx-tools', '23.10.0-1.2310119'],
  ['rdma-core', '2307mlnx47-1.2310119'],
  ['libibverbs1', '2307mlnx47-1.2310119'],
  ['ibverbs-providers', '2307mlnx47-1.2310119'],
  ['ibverbs-utils', '2307mlnx47-1.2310119'],
  ['librdmacm1', '2307mlnx47-1.2310119'],
  ['rdmacm-utils', '2307mlnx47-1.2310119'],
  ['infiniband-diags', '2307mlnx47-1.2310119'],
  ['libibumad3', '2307mlnx47-1.2310119'],
  ['perftest', '23.10.0-0.29.g0705c22.2310119'],
];

/** What each bundle's presence is read from in the dpkg database. */
const BUNDLE_PACKAGE = { mlnx_ofed: 'mlnx-ofed-all', doca: 'doca-ofed' } as const;

/**
 * The stack whose mlx5_core runs, once a removal or an install made it differ from what is on disk
 * (the kernel keeps the module it loaded until the next reload); null = the inbox driver.
 */
const running = new WeakMap<Machine, OfedStack | null>();

/**
 * The out-of-tree stack installed on disk: MLNX_OFED as the scenario left it, or DOCA-OFED from apt.
 * `m.ofed` follows the dpkg database: purging the bundle drops it, installing doca-ofed creates it.
 */
export function installedOfed(m: Machine): OfedStack | undefined {
  if (m.ofed && !isInstalled(m.packages, BUNDLE_PACKAGE[m.ofed.flavor])) {
    if (m.ofed.loaded && !running.has(m)) running.set(m, { ...m.ofed });
    delete m.ofed;
  }
  if (!m.ofed && isInstalled(m.packages, BUNDLE_PACKAGE.doca)) {
    if (!running.has(m)) running.set(m, null);
    m.ofed = { flavor: 'doca', version: DOCA_OFED_VERSION, loaded: false };
  }
  return m.ofed;
}

/** The OFED the running mlx5_core comes from; undefined for the kernel's inbox driver. */
export function loadedOfed(m: Machine): OfedStack | undefined {
  const o = installedOfed(m);
  if (running.has(m)) return running.get(m) ?? undefined;
  return o?.loaded ? o : undefined;
}

/** `23.10-1.1.9.0` → `23.10-1.1.9`: the driver reports the release without its trailing `.0`. */
export function driverVersionOf(ofedVersion: string): string {
  return ofedVersion.replace(/\.0$/, '');
}

/** `ethtool -i` version of the loaded mlx5_core: the OFED release, or the kernel release for the inbox driver. */
export function mlx5LoadedVersion(m: Machine): string {
  const o = loadedOfed(m);
  return o ? driverVersionOf(o.version) : m.os.kernelRelease;
}

/** `modinfo -F version mlx5_core` (the module file on disk): OFED's version; the inbox module has none. */
export function mlx5ModuleVersion(m: Machine): string | undefined {
  const o = installedOfed(m);
  return o ? driverVersionOf(o.version) : undefined;
}

/** Which naming policy applies when the devices register next. */
export function rdmaNaming(m: Machine): 'kernel' | 'udev' {
  const rc = m.packages.get('rdma-core');
  if (!rc || !isInstalled(m.packages, 'rdma-core')) return 'kernel';
  // MLNX_OFED/DOCA rdma-core (`2307mlnx47-…`) keeps the kernel's names.
  return /mlnx/.test(rc.version) ? 'kernel' : 'udev';
}

/** rdma-core's NAME_FALLBACK: `rocep<bus>s<slot>f<fn>`, `roceP<dom>p<bus>s<slot>f<fn>` outside domain 0. */
export function roceName(bdf: string): string {
  const m = /^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i.exec(bdf);
  if (!m) return bdf;
  const [dom, bus, slot, fn] = [m[1], m[2], m[3], m[4]].map((x) => parseInt(x as string, 16)) as [
    number,
    number,
    number,
    number,
  ];
  return dom === 0 ? `rocep${bus}s${slot}f${fn}` : `roceP${dom}p${bus}s${slot}f${fn}`;
}

const isLag = (r: RdmaDevice): boolean => /_bond_\d+$/.test(r.name);

/** Names every per-port RDMA device as a fresh registration would (RoCE LAG devices keep theirs). */
export function nameRdmaDevices(m: Machine): void {
  const naming = rdmaNaming(m);
  const ports = m.rdma.filter((r) => !isLag(r)).sort((a, b) => a.pci.localeCompare(b.pci));
  ports.forEach((r, i) => {
    r.name = naming === 'udev' ? roceName(r.pci) : `mlx5_${i}`;
  });
  m.revision++;
}

/**
 * The mlx5 driver was (re)loaded — boot, `openibd restart`, `modprobe -r mlx5_core; modprobe mlx5_ib`:
 * an installed OFED's module is the one running now, devices are named afresh, and the runtime
 * state the driver held (DCB settings, GID tables, counters) is gone.
 */
export function mlx5Reloaded(m: Machine): void {
  const o = installedOfed(m);
  if (o) o.loaded = true;
  running.delete(m);
  nameRdmaDevices(m);
  resetQos(m);
  resetRdmaRuntime(m);
}

/** Installs packages straight into the dpkg database (scenarios: the state a finished install leaves). */
export function putPackages(m: Machine, list: ReadonlyArray<[string, string]>): void {
  for (const [name, version] of list) m.packages.set(name, { name, version, arch: 'amd64', status: 'ii ' });
}

/**
 * /etc/init.d/openibd as MLNX_OFED installs it, reduced to what the lab models: it unloads and
 * reloads the mlx5 driver stack with modprobe (every mlx5 link drops for a few seconds).
 */
export const OPENIBD_SCRIPT = `#!/bin/bash
### BEGIN INIT INFO
# Provides:       openibd
# Required-Start: $local_fs
# Required-Stop:
# Default-Start:  2 3 4 5
# Default-Stop:   0 1 6
# Description:    Activates/Deactivates InfiniBand Driver to start at boot time.
### END INIT INFO
# The l20-setup lab's openibd: the real script's unload/load of the HCA driver stack.
unload() {
  for m in rdma_ucm ib_ipoib ib_umad mlx5_ib ib_uverbs rdma_cm mlx5_core; do modprobe -r $m >/dev/null 2>&1; done
  printf '%-58s[  OK  ]\\n' 'Unloading HCA driver:'
}
load() {
  modprobe mlx5_core && modprobe mlx5_ib && modprobe ib_umad && modprobe ib_ipoib || {
    printf '%-58s[FAILED]\\n' 'Loading HCA driver and Access Layer:'; return 1; }
  printf '%-58s[  OK  ]\\n' 'Loading HCA driver and Access Layer:'
}
case "$1" in
  start|force-start) load ;;
  stop|force-stop) unload ;;
  restart|force-restart) unload; load ;;
  status) lsmod | grep -E '^(mlx5_core|mlx5_ib|ib_core) ' ;;
  *) echo "Usage: $0 {start|force-start|stop|force-stop|restart|force-restart|status}"; exit 1 ;;
esac
`;
