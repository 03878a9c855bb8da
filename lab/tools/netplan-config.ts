/**
 * netplan 0.106's view of its configuration: the YAML files of /{lib,etc,run}/netplan (a file in
 * /run shadows one of the same name in /etc, which shadows /lib; all are read in lexical order of
 * their names, later files amending or overriding earlier mappings and appending to sequences),
 * validated as netplan's parser does for the keys the stages use, and emitted the way `netplan get`
 * prints the merged result. Each definition's renderer is its own `renderer:`, else the section-level
 * one before it in the file that first defined it, else the top-level one of the last file that has
 * one, else networkd (src/parse.c: handle_network_type, finish_iterator)
 * (block style, list items at their key's indent, addresses and route fields double-quoted — the
 * corpus sample `netplan-get__doc-static-ip-two-ethernets.txt`).
 *
 * Diagnostics follow netplan's wording: `<file>:<line>:<col>: Invalid YAML: …` and `Error in
 * network definition: …` (exit 1), GLib warnings `** (generate:PID): WARNING **: HH:MM:SS.mmm: …`
 * for world-readable files and the deprecated `gateway4`/`gateway6`.
 */
import type { IFileSystem } from 'just-bash';
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import { bondModeName } from './bonding.js';
import { isIpv4, parseCidr } from './netdev-ops.js';

export const NETPLAN_DIRS = ['/lib/netplan', '/etc/netplan', '/run/netplan'] as const;

export interface NetplanFile {
  path: string;
  mode: number;
  text: string;
}

export type Yaml = string | number | boolean | null | Yaml[] | { [k: string]: Yaml };

/** A device definition with the keys the lab applies, already validated. */
export interface Netdef {
  name: string;
  type: 'ethernet' | 'bond' | 'bridge' | 'vlan';
  addresses: Array<{ family: 'inet' | 'inet6'; local: string; prefixlen: number }>;
  mtu?: number;
  gateway4?: string;
  routes: Array<{ to: string; via: string }>;
  interfaces: string[];
  /** Bond parameters as the kernel takes them. */
  bond?: {
    mode: string;
    miimon?: number;
    updelay?: number;
    downdelay?: number;
    xmitHashPolicy?: string;
    lacpRate?: 'slow' | 'fast';
  };
  /** `parameters:` present (what makes `netplan try` refuse, R22). */
  hasParameters: boolean;
  /** The backend that renders it. */
  renderer: NetplanRenderer;
  dhcp4: boolean;
  dhcp6: boolean;
  /** `nameservers.addresses`. */
  dns: string[];
  /** `optional: true`: systemd-networkd-wait-online does not wait for it. */
  optional: boolean;
}

export type NetplanRenderer = 'networkd' | 'NetworkManager';

export interface NetplanConfig {
  files: NetplanFile[];
  /** The merged `network:` mapping. */
  network: { [k: string]: Yaml };
  netdefs: Netdef[];
  errors: string[];
  /** Warning texts (without the GLib prefix). */
  warnings: string[];
}

const SECTIONS: Array<[string, Netdef['type']]> = [
  ['ethernets', 'ethernet'],
  ['bonds', 'bond'],
  ['bridges', 'bridge'],
  ['vlans', 'vlan'],
];

/** The files netplan reads under `root` (`''` or a --root-dir), by name, shadowed by directory order. */
export async function readNetplanFiles(fs: IFileSystem, root = ''): Promise<NetplanFile[]> {
  const byName = new Map<string, string>();
  for (const d of NETPLAN_DIRS) {
    const dir = `${root}${d}`;
    let names: string[];
    try {
      names = await fs.readdir(dir);
    } catch {
      continue;
    }
    for (const n of names) if (n.endsWith('.yaml')) byName.set(n, `${dir}/${n}`);
  }
  const files: NetplanFile[] = [];
  for (const name of [...byName.keys()].sort()) {
    const path = byName.get(name) as string;
    try {
      const st = await fs.stat(path);
      if (!st.isFile) continue;
      files.push({ path, mode: st.mode & 0o7777, text: await fs.readFile(path) });
    } catch {
      continue;
    }
  }
  return files;
}

