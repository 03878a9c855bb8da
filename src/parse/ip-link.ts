/**
 * iproute2 text output: `ip [-d] [-s [-s]] link show`, `ip addr show`, and their one-line `-o` forms.
 *
 * A link starts with `<ifindex>: <name>[@<link>]: <FLAGS> mtu N … state X …`; detail lines follow indented:
 * `link/ether <mac> brd …`, `altname <n>`, with `-d` a kind line (`bond mode balance-xor miimon 100 …`,
 * `bond_slave state ACTIVE mii_status UP …`, `vlan protocol 802.1Q id 10 …`), with `-s` the counters
 * (`RX:  bytes packets errors dropped missed mcast` then a value row; `-s -s` adds `RX errors:` rows), with
 * `addr` the `inet`/`inet6` lines. `-o` joins a link's lines with a literal `\`. Wrapped (mailed) detail
 * lines that lost their indentation are joined to the link they follow. JSON (`ip -j`) is read by
 * ip-json.ts; the facts have the same `netdevs` shape.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';
import { NetdevSchema, type IpAddress } from './ip-json.js';

export const IpStatsSchema = z.record(z.string(), z.number());

export const IpLinkNetdevSchema = NetdevSchema.extend({
  qdisc: z.string().optional(),
  /** `-s`: `rx_bytes`, `rx_packets`, `rx_errors`, `rx_dropped`, `rx_missed`, `rx_mcast`, `rx_crc`, `tx_carrier`, … */
  stats: IpStatsSchema.optional(),
  // The text form prints more bond options than the JSON parser keeps: extend its bond shape.
  bond: NetdevSchema.shape.bond
    .unwrap()
    .extend({
      updelay: z.number().optional(),
      downdelay: z.number().optional(),
      arpInterval: z.number().optional(),
      minLinks: z.number().optional(),
      adSelect: z.string().optional(),
    })
    .optional(),
});
export type IpLinkNetdev = z.infer<typeof IpLinkNetdevSchema>;

export const IpLinkFactsSchema = z.object({ netdevs: z.array(IpLinkNetdevSchema) });
export type IpLinkFacts = z.infer<typeof IpLinkFactsSchema>;

const HEAD_RE = /^(\d+):\s+([^\s:@]+)(?:@([^\s:]+))?:\s+<([^>]*)>(.*)$/;
const ADDR_ONELINE_RE = /^(\d+):\s+([^\s:@]+)\s+(inet6?)\s+(\S+)(.*)$/;
const MAC = /^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$/i;

