/**
 * Link and address changes as the kernel makes them, shared by `ip link/addr` (ip-change.ts) and
 * netplan apply (netplan-apply.ts):
 *
 * - bringing a link up gives it the mlx5 multiqueue qdisc and, unless it is a bond member or has
 *   addrgenmode none, an EUI-64 IPv6 link-local address (addrconf); down removes IPv6 addresses
 *   and keeps IPv4 ones (no keep_addr_on_down);
 * - IPv4 addresses are listed before IPv6 ones, each family in insertion order (what `ip addr`
 *   prints and what the RDMA GID table is built from), and each adds its prefix route
 *   (`proto kernel scope link src …`);
 * - an MTU change on an mlx5 port resets its channels: the carrier drops for ≈2 s (linkFlap).
 */
import type { IpAddress, Machine, NetDev } from '../model/types.js';
import { linkLocalFromMac } from '../model/machine.js';

/** Modelled carrier loss of an mlx5 port after an MTU change or (re)enslaving (docs/STAGES.md §4.3). */
export const FLAP_MS = 2000;

const flaps = new WeakMap<Machine, Map<string, number>>();

/** The carrier of `ifname` is down until simulated time `until` (MTU change, enslaving). */
export function linkFlap(m: Machine, ifname: string, ms = FLAP_MS): void {
  let map = flaps.get(m);
  if (!map) flaps.set(m, (map = new Map()));
  map.set(ifname, Math.max(map.get(ifname) ?? 0, m.clock.now() + ms));
  m.revision++;
}

/** Ends every flap window (scenarios set a steady state, not one that is just settling). */
export function clearFlaps(m: Machine): void {
  flaps.delete(m);
}

/** Whether `ifname` is inside a flap window now. */
export function flapping(m: Machine, ifname: string): boolean {
  const until = flaps.get(m)?.get(ifname);
  return until !== undefined && m.clock.now() < until;
}

export function netdev(m: Machine, name: string): NetDev | undefined {
  return m.netdevs.find((d) => d.name === name);
}

