/**
 * dpkg-query (now with the rest of the dpkg/apt model in apt/dpkg-query.ts, re-exported here)
 * and ping from iputils 20211215 for the link-local probes
 * of inventory.cabling: on a port without a usable IPv6 route the probe socket's connect() fails,
 * which iputils reports as `ping: connect: Network is unreachable` (exit 2) — source-derived.
 */
import type { Machine } from '../model/types.js';
export { dpkgQuery } from '../apt/dpkg-query.js';
import { linkLocalFromMac } from '../model/machine.js';
import { fail, getopt, value } from '../shell/args.js';
import type { Tool, ToolEnv } from './types.js';

function pingUnreachable(): { stdout: string; stderr: string; exitCode: number } {
  return { stdout: '', stderr: 'ping: connect: Network is unreachable\n', exitCode: 2 };
}

async function pingRun(args: string[], env: ToolEnv): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const m: Machine = env.machine;
  const p = getopt(args, '46c:W:I:i:w:qnDs:t:');
  if (p.error) return fail(2, `ping: invalid option -- '${p.error.option}'\n`);
  const dest = p.operands[0];
  if (!dest) return fail(2, 'ping: usage error: Destination address required\n');
  const count = Number(value(p, 'c') ?? '0') || 4;
  const ifname = value(p, 'I');
  const v6 = p.opts.some((o) => o.name === '6') || dest.includes(':');
  const dev = ifname ? m.netdevs.find((d) => d.name === ifname) : undefined;
  if (ifname && !dev) return fail(2, `ping: SO_BINDTODEVICE ${ifname}: No such device\n`);
  // A port that is down has no IPv6 route (not even ff00::/8), so the probe connect() fails.
  if (dev && (!dev.adminUp || (v6 && !dev.addresses.some((a) => a.family === 'inet6')))) return pingUnreachable();
  // Only link-local multicast probes on a named port are modelled; other destinations get no answer.
  if (!dev) return { stdout: `PING ${dest} 56 data bytes\n\n--- ${dest} ping statistics ---\n${count} packets transmitted, 0 received, 100% packet loss, time ${(count - 1) * 1001}ms\n\n`, stderr: '', exitCode: 1 };
  const src = dev.addresses.find((a) => a.family === 'inet6' && a.scope === 'link')?.local ?? '::';
  let stdout = `PING ${dest}(${dest}) from ${src}%${dev.name} ${dev.name}: 56 data bytes\n`;
  const end = env.cluster.peer(m.hostname, dev.name);
  const peerMachine = end ? env.cluster.machine(end.host) : undefined;
  const peerDev = peerMachine?.netdevs.find((d) => d.name === end?.ifname);
  const answers = m.carrier(dev.name) && peerDev?.adminUp ? peerDev : undefined;
  let received = 0;
  for (let seq = 1; seq <= count; seq++) {
    if (answers) {
      const from = linkLocalFromMac(answers.mac);
      stdout += `64 bytes from ${from}%${dev.name}: icmp_seq=${seq} ttl=64 time=0.${100 + seq * 7} ms\n`;
      received++;
      if (!m.neighbors.some((n) => n.dst === from && n.dev === dev.name)) {
        m.neighbors.push({ dst: from, dev: dev.name, lladdr: answers.mac, state: 'REACHABLE' });
        m.revision++;
      }
    }
    if (seq < count && !(await m.clock.sleep(1000, env.ctx.signal))) break;
  }
  const loss = Math.round(((count - received) / count) * 100);
  stdout += `\n--- ${dest} ping statistics ---\n${count} packets transmitted, ${received} received, ${loss}% packet loss, time ${(count - 1) * 1001}ms\n`;
  if (received > 0) stdout += `rtt min/avg/max/mdev = 0.107/0.114/0.121/0.007 ms\n`;
  return { stdout, stderr: '', exitCode: received > 0 ? 0 : 1 };
}

export const ping: Tool = {
  name: 'ping',
  path: '/usr/bin/ping',
  packages: ['iputils-ping'],
  run: pingRun,
};