function kv(rest: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${key}\\s+(\\S+)`).exec(rest);
  return m?.[1];
}

function statsRow(header: string, values: string, prefix: string, stats: Record<string, number>): void {
  const names = header
    .replace(/^[A-Z]+(?: errors)?:\s*/, '')
    .trim()
    .split(/\s+/);
  const vals = values.trim().split(/\s+/);
  names.forEach((n, i) => {
    const v = vals[i];
    if (v === undefined || !/^\d+$/.test(v)) return;
    const num = Number(v);
    if (Number.isSafeInteger(num)) stats[`${prefix}_${n.toLowerCase()}`] = num;
  });
}

export function parseIpLink(text: string): IpLinkFacts {
  return guard(
    () => {
      const netdevs: IpLinkNetdev[] = [];
      const byName = new Map<string, IpLinkNetdev>();
      let cur: IpLinkNetdev | undefined;
      let detail: string[] = [];
      let pendingStats: { header: string; prefix: string } | undefined;
      const flush = (): void => {
        if (!cur) return;
        const d = detail.join(' ');
        const bondAt = d.search(/(?:^|\s)bond mode\s/);
        if (bondAt >= 0) {
          const b = d.slice(bondAt);
          const num = (k: string): number | undefined => toInt(kv(b, k));
          cur.linkKind = 'bond';
          cur.bond = compact({
            mode: kv(b, 'mode'),
            miimon: num('miimon'),
            xmitHashPolicy: kv(b, 'xmit_hash_policy'),
            lacpRate: kv(b, 'lacp_rate') ?? kv(b, 'ad_lacp_rate'),
            updelay: num('updelay'),
            downdelay: num('downdelay'),
            arpInterval: num('arp_interval'),
            minLinks: num('min_links'),
            adSelect: kv(b, 'ad_select'),
          });
        }
        const slave = /(?:^|\s)bond_slave\s+state\s+(\S+)\s+mii_status\s+(\S+)/.exec(d);
        if (slave) {
          cur.slaveKind = 'bond';
          cur.linkKind ??= 'bond_slave';
          cur.slaveState = slave[1];
          cur.slaveMiiStatus = slave[2];
          const perm = kv(d, 'perm_hwaddr');
          if (perm && MAC.test(perm)) cur.permMac = perm.toLowerCase();
        } else {
          const k =
            /(?:^|\s)(vlan|bridge|macvlan|vxlan|veth|dummy|team|ipip|gre|wireguard|tun|bridge_slave)\s+(?:protocol|id|mode|forward_delay|type|\S+\s)/.exec(
              d,
            );
          if (k && !cur.linkKind) cur.linkKind = k[1];
        }
        const alt = [...d.matchAll(/(?:^|\s)altname\s+(\S+)/g)].map((m) => m[1] ?? '').filter((s) => s !== '');
        if (alt.length) cur.altnames = alt;
        const pd = kv(d, 'parentdev');
        if (pd) cur.parentdev = pd;
        const pb = kv(d, 'parentbus');
        if (pb) cur.parentbus = pb;
        detail = [];
      };
      const addAddress = (n: IpLinkNetdev, family: string, cidr: string, rest: string): void => {
        const m = /^([0-9a-fA-F:.]+)(?:\/(\d+))?$/.exec(cidr);
        if (!m || m[1] === undefined) return;
        const a: IpAddress = compact({
          family: family === 'inet6' ? 'inet6' : 'inet',
          local: m[1],
          prefixlen: toInt(m[2]),
          scope: kv(rest, 'scope'),
          dynamic: /(?:^|\s)dynamic(?:\s|$)/.test(rest) ? true : undefined,
          tentative: /(?:^|\s)tentative(?:\s|$)/.test(rest) ? true : undefined,
          dadfailed: /(?:^|\s)dadfailed(?:\s|$)/.test(rest) ? true : undefined,
        });
        (n.addresses ??= []).push(a);
      };
      for (const raw of rdmaLines(text, { commands: ['ip'] })) {
        // `ip -o` joins a link's lines with a literal backslash.
        const parts = raw.split(/\\\s+/);
        for (const line of parts) {
          const t = line.trim();
          if (t === '') continue;
          const h = HEAD_RE.exec(t);
          if (h && h[2] !== undefined) {
            flush();
            const name = h[2];
            const rest = h[5] ?? '';
            const existing = byName.get(name);
            const n: IpLinkNetdev = existing ?? { ifname: name };
            n.ifindex ??= toInt(h[1]);
            n.flags = (h[4] ?? '').split(',').filter((f) => f !== '');
            const mtu = toInt(kv(rest, 'mtu'));
            if (mtu !== undefined) n.mtu = mtu;
            const state = kv(rest, 'state');
            if (state) n.operstate = state;
            const qdisc = kv(rest, 'qdisc');
            if (qdisc) n.qdisc = qdisc;
            const master = kv(rest, 'master');
            if (master) n.master = master;
            if (h[3] !== undefined && h[3] !== 'NONE') n.link = h[3];
            if (!existing) {
              netdevs.push(n);
              byName.set(name, n);
            }
            cur = n;
            pendingStats = undefined;
            continue;
          }
          const a1 = ADDR_ONELINE_RE.exec(t);
          if (a1 && a1[2] !== undefined && a1[3] !== undefined && a1[4] !== undefined) {
            flush();
            const name = a1[2];
            let n = byName.get(name);
            if (!n) {
              n = { ifname: name, ifindex: toInt(a1[1]) };
              netdevs.push(n);
              byName.set(name, n);
            }
            addAddress(n, a1[3], a1[4], a1[5] ?? '');
            cur = n;
            continue;
          }
          if (!cur) continue;
          if (pendingStats) {
            if (/^[\d\s]+$/.test(t)) {
              cur.stats ??= {};
              statsRow(pendingStats.header, t, pendingStats.prefix, cur.stats);
              pendingStats = undefined;
              continue;
            }
            pendingStats = undefined;
          }
          const st = /^(RX|TX)(?:\s+(errors))?:\s+[a-z]/.exec(t);
          if (st && st[1] !== undefined) {
            pendingStats = { header: t, prefix: st[1].toLowerCase() };
            continue;
          }
          const l = /^link\/(\S+)(?:\s+(\S+))?/.exec(t);
          if (l && l[1] !== undefined) {
            cur.linkType = l[1];
            if (l[2] && MAC.test(l[2])) cur.mac = l[2].toLowerCase();
            detail.push(t.slice(l[0].length));
            continue;
          }
          const inet = /^(inet6?)\s+(\S+)(.*)$/.exec(t);
          if (inet && inet[1] !== undefined && inet[2] !== undefined) {
            addAddress(cur, inet[1], inet[2], inet[3] ?? '');
            continue;
          }
          if (/^valid_lft\b/.test(t)) continue;
          detail.push(t);
        }
      }
      flush();
      return validate(IpLinkFactsSchema, { netdevs: netdevs.map((n) => compact(n)) });
    },
    () => ({ netdevs: [] }),
  );
}
