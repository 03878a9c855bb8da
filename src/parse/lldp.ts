/**
 * Cabling evidence: `lldpcli -f json show neighbors` and `ip -6 -j neigh show dev <if>`.
 *
 * lldpctl's `json` writer (src/client/json_writer.c) simplifies its tree: a one-element array becomes
 * the element, an object whose only key is `value` becomes the string, and an object with a `name`
 * key is re-keyed by that name. Hence:
 *   one neighbour:   {"lldp": {"interface": {"ens1f0": {"via": "LLDP", "chassis": {"l20-n2": {"id": {"type": "mac", "value": "…"}, …}}, "port": {"id": {…}, "descr": "ens1f0", "ttl": "120"}}}}}
 *   several:         {"lldp": {"interface": [{"ens1f0": {…}}, {"ens1f1": {…}}]}}
 *   chassis without a SysName is not re-keyed: "chassis": {"id": {…}, "descr": …}
 *   no neighbour:    {"lldp": {}}  (or `"lldp": [{}]`)
 * `-f json0` keeps every level as arrays with `name`/`value` keys; both shapes are read.
 */
import { z } from 'zod';
import { cleanText, compact, guard, isRecord, parseJsonLoose, str, validate } from './common.js';

export const LldpNeighborSchema = z.object({
  localPort: z.string(),
  via: z.string().optional(),
  chassisName: z.string().optional(),
  /** Chassis id when its type is `mac`. */
  chassisMac: z.string().optional(),
  chassisId: z.string().optional(),
  chassisIdType: z.string().optional(),
  /** Port id as sent (an interface name or a MAC, see `peerPortIdType`). */
  peerPortId: z.string().optional(),
  peerPortIdType: z.string().optional(),
  peerPortDescr: z.string().optional(),
  mgmtIps: z.array(z.string()).optional(),
});
export type LldpNeighbor = z.infer<typeof LldpNeighborSchema>;

export const LldpFactsSchema = z.object({
  neighbors: z.array(LldpNeighborSchema),
  error: z.string().optional(),
});
export type LldpFacts = z.infer<typeof LldpFactsSchema>;

/** The value of a leaf that may be a string, `{value}`, or a one-element array of those (json0). */
function leaf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return leaf(v[0]);
  if (isRecord(v)) return str(v['value']);
  return undefined;
}

function leaves(v: unknown): string[] | undefined {
  if (v === undefined) return undefined;
  const arr = Array.isArray(v) ? v : [v];
  const out = arr.map(leaf).filter((s): s is string => s !== undefined);
  return out.length > 0 ? out : undefined;
}

/** A (possibly one-element-array) object. */
function obj(v: unknown): Record<string, unknown> | undefined {
  if (Array.isArray(v)) return obj(v[0]);
  return isRecord(v) ? v : undefined;
}

/** `{type, value}` of an id (json: object; json0: array of one object). */
function idOf(v: unknown): { type?: string; value?: string } {
  const o = obj(v);
  if (!o) return typeof v === 'string' ? { value: v } : {};
  return { type: leaf(o['type']), value: leaf(o['value']) };
}

/** Splits a chassis into its name (when re-keyed by it) and its body. */
function chassisOf(v: unknown): { name?: string; body?: Record<string, unknown> } {
  const o = obj(v);
  if (!o) return {};
  if ('id' in o || 'descr' in o || 'mgmt-ip' in o || 'capability' in o || 'name' in o) {
    return { name: leaf(o['name']), body: o };
  }
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] !== undefined) return { name: keys[0], body: obj(o[keys[0]]) };
  return { body: o };
}

function neighborFrom(localPort: string, body: Record<string, unknown>): LldpNeighbor {
  const { name, body: ch } = chassisOf(body['chassis']);
  const cid = ch ? idOf(ch['id']) : {};
  const port = obj(body['port']);
  const pid = port ? idOf(port['id']) : {};
  return compact({
    localPort,
    via: leaf(body['via']),
    chassisName: name,
    chassisMac: cid.type === 'mac' ? cid.value?.toLowerCase() : undefined,
    chassisId: cid.value,
    chassisIdType: cid.type,
    peerPortId: pid.value,
    peerPortIdType: pid.type,
    peerPortDescr: port ? leaf(port['descr']) : undefined,
    mgmtIps: ch ? leaves(ch['mgmt-ip']) : undefined,
  });
}

