/**
 * The Linux bonding driver as the network stage meets it (docs/STAGES.md §2, §4.1 "bonds", §4.3):
 *
 * - bonds are virtual netdevs with a systemd-networkd generated MAC (locally administered, stable
 *   per host and name); members carry the bond's MAC and keep their own as `perm_hwaddr`;
 * - `lacp_rate` is a kernel option of 802.3ad only (netplan/networkd drop it elsewhere, R18);
 * - a bond's carrier is up while a member has carrier; LACP partners are the ports at the other
 *   end of each cable when they are members of an 802.3ad bond there;
 * - RoCE LAG (mlx5 lag.c): exactly the two PFs of one card as the only members, mode
 *   active-backup, balance-xor or 802.3ad → the per-port RDMA devices vanish and one
 *   `mlx5_bond_N` appears; any other membership (the tutorial's 4-port cross-NIC bond) forms none.
 *
 * The views (/proc/net/bonding, ip -d link) are rendered in bonding-render.ts.
 */
import type { Cluster } from '../model/cluster.js';
import type { BondInfo, Machine, NetDev, RdmaDevice } from '../model/types.js';
import { macToString, rng } from '../util/prng.js';
import { dropLinkLocal, flapping, flushAddresses, linkFlap, netdev, nextIfindex, setLinkUp } from './netdev-ops.js';

interface ModeInfo {
  num: number;
  proc: string;
  usesHash: boolean;
  usesPrimary: boolean;
  /** mlx5 forms a RoCE LAG for this transmit type (active-backup or hash). */
  lag: boolean;
}

export const BOND_MODES: Readonly<Record<string, ModeInfo>> = {
  'balance-rr': { num: 0, proc: 'load balancing (round-robin)', usesHash: false, usesPrimary: false, lag: false },
  'active-backup': { num: 1, proc: 'fault-tolerance (active-backup)', usesHash: false, usesPrimary: true, lag: true },
  'balance-xor': { num: 2, proc: 'load balancing (xor)', usesHash: true, usesPrimary: false, lag: true },
  broadcast: { num: 3, proc: 'fault-tolerance (broadcast)', usesHash: false, usesPrimary: false, lag: false },
  '802.3ad': { num: 4, proc: 'IEEE 802.3ad Dynamic link aggregation', usesHash: true, usesPrimary: false, lag: true },
  'balance-tlb': { num: 5, proc: 'transmit load balancing', usesHash: false, usesPrimary: true, lag: false },
  'balance-alb': { num: 6, proc: 'adaptive load balancing', usesHash: false, usesPrimary: true, lag: false },
};

export const XMIT_HASH: Readonly<Record<string, number>> = {
  layer2: 0,
  'layer3+4': 1,
  'layer2+3': 2,
  'encap2+3': 3,
  'encap3+4': 4,
  'vlan+srcmac': 5,
};

/** Mode name from a netplan/ip value (name or kernel number). */
export function bondModeName(v: string | number): string | undefined {
  const s = String(v);
  if (BOND_MODES[s]) return s;
  return Object.entries(BOND_MODES).find(([, i]) => String(i.num) === s)?.[0];
}

const clusters = new WeakMap<Machine, Cluster>();

/** Lets the bonding views of every machine reach the cables (LACP partners). */
export function registerCluster(cluster: Cluster): void {
  for (const m of cluster.machines) clusters.set(m, cluster);
}

/** The cluster a machine belongs to, once a tool or scenario has registered it. */
export function clusterOf(m: Machine): Cluster | undefined {
  return clusters.get(m);
}

export function isBond(d: NetDev | undefined): d is NetDev & { bond: BondInfo } {
  return d?.bond !== undefined;
}

/**
 * carrier() for what cables cannot decide: a bond (up with a member that has carrier) and an
 * mlx5 port inside a flap window. Undefined → the cable decides.
 */
export function carrierOverride(m: Machine, ifname: string): boolean | undefined {
  const d = netdev(m, ifname);
  if (!d) return undefined;
  if (isBond(d)) return d.adminUp && d.bond.slaves.some((s) => m.carrier(s));
  if (flapping(m, ifname)) return false;
  return undefined;
}

export interface BondParams {
  mode: string;
  miimon?: number;
  updelay?: number;
  downdelay?: number;
  xmitHashPolicy?: string;
  lacpRate?: 'slow' | 'fast';
}

/** A new bond as networkd creates it from a .netdev (admin down, no members, generated MAC). */
export function createBond(m: Machine, name: string, p: BondParams): NetDev & { bond: BondInfo } {
  const b = rng(m.seed, m.hostname, `netdev-mac:${name}`).bytes(6);
  b[0] = ((b[0] ?? 0) & 0xfe) | 0x02;
  const dev: NetDev & { bond: BondInfo } = {
    ifindex: nextIfindex(m),
    name,
    altnames: [],
    linkType: 'ether',
    driver: 'bonding',
    mac: macToString(b),
    mtu: 1500,
    minMtu: 68,
    maxMtu: 65535,
    txqlen: 1000,
    numTxQueues: 16,
    numRxQueues: 16,
    gsoMaxSize: 65536,
    gsoMaxSegs: 65535,
    adminUp: false,
    qdisc: 'noop',
    addrGenMode: 'eui64',
    addresses: [],
    bond: {
      mode: p.mode,
      miimon: p.miimon ?? 0,
      updelay: p.updelay ?? 0,
      downdelay: p.downdelay ?? 0,
      xmitHashPolicy: p.xmitHashPolicy ?? 'layer2',
      lacpRate: p.mode === '802.3ad' ? (p.lacpRate ?? 'slow') : 'slow',
      slaves: [],
    },
  };
  m.netdevs.push(dev);
  m.revision++;
  return dev;
}

