/**
 * ping from iputils 20211215 across the lab's cables (source-derived: ping/ping.c, ping_common.c):
 *
 * - IPv4 with `-I <if>`: the request leaves the port (a bond picks a member by its layer3+4 hash),
 *   crosses that port's cable and is answered when the host at the other end owns the address on
 *   any interface (arp_ignore=0: the reply carries the MAC of the interface the request arrived
 *   on — ARP flux, R17) and can route the reply back over a cable to an address of ours. Frames
 *   larger than the receiving port's MTU are dropped; with `-M do` a packet larger than the local
 *   MTU fails at once (`ping: local error: message too long, mtu=N`, counted as `+N errors`).
 *   Both neighbour tables learn the entries ARP leaves (REACHABLE here, STALE there; FAILED when
 *   nobody answered, with `Destination Host Unreachable` lines).
 * - IPv6 link-local multicast (`-6 -I <if> ff02::1`, inventory.cabling): the port at the other
 *   end answers from its link-local address when it has one; its MAC lands in the neighbour table.
 * - A port that is down or has no route for the destination: `ping: connect: Network is unreachable` (exit 2).
 * Each packet waits the 1 s interval in simulated time.
 */
import type { Cluster } from '../model/cluster.js';
import type { Machine, NetDev } from '../model/types.js';
import { fail, getopt, has, value } from '../shell/args.js';
import { rng } from '../util/prng.js';
import { isBond } from './bonding.js';
import { isIpv4, netdev, sameSubnet } from './netdev-ops.js';
import type { Tool, ToolEnv } from './types.js';

type Out = { stdout: string; stderr: string; exitCode: number };

const unreachable = (): Out => ({ stdout: '', stderr: 'ping: connect: Network is unreachable\n', exitCode: 2 });

function hash(a: string, b: string): number {
  const n = (s: string): number => s.split('.').reduce((x, o) => x ^ Number(o), 0);
  return n(a) ^ n(b);
}

/** The physical port a packet from `dev` leaves through (a bond's member by layer3+4 hash). */
function egressPort(m: Machine, dev: NetDev, src: string, dst: string): NetDev | undefined {
  if (!isBond(dev)) return m.carrier(dev.name) ? dev : undefined;
  const up = dev.bond.slaves.filter((s) => m.carrier(s));
  const pick = up[hash(src, dst) % Math.max(1, up.length)];
  return pick ? netdev(m, pick) : undefined;
}

/** The L3 device a frame arriving on `port` is received by (the bond for a member). */
function l3Of(m: Machine, port: NetDev): NetDev | undefined {
  if (!port.master) return port;
  const b = netdev(m, port.master);
  return b?.adminUp ? b : undefined;
}

function ownsAddress(m: Machine, addr: string): boolean {
  return m.netdevs.some((d) => d.adminUp && d.linkType !== 'loopback' && d.addresses.some((a) => a.local === addr));
}

/** The interface the host routes `dst` out of (connected routes first, in kernel order). */
function routeDev(m: Machine, dst: string): NetDev | undefined {
  for (const d of m.netdevs) {
    if (!d.adminUp || d.master) continue;
    if (d.addresses.some((a) => a.family === 'inet' && sameSubnet(a.local, dst, a.prefixlen))) return d;
  }
  return undefined;
}

function across(cluster: Cluster, m: Machine, port: NetDev): { machine: Machine; port: NetDev } | undefined {
  const end = cluster.peer(m.hostname, port.name);
  const pm = end ? cluster.machine(end.host) : undefined;
  const pd = pm && end ? netdev(pm, end.ifname) : undefined;
  return pm && pd && pm.carrier(pd.name) ? { machine: pm, port: pd } : undefined;
}

function learn(m: Machine, dst: string, dev: string, lladdr: string | undefined, state: string): void {
  const i = m.neighbors.findIndex((n) => n.dst === dst && n.dev === dev);
  const entry = { dst, dev, ...(lladdr ? { lladdr } : {}), state };
  if (i >= 0) m.neighbors[i] = entry;
  else m.neighbors.push(entry);
  m.revision++;
}

