/**
 * Whether traffic between two lab machines gets through (docs/STAGES.md §4.3 ib_write_bw): the TCP control
 * connection perftest opens to `<peer-ip>`, and the path of a RoCE queue pair.
 *
 * TCP: the destination is a management address (always routed), or lies in a connected subnet of a
 * local netdev whose physical ports (a bond's slaves) reach, through a plugged cable with carrier, a
 * port of the machine that owns the address on the same netdev (or its bond). ufw on the receiver
 * drops it unless a rule admits the ingress interface or port.
 *
 * QP: both GID entries must exist and be of one type; an IPv4 GID needs a connected route from the
 * source GID's netdev to the destination's address, and the address must resolve (ARP) over that
 * netdev's ports — else ibv_modify_qp to RTR fails. Packets then leave through the requester's own
 * physical port whatever the bond would hash, and arrive at the port the cable joins: if that port is
 * not the responder device's (the 4-port-bond GID spill, a crossed pair), every packet lands on an HCA
 * that does not own the QP and the requester retries until retry-exceeded (status 12).
 */
import type { Cluster } from './cluster.js';
import { gidTable, gidToIpv4 } from './rdma.js';
import type { GidEntry, Machine, NetDev, RdmaDevice } from './types.js';

export function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((a, b) => ((a << 8) | (Number(b) & 0xff)) >>> 0, 0);
}

export function inSubnet(ip: string, net: string, prefixlen: number): boolean {
  if (prefixlen === 0) return true;
  const mask = prefixlen >= 32 ? 0xffffffff : ~((1 << (32 - prefixlen)) - 1) >>> 0;
  return (ipv4ToInt(ip) & mask) >>> 0 === (ipv4ToInt(net) & mask) >>> 0;
}

/** The physical ports under a netdev: a bond's slaves, else the device itself. */
export function physicalPorts(m: Machine, netdev: string): string[] {
  const d = m.netdevs.find((x) => x.name === netdev);
  return d?.bond ? [...d.bond.slaves] : [netdev];
}

/** The netdev that holds the addresses of a port: its bond when enslaved. */
export function l3Netdev(m: Machine, port: string): NetDev | undefined {
  const d = m.netdevs.find((x) => x.name === port);
  return d?.master ? m.netdevs.find((x) => x.name === d.master) : d;
}

/** Which machine and netdev own an IPv4 address. */
export function ipv4Owner(cluster: Cluster, ip: string): { machine: Machine; netdev: NetDev } | undefined {
  for (const machine of cluster.machines) {
    for (const netdev of machine.netdevs) {
      if (netdev.addresses.some((a) => a.family === 'inet' && a.local === ip)) return { machine, netdev };
    }
  }
  return undefined;
}

/** The local netdevs with a connected IPv4 subnet containing `ip` (admin up). */
function connectedVia(m: Machine, ip: string): NetDev[] {
  return m.netdevs.filter(
    (d) => d.adminUp && d.addresses.some((a) => a.family === 'inet' && inSubnet(ip, a.local, a.prefixlen)),
  );
}

/** Whether `ip` (owned by `owner` on `ownerDev`) answers ARP sent out of `via` on `m`. */
function l2Reachable(cluster: Cluster, m: Machine, via: NetDev, owner: Machine, ownerDev: NetDev): string | undefined {
  for (const port of physicalPorts(m, via.name)) {
    if (!m.carrier(port)) continue;
    const end = cluster.peer(m.hostname, port);
    if (!end || end.host !== owner.hostname) continue;
    const l3 = l3Netdev(owner, end.ifname);
    if (l3?.name === ownerDev.name && ownerDev.adminUp) return end.ifname;
  }
  return undefined;
}

export type TcpPath =
  | { ok: true; machine: Machine; ingress: string }
  /** `noroute`: no local subnet or the peer never answers ARP; `filtered`: the peer's firewall drops it. */
  | { ok: false; reason: 'noroute' | 'unreachable' | 'filtered' };

function admitted(m: Machine, ingress: string, port: number): boolean {
  const fw = m.firewall;
  if (!fw?.active) return true;
  return fw.allowIn.some(
    (r) =>
      (r.iface === undefined || r.iface === ingress) &&
      (r.port === undefined || r.port === port) &&
      (r.proto === undefined || r.proto === 'tcp'),
  );
}

