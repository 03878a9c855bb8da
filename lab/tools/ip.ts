/**
 * ip (iproute2 5.15, Ubuntu 22.04): link, addr, route and neigh `show`, JSON and text. JSON key
 * order follows ip/ipaddress.c print_linkinfo (…, broadcast, promiscuity, min_mtu, max_mtu,
 * inet6_addr_gen_mode, num_*_queues, gso_*, parentbus, parentdev, altnames) — source-derived,
 * checked against real `ip -d -j` captures (netplan test fixture, vyos/Chef fixtures).
 * `linkmode` is printed by `ip link` only, as in iproute2.
 */
import type { IpAddress, Machine, NetDev, Route } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';
import { bondFlag, bondLinkinfo, bondLinkinfoText } from './bonding-render.js';
import { ipChange, isIpChange } from './ip-change.js';

interface Opts {
  json: boolean;
  details: boolean;
  family?: 'inet' | 'inet6';
}

function flags(m: Machine, d: NetDev): string[] {
  if (d.linkType === 'loopback') return d.adminUp ? ['LOOPBACK', 'UP', 'LOWER_UP'] : ['LOOPBACK'];
  const carrier = m.carrier(d.name);
  // Bonds print MASTER and their members SLAVE, after MULTICAST in iproute2's flag order.
  const role = bondFlag(d);
  const base = ['BROADCAST', 'MULTICAST', ...(role ? [role] : [])];
  if (!d.adminUp) return base;
  return carrier ? [...base, 'UP', 'LOWER_UP'] : ['NO-CARRIER', ...base, 'UP'];
}

function operstate(m: Machine, d: NetDev): string {
  if (d.linkType === 'loopback') return 'UNKNOWN';
  return d.adminUp && m.carrier(d.name) ? 'UP' : 'DOWN';
}

function linkJson(m: Machine, d: NetDev, o: Opts, isLink: boolean): Record<string, unknown> {
  const j: Record<string, unknown> = {
    ifindex: d.ifindex,
    ifname: d.name,
    flags: flags(m, d),
    mtu: d.mtu,
    qdisc: d.qdisc,
  };
  if (d.master) j.master = d.master;
  j.operstate = operstate(m, d);
  if (isLink) j.linkmode = 'DEFAULT';
  Object.assign(j, {
    group: 'default',
    txqlen: d.txqlen,
    link_type: d.linkType,
    address: d.mac,
    broadcast: d.linkType === 'loopback' ? '00:00:00:00:00:00' : 'ff:ff:ff:ff:ff:ff',
  });
  if (o.details) {
    Object.assign(j, { promiscuity: 0, min_mtu: d.minMtu, max_mtu: d.maxMtu });
    const li = bondLinkinfo(m, d);
    if (li) j.linkinfo = li;
    Object.assign(j, {
      inet6_addr_gen_mode: d.addrGenMode,
      num_tx_queues: d.numTxQueues,
      num_rx_queues: d.numRxQueues,
      gso_max_size: d.gsoMaxSize,
      gso_max_segs: d.gsoMaxSegs,
    });
    if (d.pci) Object.assign(j, { parentbus: 'pci', parentdev: d.pci });
  }
  if (d.altnames.length > 0) j.altnames = [...d.altnames];
  return j;
}

function addrJson(a: IpAddress): Record<string, unknown> {
  const j: Record<string, unknown> = { family: a.family, local: a.local, prefixlen: a.prefixlen };
  if (a.broadcast) j.broadcast = a.broadcast;
  j.scope = a.scope;
  if (a.noprefixroute) j.noprefixroute = true;
  if (a.label) j.label = a.label;
  j.valid_life_time = a.validLft;
  j.preferred_life_time = a.preferredLft;
  return j;
}

const lft = (n: number): string => (n === 4294967295 ? 'forever' : `${n}sec`);

