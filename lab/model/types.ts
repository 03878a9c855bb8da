/**
 * The model of one simulated server. It is plain structured state: every tool renderer and every
 * /proc or /sys file is computed from it on demand, so a command that changes state (later
 * stages: netplan apply, apt-get install, modprobe, reboot) changes every view at once.
 */
import type { SimClock } from '../util/clock.js';
import type { MachineSystem } from '../system/machine-system.js';

/** PCIe link generation: 1 = 2.5GT/s … 5 = 32GT/s (the encoding of LnkCap/LnkSta). */
export type PcieGen = 1 | 2 | 3 | 4 | 5;

export interface PcieLink {
  /** `Port #N` in LnkCap. */
  port: number;
  capGen: PcieGen;
  capWidth: number;
  staGen: PcieGen;
  staWidth: number;
}

/** The seven ACS control/capability bits lspci prints, in its order. */
export interface AcsFlags {
  srcValid: boolean;
  transBlk: boolean;
  reqRedir: boolean;
  cmpltRedir: boolean;
  upstreamFwd: boolean;
  egressCtrl: boolean;
  directTrans: boolean;
}

export type PciKind =
  'host-bridge' | 'root-port' | 'switch-up' | 'switch-down' | 'gpu' | 'nic' | 'mgmt-nic' | 'bmc-bridge' | 'bmc-vga';

export interface PciBar {
  index: number;
  kind: 'mem32' | 'mem64' | 'io';
  prefetchable: boolean;
  address: bigint;
  size: bigint;
}

export interface PciFunction {
  /** `0000:18:00.0` */
  bdf: string;
  kind: PciKind;
  vendorId: number;
  deviceId: number;
  subVendorId: number;
  subDeviceId: number;
  /** Base class, subclass, prog-if: 0x030200 for a 3D controller. */
  classCode: number;
  revision: number;
  /** BDF of the bridge above it; absent for functions on a root bus. */
  parent?: string;
  /** sysfs root of its hierarchy: `pci0000:15`. */
  rootBus: string;
  numaNode: number;
  link?: PcieLink;
  /** Type-1 header data for bridges. */
  bridge?: { secondary: number; subordinate: number; mem?: [number, number]; pref?: [bigint, bigint] };
  /** ACS capability and control (bridges; the NIC has the capability but nothing enabled). */
  acs?: { cap: AcsFlags; ctl: AcsFlags };
  /** Physical slot number, set on devices sitting in a slot (drives `ens<slot>` naming). */
  slot?: number;
  /** Downstream ports that implement a slot print `(Slot+)`. */
  hasSlot?: boolean;
  driver?: string;
  modules: string[];
  irq: number;
  bars: PciBar[];
  rom?: { address: number; size: number; disabled: boolean };
  /** Which capability layout the lspci renderer uses. */
  profile:
    'l20' | 'cx4lx' | 'pex-up' | 'pex-down' | 'spr-rp' | 'pch-rp' | 'i210' | 'host-bridge' | 'ast-bridge' | 'ast-vga';
  /** Per-device serials (VPD, DSN). */
  serial?: string;
}

export interface IpAddress {
  family: 'inet' | 'inet6';
  local: string;
  prefixlen: number;
  broadcast?: string;
  scope: 'global' | 'link' | 'host';
  /** Only IPv4 addresses carry a label in iproute2 output. */
  label?: string;
  noprefixroute?: boolean;
  validLft: number;
  preferredLft: number;
}

