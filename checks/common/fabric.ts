/**
 * Fabric discovery every stage repeats at its start (docs/STAGES.md §1: names are never hard-coded; they
 * change with the NIC stack, bonding and reboots): the ConnectX physical functions with their netdevs,
 * MACs, addresses and RDMA devices, the management netdev, and — across hosts — the cabling map that
 * numbers the cables and so decides which subnet each port gets.
 *
 * A stage includes FABRIC_PROBES in its own probes and calls collectFabric on the results.
 */
import type { HostFacts, ProbeDef, ProbeOutputs } from '../../src/engine/types.js';
import { collectInventory } from '../inventory/collect.js';
import type { InventoryFacts, Netdev, Neighbour, RdmaPort } from '../inventory/facts.js';
import { inventoryProbes } from '../inventory/probes.js';

/** The inventory probes a stage needs to re-discover the fabric: the same commands, one definition. */
const FABRIC_PROBE_IDS = new Set([
  'lspci-nics',
  'ip-link',
  'ip-addr',
  'sysfs-net',
  'ssh-connection',
  'route-default',
  'rdma-link',
  'lldp',
  'neighbours',
]);
export const FABRIC_PROBES: readonly ProbeDef[] = inventoryProbes.filter((p) => FABRIC_PROBE_IDS.has(p.id));
/**
 * The probes that say which ConnectX ports a host has (lspci names the functions, ip their netdevs): a check
 * about the fabric ports needs them, so a missing lspci or ip reads as "cannot tell", never as "no ports".
 */
export const PORT_NEEDS = ['lspci-nics', 'ip-link'] as const;
/** PORT_NEEDS and the RDMA device of each port (`rdma link show`). */
export const RDMA_PORT_NEEDS = [...PORT_NEEDS, 'rdma-link'] as const;

/** One ConnectX physical function as the fabric sees it. */
export interface FabricPort {
  netdev: string;
  bdf: string;
  /** `0000:1a:00`: the two ports of one dual-port card share it. */
  card: string;
  mac?: string;
  /** Own MAC of a bond member (its `mac` is the bond's). */
  permMac?: string;
  mtu?: number;
  adminUp: boolean;
  operstate?: string;
  /** Bond this port is enslaved to. */
  master?: string;
  /** `a.b.c.d/nn`, kernel order. */
  addresses: string[];
  /** RDMA device bound to this netdev (`mlx5_0`, `rocep26s0f0`, `mlx5_bond_0` for a LAG member). */
  rdmaDevice?: string;
  rdmaState?: string;
}

export interface FabricFacts {
  host: string;
  ports: FabricPort[];
  /** Every netdev (bonds, management, loopback). */
  netdevs: Netdev[];
  rdma: RdmaPort[];
  mgmt: InventoryFacts['mgmt'];
  neighbours: Neighbour[];
}

export function collectFabric(outputs: ProbeOutputs): FabricFacts {
  const inv = collectInventory(outputs);
  return fabricFromInventory(inv);
}

export function fabricFromInventory(inv: InventoryFacts): FabricFacts {
  const nicBdfs = new Set(inv.nics.filter((n) => !/Virtual Function/i.test(n.description)).map((n) => n.bdf));
  const ports = inv.netdevs
    .filter((n) => n.bdf !== null && nicBdfs.has(n.bdf))
    .map((n): FabricPort => {
      const rd =
        inv.rdma.find((r) => r.netdev === n.name) ??
        (n.master ? inv.rdma.find((r) => r.netdev === n.master) : undefined);
      return {
        netdev: n.name,
        bdf: n.bdf!,
        card: n.bdf!.replace(/\.\d+$/, ''),
        adminUp: n.adminUp,
        addresses: n.addresses.filter((a) => !a.includes(':')),
        ...(n.mac ? { mac: n.mac.toLowerCase() } : {}),
        ...(n.permMac ? { permMac: n.permMac.toLowerCase() } : {}),
        ...(n.mtu !== undefined ? { mtu: n.mtu } : {}),
        ...(n.operstate ? { operstate: n.operstate } : {}),
        ...(n.master ? { master: n.master } : {}),
        ...(rd ? { rdmaDevice: rd.device, rdmaState: rd.state } : {}),
      };
    })
    .sort((a, b) => a.bdf.localeCompare(b.bdf));
  return { host: inv.host, ports, netdevs: inv.netdevs, rdma: inv.rdma, mgmt: inv.mgmt, neighbours: inv.neighbours };
}

export interface CableEnd {
  host: string;
  netdev: string;
}

/** A cable between two hosts; `index` is 1-based in node 1's port (PCI) order: cable k gets subnet k. */
export interface Cable {
  index: number;
  ends: [CableEnd, CableEnd];
}