function linkText(m: Machine, d: NetDev, o: Opts, isLink: boolean): string {
  let s = `${d.ifindex}: ${d.name}: <${flags(m, d).join(',')}> mtu ${d.mtu} qdisc ${d.qdisc}${d.master ? ` master ${d.master}` : ''} state ${operstate(m, d)}${isLink ? ' mode DEFAULT' : ''} group default qlen ${d.txqlen}\n`;
  s += `    link/${d.linkType} ${d.mac} brd ${d.linkType === 'loopback' ? '00:00:00:00:00:00' : 'ff:ff:ff:ff:ff:ff'}`;
  if (o.details) {
    s += ` promiscuity 0 minmtu ${d.minMtu} maxmtu ${d.maxMtu} `;
    const li = bondLinkinfoText(m, d);
    if (li) s += `\n    ${li}`;
    s += `addrgenmode ${d.addrGenMode} numtxqueues ${d.numTxQueues} numrxqueues ${d.numRxQueues} gso_max_size ${d.gsoMaxSize} gso_max_segs ${d.gsoMaxSegs} `;
    if (d.pci) s += `parentbus pci parentdev ${d.pci} `;
  }
  s += '\n';
  for (const alt of d.altnames) s += `    altname ${alt}\n`;
  return s;
}

function addrText(a: IpAddress): string {
  const brd = a.broadcast ? ` brd ${a.broadcast}` : '';
  const tail = a.family === 'inet' ? ` ${a.label ?? ''}` : ` ${a.noprefixroute ? 'noprefixroute ' : ''}`;
  return (
    `    ${a.family} ${a.local}/${a.prefixlen}${brd} scope ${a.scope}${a.noprefixroute && a.family === 'inet' ? ' noprefixroute' : ''}${tail}\n` +
    `       valid_lft ${lft(a.validLft)} preferred_lft ${lft(a.preferredLft)}\n`
  );
}

function routeJson(r: Route): Record<string, unknown> {
  const j: Record<string, unknown> = { dst: r.dst };
  if (r.gateway) j.gateway = r.gateway;
  j.dev = r.dev;
  j.protocol = r.protocol;
  if (r.scope) j.scope = r.scope;
  if (r.prefsrc) j.prefsrc = r.prefsrc;
  if (r.metric !== undefined) j.metric = r.metric;
  j.flags = [];
  return j;
}

function routeText(r: Route): string {
  let s = `${r.dst} `;
  if (r.gateway) s += `via ${r.gateway} `;
  s += `dev ${r.dev} proto ${r.protocol} `;
  if (r.scope) s += `scope ${r.scope} `;
  if (r.prefsrc) s += `src ${r.prefsrc} `;
  if (r.metric !== undefined) s += `metric ${r.metric} `;
  return `${s}\n`;
}

/** `dev X`, `X` or nothing after the subcommand's `show`/`list`. */
function parseSelector(args: string[]): { dev?: string; rest: string[] } {
  const rest = [...args];
  if (rest[0] === 'show' || rest[0] === 'list' || rest[0] === 'ls' || rest[0] === 'lst') rest.shift();
  let dev: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === 'dev') {
      dev = rest[i + 1];
      rest.splice(i, 2);
      i--;
    }
  }
  return dev !== undefined ? { dev, rest } : { rest };
}

const out = (o: Opts, objects: unknown[], text: string): string => (o.json ? `${JSON.stringify(objects)}\n` : text);

function matchSub(word: string, full: string, min = 1): boolean {
  return word.length >= min && full.startsWith(word);
}

