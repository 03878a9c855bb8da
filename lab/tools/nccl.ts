/**
 * A model of NCCL 2.27 (the library torch 2.8 bundles, model/python.ts) as both benchmarks use it
 * (docs/STAGES.md §4.3 "NCCL"): how a process finds its settings, which RDMA devices and socket interface
 * it picks, whether its queue pairs connect, and what bandwidth the all-reduce reaches. The log
 * lines themselves are rendered by nccl-log.ts.
 *
 * - Settings: the environment, then `$NCCL_CONF_FILE` or `~/.nccl.conf`, then `/etc/nccl.conf`, each
 *   applied with setenv(…, 0) (the environment wins), lines parsed as NCCL does: `#` in column 0 and
 *   lines without `=` skipped, name = text before the first `=`, value = the rest verbatim.
 * - NCCL_ALGO / NCCL_PROTO go through NCCL's list grammar (2.24+): an unknown token fails every
 *   communicator with `invalid usage`.
 * - NET/IB: the ACTIVE ports of the host's RDMA devices, filtered by NCCL_IB_HCA (`^` excludes, `=`
 *   exact, else prefix; `:port` must exist, always 1); none → `No device found.` and the socket
 *   transport. GID: NCCL_IB_GID_INDEX if pinned, else the first RoCE v2 GID carrying an IPv4 address.
 * - Connections pair NET device k of one node with device k of the next (NCCL_CROSS_NIC=0 and the
 *   straight cabling the lab models). A queue pair connects when both GIDs are IPv4 RoCE v2 in a
 *   subnet of the local port and a cable joins the two ports; no route → ibv_modify_qp 101 (Network
 *   is unreachable), a route without that cable → 110 (timed out), a RoCE v1 GID against v2 →
 *   completion error 12; active MTUs that differ on a rail → completion error 1 (local length).
 * - GPUDirect RDMA only for a GPU at ≤ PXB (NCCL_NET_GDR_LEVEL, default PXB) from its NIC, with a
 *   DMA-BUF (open module, kernel ≥ 5.12) or nvidia-peermem path.
 * - Bandwidth (lab constants, not predictions): inter-node busbw = usable rails × 2.9 GB/s × 0.72,
 *   −10 % without GDR, × 0.6 when PFC differs between the ends of a rail; socket transport ≈ 1.5 GB/s;
 *   intra-node ≈ 19 GB/s, ≈ 9 with ACS redirecting peer-to-peer traffic.
 */
import type { Cluster } from '../model/cluster.js';
import { PINS } from '../product-checks.js';
import { pfcEnabled } from '../model/qos.js';
import { activeMtu, gidTable, gidToIpv4 } from '../model/rdma.js';
import type { GidEntry, Machine, NetDev, PciFunction, RdmaDevice } from '../model/types.js';
import { cudaRuntime, gdrPath, type CudaRuntime } from './cuda-runtime.js';
import { matchIfList, parseAlgoList, parseIfList, type NcclSettings } from './nccl-settings.js';

export const NCCL_VERSION = PINS.nccl;
export const NCCL_BUILD = `${PINS.nccl}+cuda${PINS.ncclCuda}`;
/** ncclResult_t values NCCL prints in its `-> N` trail. */
export const NCCL_RESULT = { systemError: 2, internalError: 3, invalidUsage: 5, remoteError: 6 } as const;

// ---------------------------------------------------------------- a host's view

export interface IbDevice {
  /** Index in NCCL's NET/IB list. */
  index: number;
  rdma: RdmaDevice;
  /** The port's netdev (a bond slave's: the port itself). */
  netdev: string;
  mtuBytes: number;
  gidIndex: number;
  gid: GidEntry | null;
  /** The address the GID carries (IPv4 for a mapped GID, else the IPv6). */
  gidAddress?: string;
}

export interface SocketIf {
  name: string;
  address: string;
}

export interface HostPlan {
  host: string;
  machine: Machine;
  settings: NcclSettings;
  debug: 'NONE' | 'VERSION' | 'WARN' | 'INFO' | 'TRACE';
  subsys: Set<string>;
  /** The WARN NCCL_ALGO / NCCL_PROTO parsing prints. */
  algoError?: string;
  /** Bootstrap and OOB interface; undefined: none matched. */
  socket?: SocketIf;
  ibDisabled: boolean;
  /** NCCL_IB_HCA as set (for its `set to` line). */
  hca?: string;
  devices: IbDevice[];
  gidPinned?: number;
  /** Traffic class NCCL_IB_TC (default 0). */
  tc: number;
  cuda: CudaRuntime;
  gdr?: 'dmabuf' | 'peermem';
  /** NCCL_NET_GDR_LEVEL as a distance rank (LOC 0 … SYS 5; PXB 2 by default; integers are legacy). */
  gdrLevel: number;
  /** Peer-to-peer through PCIe bridges with ACS redirection (intra-node bandwidth halves). */
  acsRedirect: boolean;
}