/** Can `from` open a TCP connection to `ip`:`port`? */
export function tcpPath(cluster: Cluster, from: Machine, ip: string, port: number): TcpPath {
  const owner = ipv4Owner(cluster, ip);
  if (owner?.machine === from) return { ok: true, machine: from, ingress: 'lo' };
  const mgmtTarget = cluster.machines.find((x) => x.mgmt.address === ip);
  if (mgmtTarget) {
    if (!from.carrier(from.mgmt.ifname) || !mgmtTarget.carrier(mgmtTarget.mgmt.ifname))
      return { ok: false, reason: 'unreachable' };
    return admitted(mgmtTarget, mgmtTarget.mgmt.ifname, port)
      ? { ok: true, machine: mgmtTarget, ingress: mgmtTarget.mgmt.ifname }
      : { ok: false, reason: 'filtered' };
  }
  const vias = connectedVia(from, ip);
  if (vias.length === 0) return { ok: false, reason: 'noroute' };
  if (!owner) return { ok: false, reason: 'unreachable' };
  for (const via of vias) {
    const ingressPort = l2Reachable(cluster, from, via, owner.machine, owner.netdev);
    if (ingressPort === undefined) continue;
    return admitted(owner.machine, owner.netdev.name, port)
      ? { ok: true, machine: owner.machine, ingress: owner.netdev.name }
      : { ok: false, reason: 'filtered' };
  }
  return { ok: false, reason: 'unreachable' };
}

export interface QpEnd {
  machine: Machine;
  device: RdmaDevice;
  gidIndex: number;
}

export type QpOutcome =
  | { ok: true; requesterPort: string; responderPort: string }
  /** ibv_modify_qp(RTR) failed on that side: no GID, mixed families, no route (errno 101), no ARP answer. */
  | { ok: false; kind: 'rtr'; side: 'requester' | 'responder'; errno: 22 | 101 | 113; detail: string }
  /** The QP came up but no packet reaches an HCA that owns it: transport retry counter exceeded. */
  | { ok: false; kind: 'retry-exceeded'; detail: string };

function gidOf(e: QpEnd): GidEntry | null {
  return gidTable(e.machine, e.device)[e.gidIndex] ?? null;
}

/** What ibv_modify_qp(RTR) on `local` with the remote GID as destination says. */
function rtrCheck(
  cluster: Cluster,
  local: QpEnd,
  sgid: GidEntry | null,
  remote: QpEnd,
  dgid: GidEntry | null,
): { errno: 22 | 101 | 113; detail: string } | undefined {
  if (!sgid) return { errno: 22, detail: `${local.device.name} has no GID at index ${local.gidIndex}` };
  if (!dgid) return { errno: 22, detail: `${remote.device.name} has no GID at index ${remote.gidIndex}` };
  const sip = gidToIpv4(sgid.gid);
  const dip = gidToIpv4(dgid.gid);
  if ((sip === undefined) !== (dip === undefined))
    return { errno: 101, detail: `GID families differ (${sgid.gid} → ${dgid.gid})` };
  if (dip === undefined) return undefined;
  const via = local.machine.netdevs.find((d) => d.name === sgid.ndev);
  if (!via || !via.addresses.some((a) => a.family === 'inet' && inSubnet(dip, a.local, a.prefixlen))) {
    return { errno: 101, detail: `no route from ${sgid.ndev} to ${dip}` };
  }
  const owner = ipv4Owner(cluster, dip);
  if (
    !owner ||
    owner.machine !== remote.machine ||
    l2Reachable(cluster, local.machine, via, owner.machine, owner.netdev) === undefined
  ) {
    return { errno: 113, detail: `${dip} does not answer ARP on ${sgid.ndev}` };
  }
  return undefined;
}

/** The path of one RC queue pair from `req` (the client, which writes) to `resp` (the server). */
export function qpPath(cluster: Cluster, req: QpEnd, resp: QpEnd): QpOutcome {
  const sgid = gidOf(req);
  const dgid = gidOf(resp);
  const a = rtrCheck(cluster, req, sgid, resp, dgid);
  if (a) return { ok: false, kind: 'rtr', side: 'requester', ...a };
  const b = rtrCheck(cluster, resp, dgid, req, sgid);
  if (b) return { ok: false, kind: 'rtr', side: 'responder', ...b };
  if (sgid!.type !== dgid!.type)
    return {
      ok: false,
      kind: 'retry-exceeded',
      detail: `${sgid!.type} GID against ${dgid!.type}: the responder drops every packet`,
    };
  const reqPorts = physicalPorts(req.machine, req.device.netdev);
  const respPorts = new Set(physicalPorts(resp.machine, resp.device.netdev));
  for (const port of reqPorts) {
    if (!req.machine.carrier(port)) continue;
    const end = cluster.peer(req.machine.hostname, port);
    if (end?.host === resp.machine.hostname && respPorts.has(end.ifname))
      return { ok: true, requesterPort: port, responderPort: end.ifname };
  }
  const first = reqPorts[0] ?? req.device.netdev;
  const end = cluster.peer(req.machine.hostname, first);
  return {
    ok: false,
    kind: 'retry-exceeded',
    detail: end
      ? `${req.machine.hostname}:${first} is cabled to ${end.host}:${end.ifname}, not to a port of ${resp.device.name} (${[...respPorts].join(', ')})`
      : `${req.machine.hostname}:${first} has no cable`,
  };
}
