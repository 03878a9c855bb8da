/**
 * A netplan file (`/etc/netplan/*.yaml`) → devices with the line of every setting the rules read.
 *
 * Parsed with the `yaml` library's document API and a LineCounter, so each value keeps its 1-based line.
 * YAML errors (bad indentation, tabs, unclosed flow maps) never throw: they are listed in `errors` with
 * their line, and whatever parsed is still returned. Facts follow docs/DOCTOR.md's `netplan-yaml` kind:
 * `{ethernets[], bonds[]: {name, interfaces[], mode, parameters}}`, plus bridges, vlans and line maps.
 */
import { createRequire } from 'node:module';
import type { Node as YamlNode, YAMLMap } from 'yaml';
import { yamlTooDeepAt, yamlTooDeepMessage } from './yaml-depth.js';

/**
 * The yaml library costs ~20 ms to load; doctor and lint read most inputs without it, so it is
 * loaded (synchronously, through its CommonJS build) the first time a netplan file is parsed.
 */
type YamlLib = typeof import('yaml');
let yamlLib: YamlLib | undefined;
function yaml(): YamlLib {
  return (yamlLib ??= createRequire(import.meta.url)('yaml') as YamlLib);
}
const isMap = ((n: unknown) => yaml().isMap(n)) as YamlLib['isMap'];
const isPair = ((n: unknown) => yaml().isPair(n)) as YamlLib['isPair'];
const isScalar = ((n: unknown) => yaml().isScalar(n)) as YamlLib['isScalar'];
const isSeq = ((n: unknown) => yaml().isSeq(n)) as YamlLib['isSeq'];

export type NetplanValue = string | number | boolean;

export interface NetplanDevice {
  name: string;
  type: 'ethernet' | 'bond' | 'bridge' | 'vlan' | 'other';
  /** CIDRs as written (`192.168.101.1/24`). */
  addresses: string[];
  mtu?: number;
  dhcp4?: boolean;
  gateway4?: string;
  gateway6?: string;
  /** `via` of a `routes:` entry `to: default` / `0.0.0.0/0`. */
  defaultVia?: string;
  /** Bond / bridge members. */
  interfaces: string[];
  /** Bond mode (`parameters.mode`), as written. */
  mode?: string;
  parameters: Record<string, NetplanValue>;
  /** VLAN `id` and `link`. */
  id?: number;
  link?: string;
  /** 1-based lines: `name` (the device key), `addresses`, `mtu`, `gateway4`, `interfaces`, `parameters`,
   * `param:<key>` for each parameter, `routes`. */
  lines: Record<string, number>;
}

export interface NetplanFacts {
  /** True when the text has a top-level `network:` map. */
  isNetplan: boolean;
  version?: number;
  renderer?: string;
  ethernets: NetplanDevice[];
  bonds: NetplanDevice[];
  bridges: NetplanDevice[];
  vlans: NetplanDevice[];
  /** YAML syntax errors, with their line. */
  errors: Array<{ line: number; message: string }>;
}

const SECTIONS: Array<[string, NetplanDevice['type']]> = [
  ['ethernets', 'ethernet'],
  ['bonds', 'bond'],
  ['bridges', 'bridge'],
  ['vlans', 'vlan'],
  ['wifis', 'other'],
  ['tunnels', 'other'],
  ['vrfs', 'other'],
  ['dummy-devices', 'other'],
];

function scalarValue(node: unknown): NetplanValue | undefined {
  if (!isScalar(node)) return undefined;
  const v = node.value;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v === null || v === undefined) return undefined;
  return String(v);
}

function str(node: unknown): string | undefined {
  const v = scalarValue(node);
  return v === undefined ? undefined : String(v);
}

function num(node: unknown): number | undefined {
  const v = scalarValue(node);
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+$/.test(v.trim())) return Number(v.trim());
  return undefined;
}

function bool(node: unknown): boolean | undefined {
  const v = scalarValue(node);
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (['true', 'yes', 'on'].includes(t)) return true;
    if (['false', 'no', 'off'].includes(t)) return false;
  }
  return undefined;
}

/** Items of a map as [key text, key node, value node]. */
function entries(map: unknown): Array<[string, YamlNode | null, unknown]> {
  if (!isMap(map)) return [];
  const out: Array<[string, YamlNode | null, unknown]> = [];
  for (const item of (map as YAMLMap).items) {
    if (!isPair(item)) continue;
    const k = str(item.key);
    if (k === undefined) continue;
    out.push([k, (item.key as YamlNode | null) ?? null, item.value]);
  }
  return out;
}

function get(map: unknown, key: string): unknown {
  for (const [k, , v] of entries(map)) if (k === key) return v;
  return undefined;
}

