/** The facts the inventory stage reads about one host (docs/STAGES.md §3.1 "Facts"). */

export interface PciFunction {
  bdf: string;
  vendorId?: string;
  deviceId?: string;
  classId?: string;
  description: string;
  revision?: string;
  /** `(rev ff)` or an unknown header: the device fell off the bus. */
  offBus: boolean;
}

export interface PcieLink {
  bdf: string;
  description?: string;
  capSpeedGTs?: number;
  capWidth?: number;
  staSpeedGTs?: number;
  staWidth?: number;
  numaNode?: number;
  driver?: string;
  acsEnabled?: string[];
  capabilitiesHidden: boolean;
  /** BDFs from the root port down to this function. */
  path: string[];
}

export interface Netdev {
  name: string;
  bdf: string | null;
  mac?: string;
  /** A bond member's own MAC (its `mac` is the bond's); LLDP identifies the port by it. */
  permMac?: string;
  mtu?: number;
  operstate?: string;
  adminUp: boolean;
  master?: string;
  kind?: string;
  addresses: string[];
}

export interface LinkInfo {
  netdev: string;
  speedMbps?: number;
  linkDetected?: boolean;
  linkReason?: string;
  driver?: string;
  driverVersion?: string;
  firmware?: string;
  busInfo?: string;
}

export interface RdmaPort {
  device: string;
  port: number;
  state: string;
  physState: string;
  netdev?: string;
}

export interface Neighbour {
  port: string;
  /** Peer MACs seen on this port (IPv6 all-nodes neighbours), or LLDP's peer. */
  peerMacs: string[];
  peerSystem?: string;
  /** LLDP port id as sent: a MAC (lldpd's default: the port's permanent MAC) or an interface name. */
  peerPort?: string;
  peerPortIdType?: string;
  peerPortDescr?: string;
  state: 'down' | 'up';
}

export interface InventoryFacts {
  host: string;
  os: { id?: string; versionId?: string; prettyName?: string; kernel?: string };
  cpu: { modelName?: string; sockets?: number; cpus?: number; numaNodes?: number };
  memTotalKiB?: number;
  nics: PciFunction[];
  gpus: PciFunction[];
  pcie: PcieLink[];
  netdevs: Netdev[];
  mgmt: { serverAddress?: string; serverPort?: number; netdev?: string; gateway?: string; defaultDev?: string };
  rdma: RdmaPort[];
  links: LinkInfo[];
  topology: { source: 'nvidia-smi' | 'pci' | 'none'; gpuToNic: Array<{ gpu: string; nic: string; relation: string }> };
  stack: {
    ofed?: { version: string; flavor: string };
    nvidiaDriver?: { version: string; openKernelModule: boolean };
    gpuDriverLoaded: boolean;
    packages: Record<string, string>;
    /** dpkg's two- or three-letter state of each installed package as it printed it (`ii`, `hi`). */
    packageStatus: Record<string, string>;
  };
  /** /etc/machine-id and the GPUs' UUIDs: what tells two inventory names for one machine apart. */
  identity: { machineId?: string; gpuUuids: string[] };
  neighbours: Neighbour[];
  /** Probes that could not run at all (permission, missing tool that should exist), with evidence. */
  problems: Array<{ probe: string; evidence: string }>;
}

/** Netdevs that belong to Mellanox PCI functions: the fabric ports. */
export function fabricNetdevs(f: InventoryFacts): Netdev[] {
  const nicBdfs = new Set(f.nics.map((n) => n.bdf));
  return f.netdevs.filter((n) => n.bdf !== null && nicBdfs.has(n.bdf));
}