/** Changes options the kernel lets change on a live bond (the mode only without members). */
export function updateBondParams(m: Machine, bond: NetDev & { bond: BondInfo }, p: BondParams): void {
  const info = bond.bond;
  if (info.slaves.length === 0) info.mode = p.mode;
  info.miimon = p.miimon ?? info.miimon;
  info.updelay = p.updelay ?? info.updelay;
  info.downdelay = p.downdelay ?? info.downdelay;
  info.xmitHashPolicy = p.xmitHashPolicy ?? info.xmitHashPolicy;
  if (info.mode === '802.3ad' && p.lacpRate) info.lacpRate = p.lacpRate;
  updateLag(m, bond);
  m.revision++;
}

/** bond_enslave: the member takes the bond's MAC and MTU, loses its addresses, flaps. */
export function enslave(m: Machine, bond: NetDev & { bond: BondInfo }, slave: NetDev): void {
  if (slave.master === bond.name) return;
  if (slave.master) release(m, slave.master, slave);
  flushAddresses(m, slave);
  dropLinkLocal(m, slave);
  slave.master = bond.name;
  slave.permMac = slave.mac;
  slave.mac = bond.mac;
  slave.mtu = bond.mtu;
  bond.bond.slaves.push(slave.name);
  setLinkUp(m, slave);
  linkFlap(m, slave.name);
  updateLag(m, bond);
  m.revision++;
}

/** bond_release: the member gets its own MAC back. */
export function release(m: Machine, bondName: string, slave: NetDev): void {
  const bond = netdev(m, bondName);
  if (isBond(bond)) bond.bond.slaves = bond.bond.slaves.filter((s) => s !== slave.name);
  slave.master = undefined;
  if (slave.permMac) slave.mac = slave.permMac;
  slave.permMac = undefined;
  if (slave.adminUp) linkFlap(m, slave.name);
  if (isBond(bond)) updateLag(m, bond);
  m.revision++;
}

/** `ip link delete dev <bond>`: members released, the device and its addresses gone. */
export function deleteBond(m: Machine, bond: NetDev & { bond: BondInfo }): void {
  for (const s of [...bond.bond.slaves]) {
    const d = netdev(m, s);
    if (d) release(m, bond.name, d);
  }
  flushAddresses(m, bond);
  m.neighbors = m.neighbors.filter((n) => n.dev !== bond.name);
  m.routes = m.routes.filter((r) => r.dev !== bond.name);
  m.netdevs = m.netdevs.filter((d) => d !== bond);
  m.revision++;
}

/** Sets the MTU of a bond and its members (dev_set_mtu propagates to slaves). */
export function setBondMtu(m: Machine, bond: NetDev & { bond: BondInfo }, mtu: number): void {
  if (bond.mtu === mtu) return;
  bond.mtu = mtu;
  for (const s of bond.bond.slaves) {
    const d = netdev(m, s);
    if (d && d.mtu !== mtu) {
      d.mtu = mtu;
      if (d.adminUp) linkFlap(m, d.name);
    }
  }
  m.revision++;
}

const card = (bdf: string | undefined): string | undefined => bdf?.replace(/\.\d+$/, '');

/** Forms or dissolves the RoCE LAG of a bond by mlx5's rules (see the header). */
export function updateLag(m: Machine, bond: NetDev & { bond: BondInfo }): void {
  const info = bond.bond;
  const members = info.slaves.map((s) => netdev(m, s));
  const pcis = members.map((d) => d?.pci);
  const wants =
    BOND_MODES[info.mode]?.lag === true &&
    members.length === 2 &&
    members.every((d) => d?.driver === 'mlx5_core') &&
    card(pcis[0]) !== undefined &&
    card(pcis[0]) === card(pcis[1]) &&
    pcis[0] !== pcis[1];
  if (wants && !info.lag) {
    const replaced = m.rdma.filter((r) => pcis.includes(r.pci));
    if (replaced.length === 0) return;
    const used = new Set(m.rdma.map((r) => r.name));
    let n = 0;
    while (used.has(`mlx5_bond_${n}`)) n++;
    const first = [...replaced].sort((a, b) => a.pci.localeCompare(b.pci))[0] as RdmaDevice;
    const lagDev: RdmaDevice = { ...first, name: `mlx5_bond_${n}`, netdev: bond.name };
    const at = m.rdma.indexOf(replaced[0] as RdmaDevice);
    m.rdma = m.rdma.filter((r) => !replaced.includes(r));
    m.rdma.splice(Math.min(at, m.rdma.length), 0, lagDev);
    info.lag = { device: lagDev.name, replaced };
    m.revision++;
  } else if (!wants && info.lag) {
    const lag = info.lag;
    const at = m.rdma.findIndex((r) => r.name === lag.device);
    m.rdma = m.rdma.filter((r) => r.name !== lag.device);
    m.rdma.splice(at < 0 ? m.rdma.length : at, 0, ...lag.replaced);
    info.lag = undefined;
    m.revision++;
  }
}