const LEVELS = ['LOC', 'PIX', 'PXB', 'PHB', 'NODE', 'SYS'];

function gdrLevelOf(v: string | undefined): number {
  if (v === undefined || v === '') return 2;
  const named = LEVELS.indexOf(v.toUpperCase());
  if (named >= 0) return named;
  const n = Number(v);
  // Legacy integers: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS.
  return Number.isFinite(n) ? (n >= 4 ? 5 : Math.max(0, n)) : 2;
}

function netdevOf(m: Machine, name: string): NetDev | undefined {
  return m.netdevs.find((d) => d.name === name);
}

/** Link up: a port with carrier, or a bond with a slave that has one. */
export function linkUp(m: Machine, name: string): boolean {
  const d = netdevOf(m, name);
  if (d?.bond) return d.adminUp && d.bond.slaves.some((s) => m.carrier(s));
  return m.carrier(name);
}

function ipv4Addrs(d: NetDev): Array<{ local: string; prefixlen: number }> {
  return d.addresses.filter((a) => a.family === 'inet').map((a) => ({ local: a.local, prefixlen: a.prefixlen }));
}

function ipNum(ip: string): number {
  return ip.split('.').reduce((n, o) => (n * 256 + Number(o)) >>> 0, 0);
}

export function sameSubnet(a: string, b: string, prefixlen: number): boolean {
  const mask = prefixlen === 0 ? 0 : (0xffffffff << (32 - prefixlen)) >>> 0;
  return (ipNum(a) & mask) >>> 0 === (ipNum(b) & mask) >>> 0;
}

/** NCCL_SOCKET_IFNAME (default: anything but lo and docker*): the first UP interface with IPv4, in ifindex order. */
function pickSocket(m: Machine, value: string | undefined): SocketIf | undefined {
  const list = value ? parseIfList(value) : undefined;
  for (const d of [...m.netdevs].sort((a, b) => a.ifindex - b.ifindex)) {
    if (!d.adminUp) continue;
    if (list ? !matchIfList(list, d.name) : d.name === 'lo' || d.name.startsWith('docker')) continue;
    const a = ipv4Addrs(d)[0];
    if (a) return { name: d.name, address: a.local };
  }
  return undefined;
}

/** The GID NCCL uses when nothing is pinned: the first RoCE v2 entry with an IPv4 address, else the v2 default. */
function autoGid(table: ReadonlyArray<GidEntry | null>): number {
  const i = table.findIndex((e) => e?.type === 'RoCE v2' && gidToIpv4(e.gid) !== undefined);
  return i >= 0 ? i : 1;
}

function pciAncestors(m: Machine, bdf: string): PciFunction[] {
  const out: PciFunction[] = [];
  let p = m.pci.find((f) => f.bdf === bdf);
  while (p?.parent) {
    const parent = m.pci.find((f) => f.bdf === p!.parent);
    if (!parent) break;
    out.push(parent);
    p = parent;
  }
  return out;
}

/** NCCL's path type between a GPU and a NIC: 1 PIX, 2 PXB, 3 PHB, 4 NODE, 5 SYS. */
export function pciDistance(m: Machine, gpu: string, nic: string): number {
  const a = pciAncestors(m, gpu);
  const b = pciAncestors(m, nic);
  const common = a.find((x) => b.some((y) => y.bdf === x.bdf));
  if (common) {
    if (a[0]?.bdf === common.bdf && b[0]?.bdf === common.bdf) return 1;
    return common.kind === 'root-port' ? 3 : 2;
  }
  const g = m.pci.find((f) => f.bdf === gpu);
  const n = m.pci.find((f) => f.bdf === nic);
  if (g && n && g.rootBus === n.rootBus) return 3;
  return g && n && g.numaNode === n.numaNode ? 4 : 5;
}

/** ACS source validation or request redirection on a bridge above a GPU: P2P goes through the root complex. */
function acsRedirect(m: Machine): boolean {
  return m.gpus.some((g) => pciAncestors(m, g.pci).some((b) => b.acs?.ctl.srcValid || b.acs?.ctl.reqRedir));
}

