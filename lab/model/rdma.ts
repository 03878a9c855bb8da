/**
 * What the kernel derives for an RDMA port from the netdev it sits on (docs/STAGES.md §4.1 RDMA row), in one
 * place so every view agrees: `ibv_devinfo` (tools/ofed.ts), `ibstat`, sysfs, `show_gids` and
 * `ib_write_bw` all call these functions.
 *
 * - state: ACTIVE/LINK_UP while the port's netdev has carrier, else DOWN/DISABLED.
 * - active_mtu: the largest IB MTU ≤ netdev MTU − 96 (RoCE headers), so 1500 → 1024, 9000 → 4096.
 * - GID table (ib_core's roce_gid_mgmt): index 0/1 are the default link-local GIDs (fe80::EUI-64 of the
 *   port netdev's MAC) as RoCE v1/v2; then each address of the netdev — of its bond when the port is a
 *   bond slave ("the GIDs follow the bond") — gets a v1 and a v2 entry in the first free slots, in the
 *   order the addresses appeared. An entry keeps its index while its address lives; a removed address
 *   frees its slots for the next one. An address equal to a default GID on the same netdev (the port's
 *   own EUI-64 link-local) adds nothing; a bond's link-local is on another netdev and does.
 *
 * The table is reconciled with the addresses whenever it is read. Code that removes and adds addresses
 * in one change (netplan apply, a scenario) calls syncGids() between the steps when slot reuse must
 * follow that order.
 */
import type { GidEntry, IpAddress, Machine, NetDev, RdmaDevice, RdmaRuntime } from './types.js';

/** ConnectX-4 Lx RoCE ports have 256 GID entries (`gid_tbl_len`). */
export const GID_TABLE_LEN = 256;
export const ZERO_GID = '0000:0000:0000:0000:0000:0000:0000:0000';

/** IB MTU enum values 1…5 (ibv_mtu) and their sizes. */
const IB_MTUS: ReadonlyArray<{ bytes: number; code: number }> = [
  { bytes: 256, code: 1 },
  { bytes: 512, code: 2 },
  { bytes: 1024, code: 3 },
  { bytes: 2048, code: 4 },
  { bytes: 4096, code: 5 },
];

/** RoCE v2 headers the port MTU must leave room for (Ethernet, IP, UDP, BTH, RETH, ICRC …). */
export const ROCE_MTU_OVERHEAD = 96;

export interface IbMtu {
  bytes: number;
  code: number;
}

/** The largest IB MTU that fits a netdev MTU (never below 256). */
export function ibMtuForNetdevMtu(netdevMtu: number): IbMtu {
  let best = IB_MTUS[0]!;
  for (const m of IB_MTUS) if (m.bytes <= netdevMtu - ROCE_MTU_OVERHEAD) best = m;
  return best;
}

/** ConnectX-4 Lx ports support 4096. */
export const MAX_IB_MTU: IbMtu = { bytes: 4096, code: 5 };

export function rdmaNetdev(m: Machine, r: RdmaDevice): NetDev | undefined {
  return m.netdevs.find((d) => d.name === r.netdev);
}

/** `active_mtu` of the device's port (from its netdev's MTU). */
export function activeMtu(m: Machine, r: RdmaDevice): IbMtu {
  return ibMtuForNetdevMtu(rdmaNetdev(m, r)?.mtu ?? 1500);
}

export interface RdmaPortState {
  /** `ACTIVE` / `DOWN` (rdma link, ibv_devinfo `PORT_ACTIVE (4)`). */
  state: 'ACTIVE' | 'DOWN';
  stateCode: 4 | 1;
  /** `LINK_UP` / `DISABLED` (rdma link; sysfs `5: LinkUp` / `3: Disabled`). */
  phys: 'LINK_UP' | 'DISABLED';
  physCode: 5 | 3;
}

export function rdmaPortState(m: Machine, r: RdmaDevice): RdmaPortState {
  return m.carrier(r.netdev)
    ? { state: 'ACTIVE', stateCode: 4, phys: 'LINK_UP', physCode: 5 }
    : { state: 'DOWN', stateCode: 1, phys: 'DISABLED', physCode: 3 };
}

export function rdmaRuntime(m: Machine): RdmaRuntime {
  m.rdmaRuntime ??= { gids: {}, hwCounters: {}, ethtool: {} };
  return m.rdmaRuntime;
}

/** The full 8-group form sysfs prints (`%pI6`): every group 4 hex digits. */
export function expandIpv6(addr: string): string {
  let a = addr.toLowerCase().split('%')[0] ?? '';
  // An embedded IPv4 tail (`::ffff:1.2.3.4`) becomes two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const b = v4.slice(1, 5).map(Number);
    a = `${a.slice(0, v4.index)}${(((b[0] ?? 0) << 8) | (b[1] ?? 0)).toString(16)}:${(((b[2] ?? 0) << 8) | (b[3] ?? 0)).toString(16)}`;
  }
  const [head, tail] = a.includes('::') ? a.split('::') : [a, undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => g.padStart(4, '0')).join(':');
}

/** `::ffff:a.b.c.d` in the full form. */
export function ipv4Gid(ipv4: string): string {
  return expandIpv6(`::ffff:${ipv4}`);
}