interface Probe {
  answered: boolean;
  /** ARP got no answer (no host at the other end owns the address). */
  arpFailed: boolean;
}

/** One IPv4 echo of `total` bytes from `dev`/`src` to `dst`. */
function echo(cluster: Cluster, m: Machine, dev: NetDev, src: string, dst: string, total: number): Probe {
  const out = egressPort(m, dev, src, dst);
  const there = out ? across(cluster, m, out) : undefined;
  const rd = there ? l3Of(there.machine, there.port) : undefined;
  if (!there || !rd || !ownsAddress(there.machine, dst)) {
    learn(m, dst, dev.name, undefined, 'FAILED');
    return { answered: false, arpFailed: true };
  }
  learn(m, dst, dev.name, rd.mac, 'REACHABLE');
  learn(there.machine, src, rd.name, dev.mac, 'STALE');
  if (there.port.mtu < total) return { answered: false, arpFailed: false };
  // The reply: routed by the peer towards `src`, over whatever cable that interface has.
  const back = routeDev(there.machine, src);
  const backPort = back ? egressPort(there.machine, back, dst, src) : undefined;
  const home = backPort ? across(cluster, there.machine, backPort) : undefined;
  if (
    !back ||
    !backPort ||
    !home ||
    home.machine !== m ||
    !l3Of(m, home.port) ||
    back.mtu < total ||
    home.port.mtu < total
  ) {
    return { answered: false, arpFailed: false };
  }
  return { answered: ownsAddress(m, src), arpFailed: false };
}

function rtt(r: ReturnType<typeof rng>): number {
  return 0.09 + r.next() * 0.08;
}

function stats(dest: string, sent: number, received: number, errors: number, times: number[]): string {
  const loss = sent === 0 ? 0 : Math.round(((sent - received) / sent) * 100);
  let s = `\n--- ${dest} ping statistics ---\n${sent} packets transmitted, ${received} received, ${errors > 0 ? `+${errors} errors, ` : ''}${loss}% packet loss, time ${Math.max(0, sent - 1) * 1001 + (errors > 0 ? 36 : 2)}ms\n`;
  if (times.length > 0) {
    const min = Math.min(...times);
    const max = Math.max(...times);
    const avg = times.reduce((a, b) => a + b, 0) / times.length;
    const mdev = Math.sqrt(times.reduce((a, b) => a + (b - avg) ** 2, 0) / times.length);
    s += `rtt min/avg/max/mdev = ${min.toFixed(3)}/${avg.toFixed(3)}/${max.toFixed(3)}/${mdev.toFixed(3)} ms\n`;
  } else if (errors > 0) s += `pipe ${Math.min(errors, 3)}\n`;
  return s;
}

async function ping4(
  env: ToolEnv,
  dest: string,
  count: number,
  ifname: string | undefined,
  size: number,
  dontFragment: boolean,
  quiet: boolean,
): Promise<Out> {
  const m = env.machine;
  const dev = ifname ? netdev(m, ifname) : routeDev(m, dest);
  if (ifname && !dev) return fail(2, `ping: SO_BINDTODEVICE ${ifname}: No such device\n`);
  // Down, or bound to a device without a route to the destination: the probe connect() fails.
  const srcAddr = dev?.adminUp
    ? dev.addresses.find((a) => a.family === 'inet' && sameSubnet(a.local, dest, a.prefixlen))
    : undefined;
  if (!dev || !srcAddr) return unreachable();
  const total = size + 28;
  const r = rng(m.seed, m.hostname, `ping:${dest}:${m.revision}`);
  let stdout = `PING ${dest} (${dest}) ${ifname ? `from ${srcAddr.local} ${ifname}: ` : ''}${size}(${total}) bytes of data.\n`;
  let stderr = '';
  let received = 0;
  let errors = 0;
  const times: number[] = [];
  for (let seq = 1; seq <= count; seq++) {
    if (dontFragment && total > dev.mtu) {
      stderr += `ping: local error: message too long, mtu=${dev.mtu}\n`;
      errors++;
    } else {
      const p = echo(env.cluster, m, dev, srcAddr.local, dest, total);
      if (p.answered) {
        const t = rtt(r) + (total > 1500 ? 0.1 : 0);
        times.push(t);
        received++;
        if (!quiet) stdout += `${size + 8} bytes from ${dest}: icmp_seq=${seq} ttl=64 time=${t.toFixed(3)} ms\n`;
      } else if (p.arpFailed) {
        errors++;
        if (!quiet) stdout += `From ${srcAddr.local} icmp_seq=${seq} Destination Host Unreachable\n`;
      }
    }
    if (seq < count && !(await m.clock.sleep(1000, env.ctx.signal))) return { stdout, stderr, exitCode: 130 };
  }
  if (received < count) await m.clock.sleep(1000, env.ctx.signal);
  stdout += stats(dest, count, received, errors, times);
  return { stdout, stderr, exitCode: received > 0 ? 0 : 1 };
}