/** A host's NCCL view from its settings and its live state (every rank on the host shares it). */
export function hostPlan(m: Machine, settings: NcclSettings): HostPlan {
  const env = settings.env;
  const debugRaw = (env.NCCL_DEBUG ?? '').toUpperCase();
  const debug = (['VERSION', 'WARN', 'INFO', 'TRACE'] as const).find((d) => d === debugRaw) ?? 'NONE';
  const subsys = new Set(
    (env.NCCL_DEBUG_SUBSYS ?? 'INIT,BOOTSTRAP,ENV')
      .toUpperCase()
      .split(',')
      .map((s) => s.trim()),
  );
  const algoError =
    (env.NCCL_ALGO ? parseAlgoList(env.NCCL_ALGO, false) : undefined) ??
    (env.NCCL_PROTO ? parseAlgoList(env.NCCL_PROTO, true) : undefined);
  const socket = pickSocket(m, env.NCCL_SOCKET_IFNAME);
  const ibDisabled = env.NCCL_IB_DISABLE === '1' || env.NCCL_NET === 'Socket';
  const hcaList = env.NCCL_IB_HCA ? parseIfList(env.NCCL_IB_HCA) : undefined;
  const pinnedRaw = env.NCCL_IB_GID_INDEX;
  const gidPinned = pinnedRaw !== undefined && /^\d+$/.test(pinnedRaw) ? Number(pinnedRaw) : undefined;
  const devices: IbDevice[] = [];
  if (!ibDisabled) {
    for (const r of m.rdma) {
      if (!linkUp(m, r.netdev)) continue;
      if (hcaList && !matchIfList(hcaList, r.name, r.port)) continue;
      const table = gidTable(m, r);
      const gidIndex = gidPinned ?? autoGid(table);
      const gid = table[gidIndex] ?? null;
      const v4 = gid ? gidToIpv4(gid.gid) : undefined;
      devices.push({
        index: devices.length,
        rdma: r,
        netdev: r.netdev,
        mtuBytes: activeMtu(m, r).bytes,
        gidIndex,
        gid,
        ...(gid ? { gidAddress: v4 ?? gid.gid } : {}),
      });
    }
  }
  const gdr = gdrPath(m);
  return {
    host: m.hostname,
    machine: m,
    settings,
    debug,
    subsys,
    ...(algoError ? { algoError } : {}),
    ...(socket ? { socket } : {}),
    ibDisabled,
    ...(env.NCCL_IB_HCA !== undefined ? { hca: env.NCCL_IB_HCA } : {}),
    devices,
    ...(gidPinned !== undefined ? { gidPinned } : {}),
    tc: Number(env.NCCL_IB_TC ?? 0) || 0,
    cuda: cudaRuntime(m),
    ...(gdr ? { gdr } : {}),
    gdrLevel: gdrLevelOf(env.NCCL_NET_GDR_LEVEL),
    acsRedirect: acsRedirect(m),
  };
}

/** The NET device a local GPU's channels use (the closest, ties spread over the devices), and whether GDR applies. */
export function gpuNet(plan: HostPlan, localRank: number): { device: IbDevice; gdr: boolean } | undefined {
  const m = plan.machine;
  const gpu = m.gpus[localRank];
  if (!gpu || plan.devices.length === 0) return undefined;
  const scored = plan.devices.map((d) => ({ d, dist: pciDistance(m, gpu.pci, d.rdma.pci) }));
  const best = Math.min(...scored.map((s) => s.dist));
  const closest = scored.filter((s) => s.dist === best);
  const pick = closest[localRank % closest.length]!;
  return { device: pick.d, gdr: plan.gdr !== undefined && pick.dist <= plan.gdrLevel };
}

// ---------------------------------------------------------------- the job

export type JobFailure =
  | { kind: 'invalid-usage'; host: string; warn: string }
  | { kind: 'no-socket'; host: string }
  | { kind: 'bootstrap'; host: string; peer: string }
  | { kind: 'cuda'; host: string; error: string }
  | {
      kind: 'modify-qp';
      host: string;
      device: IbDevice;
      errno: 101 | 110 | 22;
      localGid: string;
      remoteGid: string;
      peerHost: string;
    }
  | {
      kind: 'completion';
      host: string;
      device: IbDevice;
      status: 1 | 12;
      vendorErr: number;
      peerHost: string;
      localGid: string;
      remoteGid: string;
      afterBytes: number;
    }
  | { kind: 'net-mismatch'; host: string };

export interface Rail {
  /** NET device index on each node. */
  index: number;
  a: IbDevice;
  b: IbDevice;
  pfcMismatch: boolean;
}

