/**
 * iproute2 JSON: `ip -j [-d] link show`, `ip -j [-d] addr show` (arrays of interfaces) and
 * `ip -j route show default` (array of routes). Keys are iproute2's (`ifname`, `operstate`,
 * `address`, `master`, `linkinfo.info_kind`, `linkinfo.info_slave_kind`, `addr_info[]`).
 * Bond slaves carry the bond's MAC in `address`; their own MAC is `info_slave_data.perm_hwaddr`
 * (with `-d`), kept as `permMac`.
 */
import { z } from 'zod';
import { cleanText, compact, guard, isRecord, num, parseJsonLoose, str, validate } from './common.js';

export const IpAddressSchema = z.object({
  family: z.string(),
  local: z.string(),
  prefixlen: z.number().int().optional(),
  scope: z.string().optional(),
  label: z.string().optional(),
  dynamic: z.boolean().optional(),
  /** IPv6 duplicate address detection still running / failed. */
  tentative: z.boolean().optional(),
  dadfailed: z.boolean().optional(),
});
export type IpAddress = z.infer<typeof IpAddressSchema>;

export const NetdevSchema = z.object({
  ifname: z.string(),
  ifindex: z.number().int().optional(),
  mtu: z.number().int().optional(),
  operstate: z.string().optional(),
  flags: z.array(z.string()).optional(),
  /** `address` when it is a hardware address (not for tunnels, whose `address` is an IP). */
  mac: z.string().optional(),
  linkType: z.string().optional(),
  master: z.string().optional(),
  /**
   * `linkinfo.info_kind` (`bond`, `vlan`, `bridge`, …); for a plain member, iproute2's text name of
   * its slave kind (`bond_slave`), so every bond-related device is recognisable from one field.
   */
  linkKind: z.string().optional(),
  /** `linkinfo.info_slave_kind`: `bond` for a bond member. */
  slaveKind: z.string().optional(),
  /** Bond member's own MAC (`perm_hwaddr`), `-d` only. */
  permMac: z.string().optional(),
  /** Bond member state from `-d`: `ACTIVE`/`BACKUP`, MII `UP`/`DOWN`. */
  slaveState: z.string().optional(),
  slaveMiiStatus: z.string().optional(),
  bond: z
    .object({
      mode: z.string().optional(),
      miimon: z.number().optional(),
      xmitHashPolicy: z.string().optional(),
      lacpRate: z.string().optional(),
    })
    .optional(),
  /** `link` for stacked devices (vlan on bond0). */
  link: z.string().optional(),
  altnames: z.array(z.string()).optional(),
  /** `-d`: `pci` and the device's BDF. */
  parentbus: z.string().optional(),
  parentdev: z.string().optional(),
  /** Present only when the output carried `addr_info` (ip addr), in kernel order. */
  addresses: z.array(IpAddressSchema).optional(),
});
export type Netdev = z.infer<typeof NetdevSchema>;

export const IpJsonFactsSchema = z.object({
  netdevs: z.array(NetdevSchema),
  /** Empty output, no JSON, or invalid JSON. */
  error: z.string().optional(),
  /** The JSON was cut or followed by junk; what parsed is reported. */
  partial: z.boolean().optional(),
});
export type IpJsonFacts = z.infer<typeof IpJsonFactsSchema>;

const MAC_RE = /^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5,19}$/;

