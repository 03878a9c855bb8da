/**
 * lldpcli / lldpctl from lldpd 1.0.13 (jammy): `[-f json|keyvalue|plain] show neighbors`, `update`.
 * Source-derived (src/client/json_writer.c: a one-element array collapses to its element, an
 * object with a `name` key is re-keyed by it; text_writer.c for the plain form); the parser that
 * reads it is src/parse/lldp.ts.
 *
 * What a neighbour is: the port at the other end of a cable with carrier, on a host whose lldpd
 * runs. lldpd's defaults on Linux: chassis id = MAC of the first physical interface (the
 * management NIC here), SysName = host name, port id = the port's own MAC (the permanent one for
 * a bond member, so bond members stay distinguishable), PortDescr = the interface name, TTL 120.
 * The control socket /run/lldpd.socket is root:_lldpd 0660: other users get `unable to connect`.
 */
import type { Cluster } from '../model/cluster.js';
import type { Machine, NetDev } from '../model/types.js';
import { isInstalled } from '../model/packages.js';
import { fail, ok } from '../shell/args.js';
import type { Tool, ToolEnv } from './types.js';

export interface LldpNeighbourView {
  localPort: string;
  rid: number;
  ageS: number;
  peer: Machine;
  peerPort: NetDev;
}

const seen = new WeakMap<Machine, Map<string, number>>();

/** Whether lldpd runs: installed, and its unit not stopped (a unit systemd has not loaded counts as running, as the package starts it). */
export function lldpdRunning(m: Machine): boolean {
  const unit = m.system?.systemd.units.get('lldpd.service');
  return isInstalled(m.packages, 'lldpd') && (unit === undefined || unit.active === 'active');
}

/** The neighbours lldpd on `m` has heard, in local ifindex order. */
export function lldpNeighbours(m: Machine, cluster: Cluster): LldpNeighbourView[] {
  if (!lldpdRunning(m)) return [];
  let first = seen.get(m);
  if (!first) seen.set(m, (first = new Map()));
  const out: LldpNeighbourView[] = [];
  const ports = m.netdevs.filter((d) => d.pci && d.name !== m.mgmt.ifname).sort((a, b) => a.ifindex - b.ifindex);
  for (const d of ports) {
    const end = cluster.peer(m.hostname, d.name);
    const pm = end ? cluster.machine(end.host) : undefined;
    const pd = pm && end ? pm.netdevs.find((x) => x.name === end.ifname) : undefined;
    if (!pm || !pd || !m.carrier(d.name) || !lldpdRunning(pm)) continue;
    const key = `${d.name}>${pm.hostname}:${pd.name}`;
    if (!first.has(key)) first.set(key, m.clock.now());
    out.push({
      localPort: d.name,
      rid: out.length + 1,
      ageS: Math.floor((m.clock.now() - (first.get(key) as number)) / 1000),
      peer: pm,
      peerPort: pd,
    });
  }
  return out;
}

function chassisMac(m: Machine): string {
  const first = m.netdevs.filter((d) => d.pci).sort((a, b) => a.ifindex - b.ifindex)[0];
  return (first?.permMac ?? first?.mac ?? '00:00:00:00:00:00').toLowerCase();
}