/** Interface entries as (local port, body) pairs from either json or json0 shapes. */
function interfaces(v: unknown): Array<[string, Record<string, unknown>]> {
  const out: Array<[string, Record<string, unknown>]> = [];
  const items = Array.isArray(v) ? v : v === undefined ? [] : [v];
  for (const item of items) {
    if (!isRecord(item)) continue;
    const named = leaf(item['name']);
    if (named !== undefined && ('chassis' in item || 'port' in item || 'via' in item)) {
      out.push([named, item]); // json0, or json with a name key left in place
      continue;
    }
    for (const [k, body] of Object.entries(item)) {
      if (isRecord(body)) out.push([k, body]);
      else if (Array.isArray(body)) for (const b of body) if (isRecord(b)) out.push([k, b]);
    }
  }
  return out;
}

export function parseLldpNeighbors(text: string): LldpFacts {
  return guard(
    () => {
      const cleaned = cleanText(text, { commands: ['lldpcli', 'lldpctl'] });
      const { value, error } = parseJsonLoose(cleaned);
      if (error !== undefined) return { neighbors: [], error };
      const root = obj(isRecord(value) ? value['lldp'] : undefined);
      if (!isRecord(value) || !('lldp' in value)) return { neighbors: [], error: 'no "lldp" object in output' };
      const neighbors = root ? interfaces(root['interface']).map(([p, b]) => neighborFrom(p, b)) : [];
      return validate(LldpFactsSchema, { neighbors });
    },
    () => ({ neighbors: [], error: 'unreadable lldpcli output' }),
  );
}

// ---- ip -6 -j neigh show dev <if> ----

export const IpNeighborSchema = z.object({
  dst: z.string(),
  /** Absent for FAILED/INCOMPLETE entries. */
  lladdr: z.string().optional(),
  /** Always a list in iproute2 JSON: `["REACHABLE"]`, `["STALE"]`, `["FAILED"]`. */
  state: z.array(z.string()),
  /** Only when the output covers several devices (no `dev` filter). */
  dev: z.string().optional(),
  router: z.boolean().optional(),
});
export type IpNeighbor = z.infer<typeof IpNeighborSchema>;

export const IpNeighFactsSchema = z.object({
  neighbors: z.array(IpNeighborSchema),
  error: z.string().optional(),
});
export type IpNeighFacts = z.infer<typeof IpNeighFactsSchema>;

export function parseIpNeigh(text: string): IpNeighFacts {
  return guard(
    () => {
      const cleaned = cleanText(text, { commands: ['ip', 'ping'] });
      const { value, error } = parseJsonLoose(cleaned);
      if (error !== undefined) return { neighbors: [], error };
      if (!Array.isArray(value)) return { neighbors: [], error: 'expected a JSON array of neighbours' };
      const neighbors: IpNeighbor[] = [];
      for (const n of value) {
        if (!isRecord(n)) continue;
        const dst = str(n['dst']);
        if (!dst) continue;
        const st = n['state'];
        const state = Array.isArray(st)
          ? st.filter((s): s is string => typeof s === 'string')
          : typeof st === 'string'
            ? [st]
            : [];
        const lladdr = str(n['lladdr']);
        neighbors.push(
          compact({
            dst,
            lladdr: lladdr?.toLowerCase(),
            state,
            dev: str(n['dev']),
            // iproute2 prints `"router": null` for a router entry.
            router: 'router' in n ? true : undefined,
          }),
        );
      }
      return validate(IpNeighFactsSchema, { neighbors });
    },
    () => ({ neighbors: [], error: 'unreadable ip neigh output' }),
  );
}