export const ip: Tool = {
  name: 'ip',
  path: '/usr/sbin/ip',
  packages: ['iproute2'],
  run(args, env) {
    const m = env.machine;
    const o: Opts = { json: false, details: false };
    let i = 0;
    for (; i < args.length && (args[i] as string).startsWith('-'); i++) {
      const a = (args[i] as string).replace(/^--?/, '');
      if (a === 'j' || a === 'json') o.json = true;
      else if (a === 'd' || a === 'details' || a === 'detail') o.details = true;
      else if (a === '4') o.family = 'inet';
      else if (a === '6') o.family = 'inet6';
      else if (
        a === 'p' ||
        a === 'pretty' ||
        a === 's' ||
        a === 'stats' ||
        a === 'c' ||
        a === 'color' ||
        a === 'o' ||
        a === 'oneline'
      )
        continue;
      else return fail(255, `Option "${args[i]}" is unknown, try "ip -help".\n`);
    }
    const obj = args[i] ?? '';
    const sub = args.slice(i + 1);
    if (isIpChange(obj, sub)) return ipChange(obj, sub, env);
    const { dev, rest: selected } = parseSelector(sub);
    // `type bond` / `type bond_slave` narrows link and addr listings to bonds or their members.
    const typeAt = selected.indexOf('type');
    const kind = typeAt >= 0 ? selected[typeAt + 1] : undefined;
    const rest = typeAt >= 0 ? selected.filter((_, k) => k !== typeAt && k !== typeAt + 1) : selected;
    const ofKind = (d: NetDev): boolean =>
      kind === undefined ||
      (kind === 'bond' ? d.bond !== undefined : kind === 'bond_slave' ? d.master !== undefined : false);
    const devs = m.netdevs.filter((d) => (dev === undefined || d.name === dev) && ofKind(d));
    if (dev !== undefined && devs.length === 0) return fail(1, `Device "${dev}" does not exist.\n`);

    if (matchSub(obj, 'link')) {
      const named = rest[0];
      const list = named ? m.netdevs.filter((d) => d.name === named) : devs;
      if (named && list.length === 0) return fail(1, `Device "${named}" does not exist.\n`);
      return ok(
        out(
          o,
          list.map((d) => linkJson(m, d, o, true)),
          list.map((d) => linkText(m, d, o, true)).join(''),
        ),
      );
    }
    if (matchSub(obj, 'address') || obj === 'a') {
      const list = devs.filter((d) => !o.family || d.addresses.some((a) => a.family === o.family));
      const addrs = (d: NetDev): IpAddress[] => d.addresses.filter((a) => !o.family || a.family === o.family);
      return ok(
        out(
          o,
          list.map((d) => ({ ...linkJson(m, d, o, false), addr_info: addrs(d).map(addrJson) })),
          list.map((d) => linkText(m, d, o, false) + addrs(d).map(addrText).join('')).join(''),
        ),
      );
    }
    if (matchSub(obj, 'route') || obj === 'r') {
      if (o.family === 'inet6') return ok(out(o, [], ''));
      const onlyDefault = rest.includes('default');
      const routes = m.routes.filter(
        (r) =>
          (!onlyDefault || r.dst === 'default') &&
          (dev === undefined || r.dev === dev) &&
          m.netdevs.find((d) => d.name === r.dev)?.adminUp,
      );
      return ok(out(o, routes.map(routeJson), routes.map(routeText).join('')));
    }
    if (matchSub(obj, 'neighbour') || matchSub(obj, 'neighbor')) {
      // `ip neigh show 192.168.101.2`: an address selects that entry (`to` may precede it).
      const to = rest.filter((w) => w !== 'to').find((w) => /^[0-9a-fA-F:.]+$/.test(w) && /[.:]/.test(w));
      const ns = m.neighbors.filter(
        (n) =>
          (dev === undefined || n.dev === dev) &&
          (to === undefined || n.dst === to) &&
          (!o.family || n.dst.includes(':') === (o.family === 'inet6')),
      );
      const json = ns.map((n) => ({
        dst: n.dst,
        ...(dev === undefined ? { dev: n.dev } : {}),
        ...(n.lladdr ? { lladdr: n.lladdr } : {}),
        ...(n.router ? { router: null } : {}),
        state: [n.state],
      }));
      const text = ns
        .map(
          (n) =>
            `${n.dst} ${dev === undefined ? `dev ${n.dev} ` : ''}${n.lladdr ? `lladdr ${n.lladdr} ` : ''}${n.router ? 'router ' : ''}${n.state}\n`,
        )
        .join('');
      return ok(out(o, json, text));
    }
    if (obj === '') return fail(255, 'Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n');
    return fail(255, `Object "${obj}" is unknown, try "ip help".\n`);
  },
};