function toPlain(n: YamlNode | null | undefined): Yaml {
  if (!n) return null;
  if (isMap(n)) {
    const o: { [k: string]: Yaml } = {};
    for (const it of n.items) {
      const k = isScalar(it.key) ? String(it.key.value) : String(it.key);
      o[k] = toPlain(it.value as YamlNode | null);
    }
    return o;
  }
  if (isSeq(n)) return n.items.map((x) => toPlain(x as YamlNode));
  if (isScalar(n)) {
    const v = n.value;
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? v : v === null ? null : String(v);
  }
  return null;
}

const isObj = (v: Yaml | undefined): v is { [k: string]: Yaml } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** netplan's merge: mappings amend, scalars override, sequences append (without repeating an item). */
function merge(into: { [k: string]: Yaml }, from: { [k: string]: Yaml }): void {
  for (const [k, v] of Object.entries(from)) {
    const cur = into[k];
    if (isObj(cur) && isObj(v)) merge(cur, v);
    else if (Array.isArray(cur) && Array.isArray(v)) {
      for (const item of v) {
        if (!cur.some((x) => JSON.stringify(x) === JSON.stringify(item))) cur.push(structuredClone(item));
      }
    } else into[k] = isObj(v) || Array.isArray(v) ? structuredClone(v) : v;
  }
}

/** netplan's booleans: YAML 1.1 words as well as true/false. */
const truthy = (v: Yaml | undefined): boolean =>
  v === true || (typeof v === 'string' && ['true', 'yes', 'on', 'y'].includes(v.toLowerCase()));

const rendererName = (v: Yaml | undefined): NetplanRenderer | undefined =>
  v === 'networkd' || v === 'NetworkManager' ? v : undefined;

/** netplan's duration syntax for bond timers: a bare number is milliseconds; `ms`/`s` suffixes. */
function millis(v: Yaml | undefined): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+)(ms|s)?$/.exec(v.trim());
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

const strings = (v: Yaml | undefined): string[] => (Array.isArray(v) ? v.filter((x) => x !== null).map(String) : []);