/** Link-local multicast probe: every host at the other end of the cable answers from its link-local address. */
async function ping6(env: ToolEnv, dest: string, count: number, ifname: string | undefined): Promise<Out> {
  const m = env.machine;
  const dev = ifname ? netdev(m, ifname) : undefined;
  if (ifname && !dev) return fail(2, `ping: SO_BINDTODEVICE ${ifname}: No such device\n`);
  // A port that is down (or a bond member: no IPv6) has no IPv6 route, not even ff00::/8.
  if (!dev || !dev.adminUp || !dev.addresses.some((a) => a.family === 'inet6')) return unreachable();
  const src = dev.addresses.find((a) => a.family === 'inet6' && a.scope === 'link')?.local ?? '::';
  let stdout = `PING ${dest}(${dest}) from ${src}%${dev.name} ${dev.name}: 56 data bytes\n`;
  const out = egressPort(m, dev, src, dest);
  const there = out ? across(env.cluster, m, out) : undefined;
  const rd = there ? l3Of(there.machine, there.port) : undefined;
  const from = rd?.addresses.find((a) => a.family === 'inet6' && a.scope === 'link')?.local;
  const r = rng(m.seed, m.hostname, `ping6:${dev.name}:${m.revision}`);
  let received = 0;
  const times: number[] = [];
  for (let seq = 1; seq <= count; seq++) {
    if (from && rd && dest.toLowerCase().startsWith('ff02::')) {
      const t = rtt(r);
      times.push(t);
      stdout += `64 bytes from ${from}%${dev.name}: icmp_seq=${seq} ttl=64 time=${t.toFixed(3)} ms\n`;
      received++;
      if (!m.neighbors.some((n) => n.dst === from && n.dev === dev.name)) learn(m, from, dev.name, rd.mac, 'REACHABLE');
    }
    if (seq < count && !(await m.clock.sleep(1000, env.ctx.signal))) break;
  }
  stdout += stats(dest, count, received, 0, times);
  return { stdout, stderr: '', exitCode: received > 0 ? 0 : 1 };
}

export const ping: Tool = {
  name: 'ping',
  path: '/usr/bin/ping',
  packages: ['iputils-ping'],
  async run(args, env) {
    const p = getopt(args, '46c:W:I:i:w:qnDs:t:M:');
    if (p.error) return fail(2, `ping: invalid option -- '${p.error.option}'\n`);
    const dest = p.operands[0];
    if (!dest) return fail(2, 'ping: usage error: Destination address required\n');
    const count = Number(value(p, 'c') ?? '0') || 4;
    const ifname = value(p, 'I');
    const size = Number(value(p, 's') ?? '56');
    const pmtu = value(p, 'M');
    if (pmtu !== undefined && !['do', 'want', 'dont', 'probe'].includes(pmtu))
      return fail(2, `ping: invalid -M argument: ${pmtu}\n`);
    if (has(p, '6') || dest.includes(':')) return ping6(env, dest, count, ifname);
    if (!isIpv4(dest)) return fail(2, `ping: ${dest}: Name or service not known\n`);
    return ping4(env, dest, count, ifname, size, pmtu === 'do', has(p, 'q'));
  },
};
