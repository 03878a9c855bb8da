/**
 * dpkg-query (dpkg 1.21: -W/--show with -f/--showformat, `${field}` and `${field;width}`,
 * backslash escapes, glob patterns; unknown names → `dpkg-query: no packages found matching X`
 * on stderr, exit 1, after the matches) and ping from iputils 20211215 for the link-local probes
 * of inventory.cabling: on a port without a usable IPv6 route the probe socket's connect() fails,
 * which iputils reports as `ping: connect: Network is unreachable` (exit 2) — source-derived.
 */
import type { InstalledPackage, Machine } from '../model/types.js';
import { linkLocalFromMac } from '../model/machine.js';
import { fail, getopt, value } from '../shell/args.js';
import type { Tool, ToolEnv } from './types.js';

const STATUS_WORDS: Record<string, string> = { i: 'installed', c: 'config-files', n: 'not-installed', U: 'unpacked', H: 'half-installed', F: 'half-configured' };
const WANT_WORDS: Record<string, string> = { i: 'install', h: 'hold', r: 'deinstall', p: 'purge', u: 'unknown' };

function field(p: InstalledPackage, name: string): string {
  switch (name) {
    case 'Package':
      return p.name;
    case 'binary:Package':
      return p.name;
    case 'Version':
      return p.version;
    case 'Architecture':
      return p.arch;
    case 'db:Status-Abbrev':
      return p.status;
    case 'db:Status-Want':
      return WANT_WORDS[p.status[0] ?? 'u'] ?? 'unknown';
    case 'db:Status-Status':
      return STATUS_WORDS[p.status[1] ?? 'n'] ?? 'not-installed';
    case 'Status':
      return `${WANT_WORDS[p.status[0] ?? 'u']} ok ${STATUS_WORDS[p.status[1] ?? 'n']}`;
    default:
      return '';
  }
}

function unescape(fmt: string): string {
  return fmt.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r', '\\': '\\' } as Record<string, string>)[c] ?? c);
}

function render(fmt: string, p: InstalledPackage): string {
  return unescape(fmt).replace(/\$\{([^};]+)(?:;(-?\d+))?\}/g, (_, name: string, width?: string) => {
    const v = field(p, name);
    if (width === undefined) return v;
    const w = Number(width);
    return w < 0 ? v.padEnd(-w) : v.padStart(w);
  });
}

const globRe = (g: string): RegExp => new RegExp(`^${g.replace(/[.+^$(){}|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);

export const dpkgQuery: Tool = {
  name: 'dpkg-query',
  path: '/usr/bin/dpkg-query',
  packages: ['dpkg'],
  run(args, { machine }) {
    const p = getopt(args, 'Wf:ls', { show: false, showformat: true, list: false, status: false });
    if (p.error) return fail(2, `dpkg-query: error: unknown option ${p.error.option}\n\nType dpkg-query --help for help about querying packages.\n`);
    if (!p.opts.some((o) => o.name === 'W' || o.name === 'show')) return fail(2, 'dpkg-query: error: need an action option\n');
    // dpkg's option parser drops the '=' of `-f=FORMAT` (the usual `-f='${Package}\n'` spelling).
    const fmt = (value(p, 'f', 'showformat') ?? '${binary:Package}\\t${Version}\\n').replace(/^=/, '');
    const all = [...machine.packages.values()].sort((a, b) => a.name.localeCompare(b.name));
    let stdout = '';
    let stderr = '';
    const patterns = p.operands.length > 0 ? p.operands : ['*'];
    const seen = new Set<string>();
    for (const pat of patterns) {
      const re = globRe(pat);
      const hits = all.filter((pkg) => re.test(pkg.name) && (pat.includes('*') || pat.includes('?') ? pkg.status[1] !== 'n' : true));
      if (hits.length === 0) stderr += `dpkg-query: no packages found matching ${pat}\n`;
      for (const h of hits) {
        if (seen.has(h.name)) continue;
        seen.add(h.name);
        stdout += render(fmt, h);
      }
    }
    return { stdout, stderr, exitCode: stderr ? 1 : 0 };
  },
};

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