/** Reads, merges and validates; never throws. */
export function loadNetplan(files: NetplanFile[]): NetplanConfig {
  const network: { [k: string]: Yaml } = {};
  const errors: string[] = [];
  const warnings: string[] = [];
  let globalRenderer: NetplanRenderer | undefined;
  /** The section-level renderer in force where each definition first appeared. */
  const createdWith = new Map<string, NetplanRenderer | undefined>();
  for (const f of files) {
    if ((f.mode & 0o077) !== 0)
      warnings.push(
        `Permissions for ${f.path} are too open. Netplan configuration should NOT be accessible by others.`,
      );
    const lc = new LineCounter();
    const doc = parseDocument(f.text, { lineCounter: lc, prettyErrors: false });
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const pos = lc.linePos(e.pos[0]);
      const line = f.text.split('\n')[pos.line - 1] ?? '';
      errors.push(
        `${f.path}:${pos.line}:${pos.col - 1}: Invalid YAML: ${e.message.split('\n')[0]?.replace(/ at line .*$/, '')}:\n${line}\n${' '.repeat(Math.max(0, pos.col - 1))}^`,
      );
      continue;
    }
    const root = toPlain(doc.contents as YamlNode);
    if (root === null) continue;
    const net = isObj(root) ? root.network : undefined;
    if (!isObj(net)) {
      errors.push(`${f.path}:1:0: Error in network definition: expected mapping (check indentation)`);
      continue;
    }
    globalRenderer = rendererName(net.renderer) ?? globalRenderer;
    for (const [section] of SECTIONS) {
      const defs = net[section];
      if (!isObj(defs)) continue;
      let sectionRenderer: NetplanRenderer | undefined;
      for (const [name, body] of Object.entries(defs)) {
        if (name === 'renderer') sectionRenderer = rendererName(body);
        else if (!createdWith.has(name)) createdWith.set(name, sectionRenderer);
      }
    }
    merge(network, net);
  }
  const netdefs: Netdef[] = [];
  for (const [section, type] of SECTIONS) {
    const defs = network[section];
    if (!isObj(defs)) continue;
    for (const [name, body] of Object.entries(defs)) {
      if (name === 'renderer') continue; // the section-level renderer, not a device
      const d = isObj(body) ? body : {};
      const renderer = rendererName(d.renderer) ?? createdWith.get(name) ?? globalRenderer ?? 'networkd';
      const ns = isObj(d.nameservers) ? d.nameservers : {};
      const nd: Netdef = {
        name,
        type,
        addresses: [],
        routes: [],
        interfaces: strings(d.interfaces),
        hasParameters: d.parameters !== undefined,
        renderer,
        optional: truthy(d.optional),
        dhcp4: truthy(d.dhcp4),
        dhcp6: truthy(d.dhcp6),
        dns: strings(ns.addresses),
      };
      for (const a of [...new Set(strings(d.addresses))]) {
        const c = parseCidr(a);
        if (!c)
          errors.push(
            `Error in network definition: malformed address '${a}', must be X.X.X.X/NN or X:X:X:X:X:X:X:X/NN`,
          );
        else nd.addresses.push(c);
      }
      if (d.mtu !== undefined) nd.mtu = Number(d.mtu);
      for (const g of ['gateway4', 'gateway6'] as const) {
        if (d[g] === undefined) continue;
        warnings.push(
          `\`${g}\` has been deprecated, use default routes instead.\nSee the 'Default routes' section of the documentation for more details.`,
        );
        if (g === 'gateway4') nd.gateway4 = String(d[g]);
      }
      for (const r of Array.isArray(d.routes) ? d.routes : []) {
        if (!isObj(r) || r.to === undefined || r.via === undefined) continue;
        nd.routes.push({ to: String(r.to), via: String(r.via) });
      }
      if (type === 'bond') {
        const p = isObj(d.parameters) ? d.parameters : {};
        const mode = bondModeName(String(p.mode ?? 'balance-rr'));
        if (!mode) errors.push(`Error in network definition: ${name}: unknown bond mode '${String(p.mode)}'`);
        const rate = p['lacp-rate'];
        if (rate !== undefined && rate !== 'slow' && rate !== 'fast')
          errors.push(`Error in network definition: ${name}: unknown lacp-rate '${String(rate)}'`);
        nd.bond = {
          mode: mode ?? 'balance-rr',
          ...(millis(p['mii-monitor-interval']) !== undefined ? { miimon: millis(p['mii-monitor-interval'])! } : {}),
          ...(millis(p['up-delay']) !== undefined ? { updelay: millis(p['up-delay'])! } : {}),
          ...(millis(p['down-delay']) !== undefined ? { downdelay: millis(p['down-delay'])! } : {}),
          ...(p['transmit-hash-policy'] !== undefined ? { xmitHashPolicy: String(p['transmit-hash-policy']) } : {}),
          // networkd writes LACPTransmitRate= only for 802.3ad: elsewhere the value never reaches the kernel (R18).
          ...(rate === 'fast' || rate === 'slow' ? { lacpRate: rate } : {}),
        };
      }
      netdefs.push(nd);
    }
  }
  const names = new Set(netdefs.map((n) => n.name));
  for (const nd of netdefs) {
    for (const i of nd.interfaces)
      if (!names.has(i)) errors.push(`Error in network definition: ${nd.name}: interface '${i}' is not defined`);
    if (nd.gateway4 && !isIpv4(nd.gateway4))
      errors.push(`Error in network definition: invalid IPv4 address '${nd.gateway4}'`);
  }
  const owners = new Map<string, string>();
  for (const nd of netdefs) {
    for (const i of nd.interfaces) {
      const prev = owners.get(i);
      if (prev && prev !== nd.name)
        errors.push(`Error in network definition: ${nd.name}: interface '${i}' is already assigned to bond ${prev}`);
      owners.set(i, nd.name);
    }
  }
  return { files, network, netdefs, errors, warnings };
}

// ---- netplan get ----