export interface JobOutcome {
  plans: HostPlan[];
  /** `IB` or `Socket` (undefined for one node with no inter-node traffic). */
  network: 'IB' | 'Socket';
  rails: Rail[];
  /** The first failure, attributed to the host that reports it first; the others fail as its peers. */
  failure?: JobFailure;
  /** Peak bus bandwidth of the all-reduce (GB/s) and its small-message latency (µs). */
  busbwGBps: number;
  latencyUs: number;
  gdr: boolean;
}

/** Whether a cable joins `a` on host ha (or a slave of it) and `b` on host hb (or a slave). */
export function cabled(cluster: Cluster, ha: Machine, a: string, hb: Machine, b: string): boolean {
  const ports = (m: Machine, n: string): string[] => netdevOf(m, n)?.bond?.slaves ?? [n];
  const pb = new Set(ports(hb, b));
  return ports(ha, a).some((p) => {
    const end = cluster.peer(ha.hostname, p);
    return end !== undefined && end.host === hb.hostname && pb.has(end.ifname) && ha.carrier(p);
  });
}

/** Whether `ip` (an address of some host) answers from host `from`: management, or a cabled fabric subnet. */
export function ipReachable(cluster: Cluster, from: Machine, ip: string): boolean {
  if (from.netdevs.some((d) => d.addresses.some((a) => a.local === ip))) return true;
  const owner = cluster.machines.find((m) => m.netdevs.some((d) => d.addresses.some((a) => a.local === ip)));
  if (!owner) return false;
  const ownerDev = owner.netdevs.find((d) => d.addresses.some((a) => a.local === ip))!;
  if (ownerDev.name === owner.mgmt.ifname) return true;
  return from.netdevs.some(
    (d) =>
      d.adminUp &&
      ipv4Addrs(d).some((a) => sameSubnet(a.local, ip, a.prefixlen)) &&
      cabled(cluster, from, d.name, owner, ownerDev.name),
  );
}

/** Whether a QP from device `a` (host ha) to `b` (host hb) connects, and how it fails if not. */
function connectQp(cluster: Cluster, pa: HostPlan, a: IbDevice, pb: HostPlan, b: IbDevice): JobFailure | undefined {
  const ma = pa.machine;
  const mb = pb.machine;
  const la = gidToIpv4(a.gid?.gid ?? '');
  const lb = gidToIpv4(b.gid?.gid ?? '');
  const gidDev = a.gid?.ndev ?? a.netdev;
  const dev = netdevOf(ma, gidDev);
  const fail = (errno: 101 | 110 | 22): JobFailure => ({
    kind: 'modify-qp',
    host: pa.host,
    device: a,
    errno,
    localGid: gidString(a),
    remoteGid: gidString(b),
    peerHost: pb.host,
  });
  if (!a.gid || !b.gid) return fail(22);
  // RoCE resolves the remote GID's address through the local GID's netdev: no route there → ENETUNREACH.
  if (!la || !lb || !dev || !ipv4Addrs(dev).some((x) => sameSubnet(x.local, lb, x.prefixlen))) return fail(101);
  if (!cabled(cluster, ma, a.netdev, mb, b.netdev)) return fail(110);
  if (a.gid.type !== b.gid.type) {
    return {
      kind: 'completion',
      host: pb.host,
      device: b,
      status: 12,
      vendorErr: 129,
      peerHost: pa.host,
      localGid: gidString(b),
      remoteGid: gidString(a),
      afterBytes: 0,
    };
  }
  if (a.mtuBytes !== b.mtuBytes) {
    // The side with the smaller MTU receives frames larger than its port accepts.
    const [small, big, sp, bp] = a.mtuBytes < b.mtuBytes ? [a, b, pa, pb] : [b, a, pb, pa];
    return {
      kind: 'completion',
      host: sp.host,
      device: small,
      status: 1,
      vendorErr: 105,
      peerHost: bp.host,
      localGid: gidString(small),
      remoteGid: gidString(big),
      afterBytes: small.mtuBytes,
    };
  }
  return undefined;
}

/** How NCCL prints a GID: `::ffff:a.b.c.d` for IPv4-mapped, else compressed IPv6. */
export function gidString(d: IbDevice): string {
  if (!d.gid) return 'N/A';
  const v4 = gidToIpv4(d.gid.gid);
  if (v4) return `::ffff:${v4}`;
  return compressIpv6(d.gid.gid);
}

function compressIpv6(full: string): string {
  const groups = full.split(':').map((g) => g.replace(/^0+(?=.)/, ''));
  let best = { at: -1, len: 0 };
  for (let i = 0; i < groups.length;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === '0') j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  if (best.at < 0) return groups.join(':');
  const head = groups.slice(0, best.at).join(':');
  const tail = groups.slice(best.at + best.len).join(':');
  return `${head}::${tail}`;
}