function ipv4ToInt(a: string): number {
  return a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** `192.168.101.0/24` for `192.168.101.1/24`. */
export function networkOf(local: string, prefixlen: number): string {
  return `${intToIpv4(ipv4ToInt(local) & mask(prefixlen))}/${prefixlen}`;
}

export function sameSubnet(a: string, b: string, prefixlen: number): boolean {
  return (ipv4ToInt(a) & mask(prefixlen)) === (ipv4ToInt(b) & mask(prefixlen));
}

export function isIpv4(s: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(s) && s.split('.').every((o) => Number(o) <= 255);
}

/** Parses `a.b.c.d/nn` or an IPv6 `x::y/nn`; undefined when malformed. */
export function parseCidr(cidr: string): { family: 'inet' | 'inet6'; local: string; prefixlen: number } | undefined {
  const m = /^([^/\s]+)\/(\d{1,3})$/.exec(cidr.trim());
  if (!m) return undefined;
  const local = m[1] as string;
  const prefixlen = Number(m[2]);
  if (isIpv4(local) && prefixlen <= 32) return { family: 'inet', local, prefixlen };
  if (local.includes(':') && /^[0-9a-fA-F:.]+$/.test(local) && prefixlen <= 128)
    return { family: 'inet6', local: local.toLowerCase(), prefixlen };
  return undefined;
}

function addPrefixRoute(m: Machine, dev: NetDev, a: IpAddress): void {
  if (a.family !== 'inet' || a.prefixlen === 32) return;
  const dst = networkOf(a.local, a.prefixlen);
  if (m.routes.some((r) => r.dst === dst && r.dev === dev.name && r.protocol === 'kernel')) return;
  m.routes.push({ dst, dev: dev.name, protocol: 'kernel', scope: 'link', prefsrc: a.local });
}

function dropRoutesOf(m: Machine, dev: NetDev, a: IpAddress): void {
  if (a.family !== 'inet') return;
  m.routes = m.routes.filter((r) => !(r.dev === dev.name && r.prefsrc === a.local && r.protocol === 'kernel'));
}

/** Adds an address the way `ip addr add` does; false when it is already there. */
export function addAddress(
  m: Machine,
  dev: NetDev,
  cidr: { family: 'inet' | 'inet6'; local: string; prefixlen: number },
): boolean {
  if (dev.addresses.some((a) => a.family === cidr.family && a.local === cidr.local)) return false;
  const addr: IpAddress =
    cidr.family === 'inet'
      ? {
          family: 'inet',
          local: cidr.local,
          prefixlen: cidr.prefixlen,
          scope: 'global',
          label: dev.name,
          validLft: 4294967295,
          preferredLft: 4294967295,
          ...(cidr.prefixlen < 31
            ? { broadcast: intToIpv4(ipv4ToInt(cidr.local) | (~mask(cidr.prefixlen) >>> 0)) }
            : {}),
        }
      : {
          family: 'inet6',
          local: cidr.local,
          prefixlen: cidr.prefixlen,
          scope: cidr.local.startsWith('fe80:') ? 'link' : 'global',
          validLft: 4294967295,
          preferredLft: 4294967295,
        };
  if (addr.family === 'inet') {
    // IPv4 addresses come before the IPv6 ones (the kernel keeps the families apart).
    const firstV6 = dev.addresses.findIndex((a) => a.family === 'inet6');
    dev.addresses.splice(firstV6 < 0 ? dev.addresses.length : firstV6, 0, addr);
  } else if (addr.scope === 'link') {
    // The link-local address is the first IPv6 one (it is created when the link comes up).
    const firstV6 = dev.addresses.findIndex((a) => a.family === 'inet6');
    dev.addresses.splice(firstV6 < 0 ? dev.addresses.length : firstV6, 0, addr);
  } else {
    dev.addresses.push(addr);
  }
  if (dev.adminUp) addPrefixRoute(m, dev, addr);
  m.revision++;
  return true;
}

export function removeAddress(m: Machine, dev: NetDev, local: string): boolean {
  const a = dev.addresses.find((x) => x.local === local);
  if (!a) return false;
  dev.addresses = dev.addresses.filter((x) => x !== a);
  dropRoutesOf(m, dev, a);
  // The last IPv4 address gone: the kernel drops every IPv4 route through the device (fib_disable_ip).
  if (a.family === 'inet' && !dev.addresses.some((x) => x.family === 'inet'))
    m.routes = m.routes.filter((r) => r.dev !== dev.name);
  m.revision++;
  return true;
}

/** `ip addr flush dev X`: every IPv4 and global IPv6 address (the link-local one too, as flush does). */
export function flushAddresses(m: Machine, dev: NetDev): void {
  for (const a of [...dev.addresses]) removeAddress(m, dev, a.local);
  m.routes = m.routes.filter((r) => !(r.dev === dev.name && r.protocol === 'kernel'));
}

function ensureLinkLocal(m: Machine, dev: NetDev): void {
  if (dev.linkType === 'loopback' || dev.addrGenMode !== 'eui64' || dev.master) return;
  const ll = linkLocalFromMac(dev.mac);
  if (dev.addresses.some((a) => a.local === ll)) return;
  addAddress(m, dev, { family: 'inet6', local: ll, prefixlen: 64 });
}

/**
 * systemd-networkd's own IPv6 link-local address on a link it manages with the kernel's generation off
 * (`addrgenmode none`, as on the installer's management port): netplan's default `link-local: [ ipv6 ]`
 * (LinkLocalAddressing=ipv6) has networkd add the EUI-64 address itself, after boot as before it.
 */
export function networkdLinkLocal(m: Machine, dev: NetDev): void {
  if (dev.linkType === 'loopback' || dev.addrGenMode !== 'none' || dev.master || !dev.adminUp) return;
  const ll = linkLocalFromMac(dev.mac);
  if (!dev.addresses.some((a) => a.local === ll)) addAddress(m, dev, { family: 'inet6', local: ll, prefixlen: 64 });
}

/** Drops the EUI-64 link-local address (MAC change, enslaving). */
export function dropLinkLocal(m: Machine, dev: NetDev): void {
  for (const a of dev.addresses.filter((x) => x.family === 'inet6' && x.scope === 'link'))
    removeAddress(m, dev, a.local);
}

export function setLinkUp(m: Machine, dev: NetDev): void {
  if (dev.adminUp) return;
  dev.adminUp = true;
  if (dev.qdisc === 'noop') dev.qdisc = dev.driver === 'mlx5_core' || dev.driver === 'igb' ? 'mq' : 'noqueue';
  for (const a of dev.addresses) addPrefixRoute(m, dev, a);
  ensureLinkLocal(m, dev);
  m.revision++;
}

export function setLinkDown(m: Machine, dev: NetDev): void {
  if (!dev.adminUp) return;
  dev.adminUp = false;
  for (const a of dev.addresses.filter((x) => x.family === 'inet6')) removeAddress(m, dev, a.local);
  m.routes = m.routes.filter((r) => r.dev !== dev.name || r.protocol !== 'kernel');
  m.neighbors = m.neighbors.filter((n) => n.dev !== dev.name);
  m.revision++;
}

/** Sets the MTU; an mlx5 port flaps while its channels are rebuilt. Returns an error text when refused. */
export function setMtu(m: Machine, dev: NetDev, mtu: number): string | undefined {
  if (mtu < dev.minMtu) return `Error: mtu less than device minimum.`;
  if (mtu > dev.maxMtu) return `Error: mtu greater than device maximum.`;
  if (dev.mtu === mtu) return undefined;
  dev.mtu = mtu;
  if (dev.driver === 'mlx5_core' && dev.adminUp) linkFlap(m, dev.name);
  m.revision++;
  return undefined;
}

/** Replaces the IPv4/global addresses of a device with exactly `want` (networkd drops foreign ones), keeping order. */
export function setAddresses(
  m: Machine,
  dev: NetDev,
  want: ReadonlyArray<{ family: 'inet' | 'inet6'; local: string; prefixlen: number }>,
): void {
  for (const a of [...dev.addresses]) {
    if (a.family === 'inet6' && a.scope === 'link') continue;
    if (!want.some((w) => w.local === a.local && w.prefixlen === a.prefixlen)) removeAddress(m, dev, a.local);
  }
  for (const w of want) addAddress(m, dev, w);
}

export function nextIfindex(m: Machine): number {
  return Math.max(0, ...m.netdevs.map((d) => d.ifindex)) + 1;
}