export interface NetDev {
  ifindex: number;
  name: string;
  altnames: string[];
  linkType: 'loopback' | 'ether';
  /** PCI function backing it (absent for virtual devices). */
  pci?: string;
  driver?: string;
  mac: string;
  mtu: number;
  minMtu: number;
  maxMtu: number;
  txqlen: number;
  numTxQueues: number;
  numRxQueues: number;
  gsoMaxSize: number;
  gsoMaxSegs: number;
  adminUp: boolean;
  /** Devices never brought up still show qdisc `noop`. */
  qdisc: string;
  addrGenMode: 'eui64' | 'none';
  addresses: IpAddress[];
  /** Link capability used by ethtool. */
  phy?: 'cx4lx-sfp28' | 'i210-copper';
  /** Speed when the link is up (Mb/s). */
  linkSpeedMbps?: number;
  /** ethtool -i data. */
  firmware?: string;
  msgLevel?: number;
  /** Bond this device is enslaved to; while enslaved `mac` is the bond's and `permMac` its own. */
  master?: string;
  permMac?: string;
  /** Bond devices (netplan apply, `ip link add … type bond`): the bonding driver's state. */
  bond?: BondInfo;
}

/** A bond as the kernel holds it (rendered by tools/bonding.ts: /proc/net/bonding, `ip -d link`). */
export interface BondInfo {
  /** The kernel's short mode name: `balance-rr`, `active-backup`, `balance-xor`, `802.3ad`, … */
  mode: string;
  miimon: number;
  updelay: number;
  downdelay: number;
  /** `layer2` (the default), `layer2+3`, `layer3+4`, … */
  xmitHashPolicy: string;
  /** What the kernel reports; netplan/networkd pass `lacp-rate` only in 802.3ad, so other modes keep `slow`. */
  lacpRate: 'slow' | 'fast';
  /** Members in enslave order. */
  slaves: string[];
  /**
   * RoCE LAG: set when the members are exactly the two PFs of one card in mode 1, 2 or 4. The
   * per-port RDMA devices are then replaced by one `mlx5_bond_N` (kept here to restore on release).
   */
  lag?: { device: string; replaced: RdmaDevice[] };
}

/** One entry of an RDMA port's GID table (`/sys/class/infiniband/<dev>/ports/1/gids/<n>` and gid_attrs). */
export interface GidEntry {
  /** Full form as sysfs prints it: `0000:0000:0000:0000:0000:ffff:c0a8:6501`. */
  gid: string;
  type: 'IB/RoCE v1' | 'RoCE v2';
  /** The netdev the GID belongs to (a bond slave's port carries the bond's GIDs with ndev = bond). */
  ndev: string;
}

/**
 * RDMA state the kernel keeps at runtime (model/rdma.ts): per RDMA device the GID table (slots keep
 * their index while their address lives; freed slots are reused) and the port's hw_counters, and per
 * netdev the `ethtool -S` counters that traffic moved. Dropped at reboot and driver reload.
 */
export interface RdmaRuntime {
  gids: Record<string, Array<GidEntry | null>>;
  hwCounters: Record<string, Record<string, number>>;
  ethtool: Record<string, Record<string, number>>;
}

/** The host firewall as loaded in the kernel (ufw); the lab's SSH server consults it. */
export interface FirewallState {
  active: boolean;
  /** Loaded ALLOW IN rules: any interface / port / protocol where a field is absent. */
  allowIn: Array<{ iface?: string; port?: number; proto?: 'tcp' | 'udp' }>;
}

export interface Route {
  dst: string;
  gateway?: string;
  dev: string;
  protocol: 'static' | 'kernel' | 'dhcp' | 'boot';
  scope?: 'link' | 'host';
  prefsrc?: string;
  metric?: number;
}

export interface Neighbor {
  dst: string;
  dev: string;
  lladdr?: string;
  router?: boolean;
  state: string;
}

export interface RdmaDevice {
  name: string;
  pci: string;
  netdev: string;
  port: number;
  nodeGuid: string;
  sysImageGuid: string;
  hcaType: string;
  boardId: string;
}

export interface Gpu {
  index: number;
  pci: string;
  name: string;
  uuid: string;
  serial: string;
  memoryMiB: number;
  powerLimitW: number;
  vbios: string;
}