/** The IPv4 address an IPv4-mapped GID carries, if it is one. */
export function gidToIpv4(gid: string): string | undefined {
  const g = gid.toLowerCase();
  if (!g.startsWith('0000:0000:0000:0000:0000:ffff:')) return undefined;
  const [hi, lo] = g
    .split(':')
    .slice(6)
    .map((x) => parseInt(x, 16));
  if (hi === undefined || lo === undefined) return undefined;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/** The default GID of a netdev: fe80::/64 with the modified EUI-64 of its current MAC. */
export function defaultGid(mac: string): string {
  const b = mac.split(':').map((x) => parseInt(x, 16));
  const w = (hi: number, lo: number): string => ((hi << 8) | lo).toString(16).padStart(4, '0');
  return `fe80:0000:0000:0000:${w((b[0] ?? 0) ^ 0x02, b[1] ?? 0)}:${w(b[2] ?? 0, 0xff)}:${w(0xfe, b[3] ?? 0)}:${w(b[4] ?? 0, b[5] ?? 0)}`;
}

function addressGid(a: IpAddress): string | undefined {
  if (a.scope === 'host') return undefined;
  return a.family === 'inet' ? ipv4Gid(a.local) : expandIpv6(a.local);
}

const key = (e: GidEntry): string => `${e.gid}|${e.type}|${e.ndev}`;

/** The entries the port should hold now: the two defaults, then every address's v1/v2 pair in order. */
function wantedGids(m: Machine, r: RdmaDevice): { defaults: GidEntry[]; addresses: GidEntry[] } {
  const nd = rdmaNetdev(m, r);
  if (!nd) return { defaults: [], addresses: [] };
  const dflt = defaultGid(nd.mac);
  const defaults: GidEntry[] = [
    { gid: dflt, type: 'IB/RoCE v1', ndev: nd.name },
    { gid: dflt, type: 'RoCE v2', ndev: nd.name },
  ];
  // A slave's RDMA port carries the GIDs of the bond above it (no RoCE LAG: every slave does).
  const upper = nd.master ? m.netdevs.find((d) => d.name === nd.master) : undefined;
  const source = upper ?? nd;
  const addresses: GidEntry[] = [];
  for (const a of source.addresses) {
    const gid = addressGid(a);
    if (gid === undefined || gid === ZERO_GID) continue;
    if (gid === dflt && source === nd) continue;
    addresses.push({ gid, type: 'IB/RoCE v1', ndev: source.name }, { gid, type: 'RoCE v2', ndev: source.name });
  }
  return { defaults, addresses };
}

/** Brings one device's table in step with its addresses; returns it (index → entry or null). */
export function gidTable(m: Machine, r: RdmaDevice): ReadonlyArray<GidEntry | null> {
  const rt = rdmaRuntime(m);
  const table = (rt.gids[r.name] ??= Array<GidEntry | null>(GID_TABLE_LEN).fill(null));
  const { defaults, addresses } = wantedGids(m, r);
  const want = new Set(addresses.map(key));
  for (let i = 2; i < table.length; i++) {
    const e = table[i];
    if (e && !want.has(key(e))) table[i] = null;
  }
  table[0] = defaults[0] ?? null;
  table[1] = defaults[1] ?? null;
  const have = new Set(table.filter((e): e is GidEntry => e !== null).map(key));
  for (const e of addresses) {
    if (have.has(key(e))) continue;
    const free = table.findIndex((x, i) => i >= 2 && x === null);
    if (free < 0) break;
    table[free] = e;
    have.add(key(e));
  }
  return table;
}

/** Reconciles every device's GID table now (call between address removals and additions). */
export function syncGids(m: Machine): void {
  for (const r of m.rdma) gidTable(m, r);
}

/** Forgets the GID tables (reboot, driver reload): they are rebuilt from the addresses in order. */
export function resetRdmaRuntime(m: Machine): void {
  m.rdmaRuntime = { gids: {}, hwCounters: {}, ethtool: {} };
  m.revision++;
}

/** Index of the RoCE v2 GID carrying `ipv4` on the device, if any. */
export function ipv4V2GidIndex(m: Machine, r: RdmaDevice, ipv4: string): number | undefined {
  const want = ipv4Gid(ipv4);
  const i = gidTable(m, r).findIndex((e) => e?.gid === want && e.type === 'RoCE v2');
  return i >= 0 ? i : undefined;
}

/** Adds `n` to a hw counter of an RDMA device (`/sys/class/infiniband/<dev>/ports/1/hw_counters/<name>`). */
export function addHwCounter(m: Machine, device: string, name: string, n: number): void {
  const rt = rdmaRuntime(m);
  const c = (rt.hwCounters[device] ??= {});
  c[name] = (c[name] ?? 0) + Math.round(n);
}

/** Adds `n` to an `ethtool -S` counter of a netdev. */
export function addEthtoolCounter(m: Machine, netdev: string, name: string, n: number): void {
  const rt = rdmaRuntime(m);
  const c = (rt.ethtool[netdev] ??= {});
  c[name] = (c[name] ?? 0) + Math.round(n);
}

export function hwCounter(m: Machine, device: string, name: string): number {
  return m.rdmaRuntime?.hwCounters[device]?.[name] ?? 0;
}

export function ethtoolCounter(m: Machine, netdev: string, name: string): number {
  return m.rdmaRuntime?.ethtool[netdev]?.[name] ?? 0;
}