function age(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const mi = Math.floor((s % 3600) / 60);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d} day, ${p(h)}:${p(mi)}:${p(s % 60)}`;
}

function sysDescr(m: Machine): string {
  return `${m.os.prettyName} Linux ${m.os.kernelRelease} ${m.os.kernelVersion} x86_64`;
}

const CAPS: Array<[string, boolean]> = [
  ['Bridge', false],
  ['Router', false],
  ['Wlan', false],
  ['Station', true],
];

function jsonNeighbour(n: LldpNeighbourView): Record<string, unknown> {
  const pm = n.peer;
  return {
    [n.localPort]: {
      via: 'LLDP',
      rid: String(n.rid),
      age: age(n.ageS),
      chassis: {
        [pm.hostname]: {
          id: { type: 'mac', value: chassisMac(pm) },
          descr: sysDescr(pm),
          'mgmt-ip': pm.mgmt.address,
          capability: CAPS.map(([type, enabled]) => ({ type, enabled })),
        },
      },
      port: {
        id: { type: 'mac', value: (n.peerPort.permMac ?? n.peerPort.mac).toLowerCase() },
        descr: n.peerPort.name,
        ttl: '120',
      },
    },
  };
}

function renderJson(list: LldpNeighbourView[]): string {
  if (list.length === 0) return `${JSON.stringify({ lldp: {} }, null, 2)}\n`;
  const items = list.map(jsonNeighbour);
  return `${JSON.stringify({ lldp: { interface: items.length === 1 ? items[0] : items } }, null, 2)}\n`;
}

const RULE = '-------------------------------------------------------------------------------';

function renderPlain(list: LldpNeighbourView[]): string {
  let s = `${RULE}\nLLDP neighbors:\n${RULE}\n`;
  for (const n of list) {
    const pm = n.peer;
    s += `Interface:    ${n.localPort}, via: LLDP, RID: ${n.rid}, Time: ${age(n.ageS)}\n`;
    s += `  Chassis:     \n    ChassisID:    mac ${chassisMac(pm)}\n    SysName:      ${pm.hostname}\n    SysDescr:     ${sysDescr(pm)}\n`;
    s += `    MgmtIP:       ${pm.mgmt.address}\n`;
    for (const [t, on] of CAPS) s += `    Capability:   ${t}, ${on ? 'on' : 'off'}\n`;
    s += `  Port:        \n    PortID:       mac ${(n.peerPort.permMac ?? n.peerPort.mac).toLowerCase()}\n    PortDescr:    ${n.peerPort.name}\n    TTL:          120\n`;
    s += `${RULE}\n`;
  }
  return s;
}

function renderKeyvalue(list: LldpNeighbourView[]): string {
  return list
    .map((n) => {
      const p = `lldp.${n.localPort}`;
      const pm = n.peer;
      return [
        `${p}.via=LLDP`,
        `${p}.rid=${n.rid}`,
        `${p}.age=${age(n.ageS)}`,
        `${p}.chassis.mac=${chassisMac(pm)}`,
        `${p}.chassis.name=${pm.hostname}`,
        `${p}.chassis.descr=${sysDescr(pm)}`,
        `${p}.chassis.mgmt-ip=${pm.mgmt.address}`,
        `${p}.port.mac=${(n.peerPort.permMac ?? n.peerPort.mac).toLowerCase()}`,
        `${p}.port.descr=${n.peerPort.name}`,
        `${p}.port.ttl=120`,
      ]
        .map((l) => `${l}\n`)
        .join('');
    })
    .join('');
}

function run(name: string, args: string[], env: ToolEnv): ReturnType<Tool['run']> {
  const m = env.machine;
  let format = 'plain';
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-f') format = args[++i] ?? 'plain';
    else if (a.startsWith('-f')) format = a.slice(2);
    else if (a === '-d' || a === '-u') {
      if (a === '-u') i++;
    } else words.push(a);
  }
  const stamp = new Date(m.clock.now()).toISOString().slice(0, 19);
  if (!lldpdRunning(m) || !env.root)
    return fail(1, `${stamp} [WARN/lldpctl] unable to connect to socket /run/lldpd.socket\n`);
  const cmd = words.join(' ');
  if (name === 'lldpctl' || cmd === '' || /^show neighbou?rs?( details| summary)?$/.test(cmd)) {
    const list = lldpNeighbours(m, env.cluster);
    if (format === 'json' || format === 'json0') return ok(renderJson(list));
    if (format === 'keyvalue') return ok(renderKeyvalue(list));
    return ok(renderPlain(list));
  }
  if (cmd === 'update') return ok('');
  return fail(1, `${stamp} [WARN/lldpctl] an error occurred while executing last command\n`);
}

export const lldpcli: Tool = {
  name: 'lldpcli',
  path: '/usr/sbin/lldpcli',
  packages: ['lldpd'],
  run: (a, e) => run('lldpcli', a, e),
};
export const lldpctl: Tool = {
  name: 'lldpctl',
  path: '/usr/sbin/lldpctl',
  packages: ['lldpd'],
  run: (a, e) => run('lldpctl', a, e),
};