/** Per-device key order of netplan's emitter (keys it does not know keep their input order after these). */
const KEY_ORDER = [
  'renderer',
  'optional',
  'match',
  'set-name',
  'interfaces',
  'addresses',
  'nameservers',
  'dhcp4',
  'dhcp6',
  'accept-ra',
  'link-local',
  'gateway4',
  'gateway6',
  'routes',
  'mtu',
  'parameters',
];

function quoteString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function plainScalar(v: Yaml): string {
  if (v === null) return 'null';
  if (typeof v === 'string')
    return /^[A-Za-z0-9_./:+@-][A-Za-z0-9_./:+@ -]*$/.test(v) &&
      !/^(true|false|null|yes|no|~)$/i.test(v) &&
      !/\s$/.test(v)
      ? v
      : quoteString(v);
  return String(v);
}

/** Which scalars netplan double-quotes: addresses of a device, route destinations and gateways. */
function quoted(path: readonly string[], v: Yaml): string {
  const key = path[path.length - 1] ?? '';
  const parent = path[path.length - 2] ?? '';
  if (
    typeof v === 'string' &&
    ((key === 'addresses' && parent !== 'nameservers') || ((key === 'to' || key === 'via') && path.includes('routes')))
  )
    return quoteString(v);
  return plainScalar(v);
}

function orderKeys(path: readonly string[], o: { [k: string]: Yaml }): string[] {
  const keys = Object.keys(o);
  const isDevice = path.length === 2 && SECTIONS.some(([s]) => s === path[0]);
  if (path.length === 0)
    return ['version', 'renderer', ...SECTIONS.map(([s]) => s)]
      .filter((k) => k in o)
      .concat(keys.filter((k) => !['version', 'renderer', ...SECTIONS.map(([s]) => s)].includes(k)));
  if (!isDevice) return keys;
  return [...KEY_ORDER.filter((k) => k in o), ...keys.filter((k) => !KEY_ORDER.includes(k))];
}

function emitValue(path: string[], v: Yaml, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v)) {
    return v.flatMap((item) => {
      if (isObj(item)) {
        const inner = emitMap([...path, '-'], item, indent + 2);
        return inner.length > 0 ? [`${pad}- ${inner[0]!.trimStart()}`, ...inner.slice(1)] : [`${pad}- {}`];
      }
      return [`${pad}- ${quoted(path, item)}`];
    });
  }
  if (isObj(v)) return emitMap(path, v, indent);
  return [`${pad}${quoted(path, v)}`];
}

function emitMap(path: string[], o: { [k: string]: Yaml }, indent: number): string[] {
  const pad = ' '.repeat(indent);
  const out: string[] = [];
  for (const k of orderKeys(
    path.filter((p) => p !== '-'),
    o,
  )) {
    const v = o[k] as Yaml;
    const p = [...path, k];
    if (Array.isArray(v)) {
      if (v.length === 0) out.push(`${pad}${k}: []`);
      else out.push(`${pad}${k}:`, ...emitValue(p, v, indent));
    } else if (isObj(v)) {
      if (Object.keys(v).length === 0) out.push(`${pad}${k}: {}`);
      else out.push(`${pad}${k}:`, ...emitMap(p, v, indent + 2));
    } else out.push(`${pad}${k}: ${quoted(p, v)}`);
  }
  return out;
}

/** `netplan get [KEY]`: the merged configuration (or the value under a dotted key) as netplan prints it. */
export function netplanGet(cfg: NetplanConfig, key?: string): string {
  const network: { [k: string]: Yaml } = { version: 2, ...cfg.network };
  if (!key || key === 'all') return `${['network:', ...emitMap([], network, 2)].join('\n')}\n`;
  const parts = key.split('.').filter((p) => p !== '');
  let cur: Yaml | undefined = network;
  const path: string[] = [];
  for (const p of parts[0] === 'network' ? parts.slice(1) : parts) {
    cur = isObj(cur) ? cur[p] : undefined;
    path.push(p);
  }
  if (cur === undefined || cur === null) return 'null\n';
  if (isObj(cur)) return `${emitMap(path, cur, 0).join('\n')}\n`;
  if (Array.isArray(cur)) return `${emitValue(path, cur, 0).join('\n')}\n`;
  return `${quoted(path, cur)}\n`;
}