const RAIL_GBPS = 2.9;
const RAIL_EFFICIENCY = 0.72;
const INTRA_GBPS = 19;
const INTRA_ACS_GBPS = 9;
const SOCKET_GBPS = 1.5;

/** The outcome of one all-reduce job across `plans` (node rank order); `localRanks` per node. */
export function jobOutcome(cluster: Cluster, plans: HostPlan[], localRanks: number): JobOutcome {
  const base = { plans, rails: [] as Rail[], gdr: false };
  const intra = Math.min(...plans.map((p) => (p.acsRedirect ? INTRA_ACS_GBPS : INTRA_GBPS)));
  const fail = (failure: JobFailure, network: 'IB' | 'Socket' = 'IB'): JobOutcome => ({
    ...base,
    network,
    failure,
    busbwGBps: 0,
    latencyUs: 0,
  });
  for (const p of plans) if (!p.cuda.ok) return fail({ kind: 'cuda', host: p.host, error: p.cuda.error ?? 'no CUDA' });
  for (const p of plans) if (!p.socket) return fail({ kind: 'no-socket', host: p.host });
  const root = plans[0]!;
  for (const p of plans.slice(1))
    if (!ipReachable(cluster, p.machine, root.socket!.address))
      return fail({ kind: 'bootstrap', host: p.host, peer: root.socket!.address });
  const network: 'IB' | 'Socket' = plans.every((p) => p.devices.length > 0) ? 'IB' : 'Socket';
  if (plans.length > 1 && network === 'Socket' && plans.some((p) => p.devices.length > 0))
    return fail({ kind: 'net-mismatch', host: plans.find((p) => p.devices.length > 0)!.host }, 'Socket');
  // Rings connect before the tuner parses NCCL_ALGO/NCCL_PROTO, so QP failures come first.
  const rails: Rail[] = [];
  if (plans.length > 1 && network === 'IB') {
    for (let n = 0; n < plans.length; n++) {
      const pa = plans[n]!;
      const pb = plans[(n + 1) % plans.length]!;
      if (pa === pb) continue;
      const k = Math.min(pa.devices.length, pb.devices.length);
      for (let i = 0; i < k; i++) {
        const a = pa.devices[i]!;
        const b = pb.devices[i]!;
        const f = connectQp(cluster, pa, a, pb, b) ?? connectQp(cluster, pb, b, pa, a);
        if (f && f.kind === 'modify-qp') return { ...fail(f), rails };
        if (f) return { ...base, network, rails, failure: f, busbwGBps: 0, latencyUs: 0 };
        if (n === 0) {
          const prio = pa.tc >> 5;
          rails.push({
            index: i,
            a,
            b,
            pfcMismatch: pfcEnabled(pa.machine, a.netdev, prio) !== pfcEnabled(pb.machine, b.netdev, prio),
          });
        }
      }
    }
  }
  const bad = plans.find((p) => p.algoError);
  if (bad) return { ...fail({ kind: 'invalid-usage', host: bad.host, warn: bad.algoError! }, network), rails };
  if (plans.length === 1) return { ...base, network, rails, busbwGBps: intra, latencyUs: 21, gdr: false };
  if (network === 'Socket') return { ...base, network, rails, busbwGBps: SOCKET_GBPS, latencyUs: 95, gdr: false };
  // The GPU that carries each rail's traffic is the one closest to its NIC: GDR is its to use.
  const railGpus = plans.flatMap((p) =>
    p.devices.map((d) => Array.from({ length: localRanks }, (_, r) => gpuNet(p, r)).find((g) => g?.device === d)),
  );
  const gdrShare = railGpus.filter((x) => x !== undefined);
  const gdrAll = gdrShare.length > 0 && gdrShare.every((x) => x!.gdr);
  const gdrFraction = gdrShare.length === 0 ? 0 : gdrShare.filter((x) => x!.gdr).length / gdrShare.length;
  let busbw = rails.length * RAIL_GBPS * RAIL_EFFICIENCY;
  busbw *= 1 - 0.1 * (1 - gdrFraction);
  if (rails.some((r) => r.pfcMismatch)) busbw *= 0.6;
  return { ...base, network, rails, busbwGBps: Math.min(busbw, intra), latencyUs: 46, gdr: gdrAll };
}

/** Rail-level evidence for tests and tools: which devices carry the job. */
export function railNames(o: JobOutcome): string[] {
  return o.rails.map((r) => `${r.a.rdma.name}↔${r.b.rdma.name}`);
}