export interface CablingMap {
  cables: Cable[];
  /** Ports whose peer is not known yet (down, or no neighbour seen). */
  unknown: CableEnd[];
  /** Ports that see a MAC of their own host (a loop). */
  loops: Array<[CableEnd, CableEnd]>;
}

/**
 * Cables from neighbour MACs (IPv6 all-nodes and LLDP chassis MACs) matched to the PF MACs of every
 * host. Bond slaves share the bond's MAC, so on bonded ports LLDP's port id resolves the peer port.
 */
export function cablingMap(all: ReadonlyArray<HostFacts<FabricFacts>>): CablingMap {
  const macOwner = new Map<string, CableEnd[]>();
  const own = (mac: string, end: CableEnd) => {
    const list = macOwner.get(mac) ?? [];
    if (!list.some((e) => e.host === end.host && e.netdev === end.netdev)) macOwner.set(mac, [...list, end]);
  };
  for (const a of all) {
    for (const p of a.facts.ports) {
      if (p.mac) own(p.mac, { host: a.host, netdev: p.netdev });
      if (p.permMac) own(p.permMac, { host: a.host, netdev: p.netdev });
    }
  }
  /** LLDP names the peer port exactly: by its permanent MAC (lldpd's default) or its interface name. */
  const lldpPeer = (nb: Neighbour, self: string): CableEnd[] => {
    const id = nb.peerPort?.toLowerCase();
    if (!id) return [];
    const byMac = (macOwner.get(id) ?? []).filter((e) => e.host !== self);
    if (byMac.length > 0) return byMac;
    const names = [nb.peerPort, nb.peerPortDescr].filter((x): x is string => !!x);
    const hosts = all.filter(
      (h) => h.host !== self && (!nb.peerSystem || h.host === nb.peerSystem || h.facts.host === nb.peerSystem),
    );
    return hosts.flatMap((h) =>
      h.facts.ports.filter((p) => names.includes(p.netdev)).map((p) => ({ host: h.host, netdev: p.netdev })),
    );
  };
  const pairs = new Map<string, [CableEnd, CableEnd]>();
  const unknown: CableEnd[] = [];
  const loops: Array<[CableEnd, CableEnd]> = [];
  for (const a of all) {
    for (const port of a.facts.ports) {
      const nb = a.facts.neighbours.find((n) => n.port === port.netdev);
      const local = { host: a.host, netdev: port.netdev };
      if (!nb || nb.state === 'down') {
        unknown.push(local);
        continue;
      }
      const viaLldp = lldpPeer(nb, a.host);
      let peers = viaLldp.length > 0 ? viaLldp : nb.peerMacs.flatMap((m) => macOwner.get(m.toLowerCase()) ?? []);
      // A shared (bond) MAC names several ports and LLDP did not settle it: the cable is not known.
      const remote = peers.filter((p) => p.host !== a.host);
      const self = peers.filter((p) => p.host === a.host && p.netdev !== port.netdev);
      if (self.length > 0 && remote.length === 0) loops.push([local, self[0]!]);
      if (remote.length !== 1) {
        if (self.length === 0) unknown.push(local);
        continue;
      }
      peers = remote;
      const ends = [local, peers[0]!].sort(
        (x, y) => all.findIndex((h) => h.host === x.host) - all.findIndex((h) => h.host === y.host),
      ) as [CableEnd, CableEnd];
      pairs.set(ends.map((e) => `${e.host}:${e.netdev}`).join('|'), ends);
    }
  }
  const order = (e: CableEnd) => {
    const hi = all.findIndex((h) => h.host === e.host);
    const pi = all[hi]?.facts.ports.findIndex((p) => p.netdev === e.netdev) ?? 0;
    return hi * 1000 + pi;
  };
  const cables = [...pairs.values()]
    .sort((x, y) => order(x[0]) - order(y[0]))
    .map((ends, i) => ({ index: i + 1, ends }));
  const cabled = new Set(cables.flatMap((c) => c.ends.map((e) => `${e.host}:${e.netdev}`)));
  return { cables, unknown: unknown.filter((u) => !cabled.has(`${u.host}:${u.netdev}`)), loops };
}

/** `a ↔ b` for evidence. */
export function cableText(c: Cable): string {
  return `cable ${c.index}: ${c.ends[0].host}:${c.ends[0].netdev} ↔ ${c.ends[1].host}:${c.ends[1].netdev}`;
}

export function portOf(f: FabricFacts, netdev: string): FabricPort | undefined {
  return f.ports.find((p) => p.netdev === netdev);
}