function seqStrings(node: unknown): string[] {
  if (isSeq(node)) {
    const out: string[] = [];
    for (const it of node.items) {
      const s = str(it);
      if (s !== undefined) out.push(s);
      // `- 10.0.0.1/24: {lifetime: 0}` — an address with options.
      else if (isMap(it)) for (const [k] of entries(it)) out.push(k);
    }
    return out;
  }
  const s = str(node);
  return s === undefined ? [] : [s];
}

/**
 * Parses netplan YAML. `firstLine` offsets line numbers (a block inside a Markdown file). Never throws.
 */
export function parseNetplanYaml(text: string, firstLine = 1): NetplanFacts {
  const facts: NetplanFacts = { isNetplan: false, ethernets: [], bonds: [], bridges: [], vlans: [], errors: [] };
  if (typeof text !== 'string') return facts;
  const off = firstLine - 1;
  const tooDeep = yamlTooDeepAt(text);
  if (tooDeep !== undefined) {
    facts.isNetplan = /^network:/m.test(text);
    facts.errors.push({ line: tooDeep + off, message: yamlTooDeepMessage(tooDeep + off) });
    return facts;
  }
  try {
    const lc = new (yaml().LineCounter)();
    const doc = yaml().parseDocument(text, { lineCounter: lc, uniqueKeys: false, prettyErrors: false, strict: false });
    const lineOf = (node: unknown): number => {
      const r = (node as { range?: [number, number, number] } | null)?.range;
      return r ? lc.linePos(r[0]).line + off : firstLine;
    };
    for (const e of doc.errors) {
      const pos = e.linePos?.[0]?.line ?? (e.pos ? lc.linePos(e.pos[0]).line : 1);
      facts.errors.push({ line: pos + off, message: e.message.split('\n')[0] ?? e.message });
    }
    const network = get(doc.contents, 'network');
    if (!isMap(network)) return facts;
    facts.isNetplan = true;
    const version = num(get(network, 'version'));
    if (version !== undefined) facts.version = version;
    const renderer = str(get(network, 'renderer'));
    if (renderer !== undefined) facts.renderer = renderer;
    for (const [section, type] of SECTIONS) {
      for (const [name, keyNode, body] of entries(get(network, section))) {
        const dev: NetplanDevice = {
          name,
          type,
          addresses: [],
          interfaces: [],
          parameters: {},
          lines: { name: lineOf(keyNode) },
        };
        for (const [k, kn, v] of entries(body)) {
          const line = lineOf(kn);
          switch (k) {
            case 'addresses':
              dev.addresses.push(...seqStrings(v));
              dev.lines.addresses = line;
              break;
            case 'mtu': {
              const m = num(v);
              if (m !== undefined) dev.mtu = m;
              dev.lines.mtu = line;
              break;
            }
            case 'dhcp4': {
              const b = bool(v);
              if (b !== undefined) dev.dhcp4 = b;
              break;
            }
            case 'gateway4':
            case 'gateway6': {
              const g = str(v);
              if (g !== undefined) dev[k] = g;
              dev.lines[k] = line;
              break;
            }
            case 'routes':
              dev.lines.routes = line;
              if (isSeq(v))
                for (const r of v.items) {
                  const to = str(get(r, 'to'));
                  const via = str(get(r, 'via'));
                  if (via !== undefined && (to === 'default' || to === '0.0.0.0/0' || to === '::/0')) {
                    dev.defaultVia = via;
                    dev.lines.defaultRoute = lineOf(r);
                  }
                }
              break;
            case 'interfaces':
              dev.interfaces.push(...seqStrings(v));
              dev.lines.interfaces = line;
              break;
            case 'parameters':
              dev.lines.parameters = line;
              for (const [pk, pkn, pv] of entries(v)) {
                const val = scalarValue(pv);
                dev.parameters[pk] = val ?? '';
                dev.lines[`param:${pk}`] = lineOf(pkn);
              }
              break;
            case 'id': {
              const id = num(v);
              if (id !== undefined) dev.id = id;
              break;
            }
            case 'link': {
              const l = str(v);
              if (l !== undefined) dev.link = l;
              break;
            }
            default:
              dev.lines[k] = line;
          }
        }
        const mode = dev.parameters.mode;
        if (mode !== undefined) dev.mode = String(mode);
        if (type === 'ethernet') facts.ethernets.push(dev);
        else if (type === 'bond') facts.bonds.push(dev);
        else if (type === 'bridge') facts.bridges.push(dev);
        else if (type === 'vlan') facts.vlans.push(dev);
      }
    }
  } catch (e) {
    facts.errors.push({ line: firstLine, message: e instanceof Error ? e.message : String(e) });
  }
  return facts;
}

/** Every device of the file, in section order. */
export function netplanDevices(f: NetplanFacts): NetplanDevice[] {
  return [...f.ethernets, ...f.bonds, ...f.bridges, ...f.vlans];
}
