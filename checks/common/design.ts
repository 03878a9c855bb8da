/**
 * The fabric addressing of each network design (docs/STAGES.md §2), shared by network (what to write),
 * rdma-link (which GID each device must carry), nccl (which netdev/devices to name), ray and vllm
 * (which address is the control address). Host number i is the host's 1-based inventory position.
 *
 *  A         cable k → 192.168.10k.0/24, one netdev per cable, MTU 9000; control = cable 1.
 *  B         bond0 = both ports of NIC 1 → 192.168.110.0/24, bond1 = NIC 2 → 192.168.111.0/24 (802.3ad).
 *  tutorial  bond0 = all four ports, balance-xor → 192.168.100.0/24.
 * With more than two hosts (a switch), cable k becomes rail k: port k of every host.
 */
import type { ClusterConfig } from '../../src/config/schema.js';
import type { CablingMap, FabricFacts } from './fabric.js';

export type Design = ClusterConfig['network']['design'];

export interface PlannedInterface {
  name: string;
  kind: 'ethernet' | 'bond';
  /** `192.168.101.1/24`; empty for bond slaves. */
  addresses: string[];
  mtu: number;
  slaves?: string[];
  /** Cable (design A) or NIC (B) number, 1-based. */
  rail?: number;
  parameters?: Record<string, string | number>;
}

export interface DesignPlan {
  design: Design;
  interfaces: PlannedInterface[];
  /** Where NCCL bootstrap, Ray, vLLM DP RPC and torch rendezvous run. */
  control: { netdev: string; address: string; subnet: string };
}

const BOND_B = {
  mode: '802.3ad',
  'lacp-rate': 'fast',
  'mii-monitor-interval': 100,
  'transmit-hash-policy': 'layer3+4',
};
const BOND_TUTORIAL = { mode: 'balance-xor', 'lacp-rate': 'fast' };

/** The control (cable 1 / bond0) address of host i (0-based index): needs no facts. */
export function controlAddress(design: Design, hostIndex: number): string {
  const third = design === 'A' ? 101 : design === 'B' ? 110 : 100;
  return `192.168.${third}.${hostIndex + 1}`;
}

export function controlSubnet(design: Design): string {
  return `${controlAddress(design, -1).replace(/\.0$/, '')}.0/24`;
}

/** Subnet of rail k (1-based) in design A. */
export function railSubnet(k: number): string {
  return `192.168.${100 + k}.0/24`;
}

/**
 * The plan for one host; a string explains why there is none (cabling unknown, too few ports).
 * Design A needs the cabling map on two hosts: both ends of cable k must get subnet k.
 */
export function designPlan(
  config: ClusterConfig,
  hostIndex: number,
  fabric: FabricFacts,
  cabling: CablingMap | undefined,
  hostCount: number,
): DesignPlan | string {
  const design = config.network.design;
  const mtu = config.network.mtu;
  const i = hostIndex + 1;
  const ports = fabric.ports;
  if (ports.length === 0) return `${fabric.host} has no ConnectX ports`;
  if (design === 'A') {
    let rails: Array<{ k: number; netdev: string }>;
    if (hostCount > 2) {
      rails = ports.map((p, n) => ({ k: n + 1, netdev: p.netdev }));
    } else {
      if (!cabling || cabling.cables.length === 0)
        return 'the cabling is not known yet: bring the ports up and let network.discover-cabling map it';
      rails = cabling.cables.flatMap((c) =>
        c.ends.filter((e) => e.host === fabric.host).map((e) => ({ k: c.index, netdev: e.netdev })),
      );
      if (rails.length === 0) return `no cable ends at ${fabric.host}`;
    }
    const interfaces = rails.map((r): PlannedInterface => ({
      name: r.netdev,
      kind: 'ethernet',
      addresses: [`192.168.${100 + r.k}.${i}/24`],
      mtu,
      rail: r.k,
    }));
    const first = interfaces.find((x) => x.rail === 1) ?? interfaces[0]!;
    return {
      design,
      interfaces,
      control: {
        netdev: first.name,
        address: first.addresses[0]!.replace(/\/\d+$/, ''),
        subnet: railSubnet(first.rail ?? 1),
      },
    };
  }
  if (design === 'B') {
    const cards = [...new Set(ports.map((p) => p.card))].sort();
    const bonds = cards.slice(0, 2).map((card, n): PlannedInterface => ({
      name: `bond${n}`,
      kind: 'bond',
      addresses: [`192.168.${110 + n}.${i}/24`],
      mtu,
      rail: n + 1,
      slaves: ports.filter((p) => p.card === card).map((p) => p.netdev),
      parameters: { ...BOND_B },
    }));
    if (bonds.some((b) => (b.slaves?.length ?? 0) !== 2))
      return 'design B needs two dual-port cards (both ports of each cabled to one peer card)';
    const slaves = bonds.flatMap((b) =>
      b.slaves!.map((s): PlannedInterface => ({ name: s, kind: 'ethernet', addresses: [], mtu })),
    );
    return {
      design,
      interfaces: [...slaves, ...bonds],
      control: { netdev: 'bond0', address: `192.168.110.${i}`, subnet: '192.168.110.0/24' },
    };
  }
  const slaves = ports.map((p): PlannedInterface => ({ name: p.netdev, kind: 'ethernet', addresses: [], mtu }));
  const bond: PlannedInterface = {
    name: 'bond0',
    kind: 'bond',
    addresses: [`192.168.100.${i}/24`],
    mtu,
    slaves: ports.map((p) => p.netdev),
    parameters: { ...BOND_TUTORIAL },
  };
  return {
    design,
    interfaces: [...slaves, bond],
    control: { netdev: 'bond0', address: `192.168.100.${i}`, subnet: '192.168.100.0/24' },
  };
}
