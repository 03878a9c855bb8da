/**
 * Whether the tool can reach a machine over its management path (docs/STAGES.md §4.3): the SSH server
 * address must sit on the management netdev, which must be up with carrier, and the route back to
 * the client must leave through it (a fabric route shadowing it breaks SSH too) — otherwise every
 * session drops and new connections fail until something (the rollback timer, the console)
 * restores it. An active firewall without an ALLOW IN rule for the SSH port on that interface
 * refuses new connections while established ones go on (ufw's RELATED,ESTABLISHED rule).
 *
 * The SSH server consults these predicates; state changes notify it through onManagementChange.
 */
import type { Machine } from '../model/types.js';

/** Why the management address is unreachable now, or undefined when it is reachable. */
export function managementCut(m: Machine): string | undefined {
  const dev = m.netdevs.find((d) => d.name === m.mgmt.ifname);
  if (!dev) return `${m.mgmt.ifname} does not exist`;
  if (!dev.adminUp) return `${m.mgmt.ifname} is down`;
  if (!dev.addresses.some((a) => a.local === m.mgmt.address)) return `${m.mgmt.ifname} lost ${m.mgmt.address}`;
  if (!m.carrier(dev.name)) return `${m.mgmt.ifname} has no carrier`;
  const via = routeTo(m, m.mgmt.clientAddress);
  if (via && via.dev !== m.mgmt.ifname)
    return `the route to ${m.mgmt.clientAddress} leaves through ${via.dev} (${via.dst}), not ${m.mgmt.ifname}`;
  return undefined;
}

function toInt(a: string): number {
  return a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
}

/** The kernel's choice for `addr`: the longest matching prefix among routes on links that are up. */
function routeTo(m: Machine, addr: string): Machine['routes'][number] | undefined {
  let best: Machine['routes'][number] | undefined;
  let bestLen = -1;
  for (const r of m.routes) {
    if (!m.netdevs.find((d) => d.name === r.dev)?.adminUp) continue;
    const [net, p] = r.dst === 'default' ? ['0.0.0.0', '0'] : r.dst.split('/');
    if (!net || net.includes(':')) continue;
    const len = Number(p ?? 32);
    const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
    if ((toInt(net) & mask) >>> 0 === (toInt(addr) & mask) >>> 0 && len > bestLen) {
      best = r;
      bestLen = len;
    }
  }
  return best;
}

/** Why a new SSH connection is refused now (the management path is cut, or the firewall drops it). */
export function connectionRefused(m: Machine): string | undefined {
  const cut = managementCut(m);
  if (cut) return cut;
  const fw = m.firewall;
  if (!fw?.active) return undefined;
  const ok = fw.allowIn.some(
    (r) =>
      (r.iface === undefined || r.iface === m.mgmt.ifname) &&
      (r.port === undefined || r.port === m.mgmt.sshPort) &&
      (r.proto === undefined || r.proto === 'tcp'),
  );
  return ok ? undefined : `the firewall drops new connections to port ${m.mgmt.sshPort} on ${m.mgmt.ifname}`;
}

/**
 * Modelled time a client spends on one connection attempt to a host it cannot reach (its connect
 * timeout). At speed 'max' the lab's clock only moves by modelled waits, so a client polling an
 * unreachable host is what lets a rollback timer on it come due.
 */
export const UNREACHABLE_ATTEMPT_MS = 15_000;

const listeners = new WeakMap<Machine, Set<() => void>>();

export function onManagementChange(m: Machine, listener: () => void): () => void {
  let set = listeners.get(m);
  if (!set) listeners.set(m, (set = new Set()));
  set.add(listener);
  return () => set?.delete(listener);
}

/** Called after a change that may have cut or restored the management path (netplan apply, ip, ufw). */
export function notifyManagement(m: Machine): void {
  for (const l of listeners.get(m) ?? []) l();
}