function strArray(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

function parseAddress(a: unknown): IpAddress | undefined {
  if (!isRecord(a)) return undefined;
  const family = str(a['family']);
  const local = str(a['local']);
  if (!family || !local) return undefined;
  return compact({
    family,
    local,
    prefixlen: num(a['prefixlen']),
    scope: str(a['scope']),
    label: str(a['label']),
    dynamic: a['dynamic'] === true ? true : undefined,
    tentative: a['tentative'] === true ? true : undefined,
    dadfailed: a['dadfailed'] === true ? true : undefined,
  });
}

function parseNetdev(o: unknown): Netdev | undefined {
  if (!isRecord(o)) return undefined;
  const ifname = str(o['ifname']);
  if (!ifname) return undefined;
  const li = isRecord(o['linkinfo']) ? o['linkinfo'] : undefined;
  const slave = li && isRecord(li['info_slave_data']) ? li['info_slave_data'] : undefined;
  const data = li && isRecord(li['info_data']) ? li['info_data'] : undefined;
  const slaveKind = li ? str(li['info_slave_kind']) : undefined;
  const linkKind = (li ? str(li['info_kind']) : undefined) ?? (slaveKind ? `${slaveKind}_slave` : undefined);
  const address = str(o['address']);
  const addrInfo = o['addr_info'];
  const permMac = slave ? str(slave['perm_hwaddr']) : undefined;
  return compact({
    ifname,
    ifindex: num(o['ifindex']),
    mtu: num(o['mtu']),
    operstate: str(o['operstate']),
    flags: strArray(o['flags']),
    mac: address && MAC_RE.test(address) ? address.toLowerCase() : undefined,
    linkType: str(o['link_type']),
    master: str(o['master']),
    linkKind,
    slaveKind,
    permMac: permMac ? permMac.toLowerCase() : undefined,
    slaveState: slave ? str(slave['state']) : undefined,
    slaveMiiStatus: slave ? str(slave['mii_status']) : undefined,
    bond:
      linkKind === 'bond' && data
        ? compact({
            mode: str(data['mode']),
            miimon: num(data['miimon']),
            xmitHashPolicy: str(data['xmit_hash_policy']),
            lacpRate: str(data['ad_lacp_rate']) || undefined,
          })
        : undefined,
    link: str(o['link']),
    altnames: strArray(o['altnames']),
    parentbus: str(o['parentbus']),
    parentdev: str(o['parentdev']),
    addresses: Array.isArray(addrInfo)
      ? addrInfo.map(parseAddress).filter((a): a is IpAddress => a !== undefined)
      : undefined,
  });
}

/** Parses `ip -j [-d] link show` or `ip -j [-d] addr show`. */
export function parseIpJson(text: string): IpJsonFacts {
  return guard(
    () => {
      const cleaned = cleanText(text, { commands: ['ip'] });
      const { value, error, partial } = parseJsonLoose(cleaned);
      if (error !== undefined) return { netdevs: [], error };
      if (!Array.isArray(value)) return { netdevs: [], error: 'expected a JSON array of interfaces' };
      const netdevs = value.map(parseNetdev).filter((n): n is Netdev => n !== undefined);
      return validate(IpJsonFactsSchema, compact({ netdevs, partial: partial ? true : undefined }));
    },
    () => ({ netdevs: [], error: 'unreadable ip output' }),
  );
}

/**
 * Joins `ip -j -d link show` and `ip -j addr show` results by interface name: link fields from the
 * first, addresses from the second (kernel order kept).
 */
export function mergeIpJson(link: IpJsonFacts, addr: IpJsonFacts): IpJsonFacts {
  const byName = new Map(addr.netdevs.map((n) => [n.ifname, n] as const));
  const netdevs = link.netdevs.map((n) => {
    const a = byName.get(n.ifname);
    return a?.addresses ? { ...n, addresses: a.addresses } : n;
  });
  for (const a of addr.netdevs) if (!link.netdevs.some((n) => n.ifname === a.ifname)) netdevs.push(a);
  const error = link.error ?? addr.error;
  return compact({ netdevs, error, partial: link.partial || addr.partial ? true : undefined });
}

// ---- routes ----

export const IpRouteSchema = z.object({
  dst: z.string(),
  gateway: z.string().optional(),
  dev: z.string().optional(),
  protocol: z.string().optional(),
  metric: z.number().optional(),
  prefsrc: z.string().optional(),
});
export type IpRoute = z.infer<typeof IpRouteSchema>;

export const IpRouteFactsSchema = z.object({
  routes: z.array(IpRouteSchema),
  /** Of the first default route (the kernel lists the preferred, lowest metric, first). */
  gateway: z.string().optional(),
  dev: z.string().optional(),
  error: z.string().optional(),
});
export type IpRouteFacts = z.infer<typeof IpRouteFactsSchema>;

/** Parses `ip -j route show [default]`. */
export function parseIpRoute(text: string): IpRouteFacts {
  return guard(
    () => {
      const cleaned = cleanText(text, { commands: ['ip'] });
      const { value, error } = parseJsonLoose(cleaned);
      if (error !== undefined) return { routes: [], error };
      if (!Array.isArray(value)) return { routes: [], error: 'expected a JSON array of routes' };
      const routes: IpRoute[] = [];
      for (const r of value) {
        if (!isRecord(r)) continue;
        const dst = str(r['dst']);
        if (!dst) continue;
        routes.push(
          compact({
            dst,
            gateway: str(r['gateway']),
            dev: str(r['dev']),
            protocol: str(r['protocol']),
            metric: num(r['metric']),
            prefsrc: str(r['prefsrc']),
          }),
        );
      }
      const def = routes.find((r) => r.dst === 'default' || r.dst === '0.0.0.0/0' || r.dst === '::/0');
      return validate(IpRouteFactsSchema, compact({ routes, gateway: def?.gateway, dev: def?.dev }));
    },
    () => ({ routes: [], error: 'unreadable ip route output' }),
  );
}