/** The NVIDIA driver as the running kernel has it (model/nvidia.ts); what is installed comes from the dpkg database. */
export interface NvidiaRuntime {
  /** The loaded kernel module (absent: no NVIDIA module, nouveau drives the GPUs). */
  loaded?: {
    version: string;
    open: boolean;
    /** `root@l20-n1`: who built it (the open module's `Release Build (…)`). */
    builder: string;
    /** Build date as /proc/driver/nvidia/version prints it. */
    built: string;
  };
  /** Persistence mode (nvidia-persistenced running, or `nvidia-smi -pm 1`); lost when the module unloads. */
  persistence: boolean;
  /** A driver installed by the .run installer (nvidia-installer), with /usr/bin/nvidia-uninstall. */
  runfile?: { version: string; open: boolean };
  /** UEFI Secure Boot (mokutil --sb-state); DKMS-built modules then need an enrolled MOK. */
  secureBoot?: boolean;
}

/** Work running on a GPU (a CUDA process): nvidia-smi lists it and the telemetry follows its load. */
export interface GpuWork {
  /** GPU index. */
  gpu: number;
  pid: number;
  /** Process name as nvidia-smi prints it (the executable path). */
  name: string;
  memMiB: number;
  /** GPU utilisation it causes, 0–100. */
  utilPct: number;
  /** `C` compute, `G` graphics. */
  type?: 'C' | 'G' | 'C+G';
}

/** Settings that take effect at boot: BIOS ACS per bridge, the kernel command line grub will boot. */
export interface BootFirmware {
  /** ACSCtl the BIOS sets at power-on, by bridge BDF (absent: all off). */
  acs?: Record<string, AcsFlags>;
  /** The command line update-grub generated for the next boot (absent: unchanged). */
  grubCmdline?: string;
}

/**
 * What apt keeps besides the dpkg status: which repositories' indices it has (it offers only their
 * packages), which packages were installed as dependencies, and the dpkg frontend lock. A dpkg run
 * cut off is not kept here but on disk, as dpkg does: /var/lib/dpkg/updates (apt/state.ts).
 */
export interface AptState {
  /** Repository ids (apt/repos.ts) whose Packages index is on disk. */
  lists: Set<string>;
  /** Repositories an `apt-get update` of this lab run fetched: the next update says `Hit:`. */
  fresh: Set<string>;
  /** Automatically installed packages (`apt-mark showauto`). */
  auto: Set<string>;
  /** The command holding /var/lib/dpkg/lock-frontend while it runs. */
  lock?: { pid: number; command: string };
  /** Next system uid/gid adduser hands out (packages that create users). */
  nextSystemId: number;
}

export interface InstalledPackage {
  name: string;
  version: string;
  arch: string;
  /** dpkg `${db:Status-Abbrev}` (3 chars): `ii `, `rc `, `hi `… */
  status: string;
}

export interface Cpu {
  modelName: string;
  vendor: string;
  family: number;
  model: number;
  stepping: number;
  sockets: number;
  coresPerSocket: number;
  threadsPerCore: number;
  maxMHz: string;
  minMHz: string;
  bogoMips: string;
  flags: string;
  addressSizes: string;
  /** Per-instance cache sizes in KiB. */
  cacheKiB: { l1d: number; l1i: number; l2: number; l3: number };
  vulnerabilities: Array<[string, string]>;
}

export interface OsInfo {
  prettyName: string;
  version: string;
  versionId: string;
  codename: string;
  kernelRelease: string;
  /** `uname -v`: `#136-Ubuntu SMP Wed Nov 6 10:38:22 UTC 2024` */
  kernelVersion: string;
  cmdline: string;
}

export interface Machine {
  /** 1-based position in the lab: l20-n1 is 1. */
  index: number;
  hostname: string;
  seed: number;
  os: OsInfo;
  cpu: Cpu;
  /** /proc/meminfo values in kB, in kernel order. */
  meminfo: Array<[string, number | string]>;
  pci: PciFunction[];
  netdevs: NetDev[];
  routes: Route[];
  neighbors: Neighbor[];
  rdma: RdmaDevice[];
  gpus: Gpu[];
  /** NVIDIA driver runtime state (model/nvidia.ts creates it on first use). */
  nvidia?: NvidiaRuntime;
  /** CUDA processes on the GPUs (model/gpu-telemetry.ts); absent or empty: idle. */
  gpuWork?: GpuWork[];
  /** What the next boot applies (BIOS ACS, grub's command line). */
  firmware?: BootFirmware;
  packages: Map<string, InstalledPackage>;
  /** Loaded kernel modules (lsmod order is newest first; kept as insertion order here). */
  modules: string[];
  /** The user the tool logs in as and whether `sudo -n` works for it. */
  user: { name: string; uid: number; gid: number; home: string; sudoNoPasswd: boolean };
  /** The management address the lab's SSH server stands for (SSH_CONNECTION). */
  mgmt: { ifname: string; address: string; sshPort: number; clientAddress: string };
  bootId: string;
  clock: SimClock;
  /** Set by the cluster: whether a cable with carrier ends at this port. */
  carrier(ifname: string): boolean;
  /** Incremented on every change so cached views (sysfs tree) are rebuilt. */
  revision: number;
  /** Boot state, processes, systemd, journal, kernel log, file owners (lab/system/). */
  system: MachineSystem;
  /**
   * Files a scenario puts on the machine (path → content, mode default 0644), written over the base
   * root file system when the machine's shell is created. Scenarios run before that; once the shell
   * exists, files change through it (a command, or shell.fs).
   */
  files?: Map<string, { content: string; mode?: number }>;
  /**
   * NetworkManager runs and renders what netplan gives it (desktop and cloud images; the networkmanager
   * scenario); absent: a server image where only systemd-networkd does.
   */
  networkManager?: boolean;
  /** Which backend configured each device at the last netplan apply (tools/netplan-apply.ts). */
  renderedBy?: Map<string, 'networkd' | 'NetworkManager'>;
  /** Symlinks a scenario leaves (path → target), made after the files: enable links, a venv's python. */
  links?: Map<string, string>;
  /** Directories a scenario leaves with their modes (owners: `system.files`), made before the files. */
  dirs?: Map<string, number>;
  /** ufw's runtime state (tools/ufw.ts); absent = inactive, as on a fresh install. */
  firewall?: FirewallState;
  /** APT's own bookkeeping (lab/apt/state.ts creates it on first use). */
  apt?: AptState;
  /** The NIC software stack beyond the distribution's (model/nic-stack.ts); absent = inbox mlx5 + distro rdma-core. */
  ofed?: OfedStack;
  /** Runtime DCB state per ConnectX PF, keyed by PCI address (model/qos.ts); absent = driver defaults. Lost at reboot and driver reload. */
  qos?: Record<string, PortQos>;
  /** GID tables and RDMA/port counters the kernel keeps at runtime (model/rdma.ts creates it on first use). */
  rdmaRuntime?: RdmaRuntime;
}

/** An out-of-tree NIC stack (MLNX_OFED or DOCA-OFED) as installed on disk and as loaded. */
export interface OfedStack {
  flavor: 'mlnx_ofed' | 'doca';
  /** Release as ofed_info prints it: `23.10-1.1.9.0` (MLNX_OFED), `24.10-1.1.4` (the OFED tree of DOCA-OFED). */
  version: string;
  /** Whether its mlx5_core is the loaded one (false until `openibd restart` or a reboot after installing). */
  loaded: boolean;
}

/** DCB state of one mlx5 PF as the driver holds it (mlnx_qos and `dcb` read and change it). */
export interface PortQos {
  /** `OS controlled` (host) or `Firmware controlled` (the NIC's own LLDP/DCBX agent). */
  dcbx: 'os' | 'firmware';
  trust: 'pcp' | 'dscp';
  /** Hardware DSCP → priority map (64 entries; the firmware default is DSCP >> 3). */
  dscp2prio: number[];
  /** The kernel's DCB APP table DSCP entries, in insertion order (what `dcb app show` lists). */
  dscpApp: Array<[dscp: number, prio: number]>;
  /** PFC enabled per priority 0–7. */
  pfc: boolean[];
}
