/**
 * `/proc/net/bonding/<bond>` (Linux bonding driver, `bond_procfs.c`).
 *
 * Header: `Ethernet Channel Bonding Driver: v…`, `Bonding Mode: <long name>` (mapped to the short names
 * `balance-rr`, `active-backup`, `balance-xor`, `broadcast`, `802.3ad`, `balance-tlb`, `balance-alb`),
 * `Transmit Hash Policy: layer3+4 (1)`, `MII Status`, `MII Polling Interval (ms)`, ARP monitoring lines;
 * 802.3ad adds `LACP rate`, `Active Aggregator Info:` (root only) or `bond <b> has no active aggregator`.
 * Then one `Slave Interface: <if>` block per slave (`MII Status`, `Speed: 25000 Mbps|Unknown`,
 * `Aggregator ID`, churn states, root-only `details actor/partner lacp pdu` sub-blocks). Blank lines are
 * irregular in pastes; blocks are found by their keys, not by spacing.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const BondSlaveSchema = z.object({
  name: z.string(),
  /** `up` / `down` (as printed, lower case). */
  mii: z.string().optional(),
  speedMbps: z.number().int().optional(),
  duplex: z.string().optional(),
  linkFailures: z.number().int().optional(),
  permanentMac: z.string().optional(),
  /** Omitted for `N/A`. */
  aggregatorId: z.number().int().optional(),
  actorChurnState: z.string().optional(),
  partnerChurnState: z.string().optional(),
  /** `details partner lacp pdu` → `system mac address` (root only). */
  partnerMac: z.string().optional(),
});
export type BondSlave = z.infer<typeof BondSlaveSchema>;

export const BondingFactsSchema = z.object({
  /** From `bond <name> has no active aggregator` or the pasted command line. */
  name: z.string().optional(),
  driverVersion: z.string().optional(),
  /** The kernel's short name: `802.3ad`, `balance-xor`, `active-backup`, `balance-rr`, … */
  mode: z.string().optional(),
  /** As printed: `IEEE 802.3ad Dynamic link aggregation`. */
  modeText: z.string().optional(),
  /** `layer3+4`, `layer2`, `layer2+3`, `encap3+4`, `vlan+srcmac`, … */
  hashPolicy: z.string().optional(),
  /** The bond's own MII status. */
  mii: z.string().optional(),
  miimonMs: z.number().int().optional(),
  upDelayMs: z.number().int().optional(),
  downDelayMs: z.number().int().optional(),
  arpIntervalMs: z.number().int().optional(),
  arpTargets: z.array(z.string()).optional(),
  primarySlave: z.string().optional(),
  activeSlave: z.string().optional(),
  /** `slow` / `fast`. */
  lacpRate: z.string().optional(),
  lacpActive: z.string().optional(),
  minLinks: z.number().int().optional(),
  adSelect: z.string().optional(),
  activeAggregator: z
    .object({
      id: z.number().int().optional(),
      ports: z.number().int().optional(),
      actorKey: z.number().int().optional(),
      partnerKey: z.number().int().optional(),
      partnerMac: z.string().optional(),
    })
    .optional(),
  /** `bond <b> has no active aggregator`. */
  noActiveAggregator: z.boolean().optional(),
  slaves: z.array(BondSlaveSchema),
});
export type BondingFacts = z.infer<typeof BondingFactsSchema>;

const MODES: Array<[RegExp, string]> = [
  [/round-robin/i, 'balance-rr'],
  [/active-backup/i, 'active-backup'],
  [/\(xor\)/i, 'balance-xor'],
  [/broadcast/i, 'broadcast'],
  [/802\.3ad/i, '802.3ad'],
  [/transmit load balancing/i, 'balance-tlb'],
  [/adaptive load balancing/i, 'balance-alb'],
];

const KV = /^\s*([A-Za-z][^:]*):\s*(.*)$/;

export function parseBonding(text: string): BondingFacts {
  return guard(
    () => {
      const out: BondingFacts = { slaves: [] };
      let slave: BondSlave | undefined;
      let section: 'bond' | 'agg' | 'actor' | 'partner' = 'bond';
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        const cmd = /\/proc\/net\/bonding\/([\w.@-]+)/.exec(t);
        if (cmd && cmd[1] !== undefined && !/:\s/.test(t.slice(0, 4))) {
          out.name ??= cmd[1];
          continue;
        }
        const noagg = /^bond\s+(\S+)\s+has no active aggregator/.exec(t);
        if (noagg) {
          out.noActiveAggregator = true;
          out.name ??= noagg[1];
          continue;
        }
        if (/^802\.3ad info$/i.test(t)) {
          section = 'bond';
          continue;
        }
        if (/^Active Aggregator Info:?$/i.test(t)) {
          out.activeAggregator = {};
          section = 'agg';
          continue;
        }
        if (/^details actor lacp pdu:?$/i.test(t)) {
          section = 'actor';
          continue;
        }
        if (/^details partner lacp pdu:?$/i.test(t)) {
          section = 'partner';
          continue;
        }
        const m = KV.exec(line);
        if (!m || m[1] === undefined) continue;
        const key = m[1].trim();
        const value = (m[2] ?? '').trim();
        if (key === 'Slave Interface') {
          if (value === '') continue;
          slave = { name: value };
          out.slaves.push(slave);
          section = 'bond';
          continue;
        }
        if (key === 'Ethernet Channel Bonding Driver') {
          out.driverVersion = value || undefined;
          continue;
        }
        if (section === 'actor') continue;
        if (section === 'partner') {
          if (slave && /^system mac address$/i.test(key) && /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(value))
            slave.partnerMac = value.toLowerCase();
          continue;
        }
        if (section === 'agg' && out.activeAggregator && !slave) {
          const agg = out.activeAggregator;
          switch (key) {
            case 'Aggregator ID':
              agg.id = toInt(value);
              continue;
            case 'Number of ports':
              agg.ports = toInt(value);
              continue;
            case 'Actor Key':
              agg.actorKey = toInt(value);
              continue;
            case 'Partner Key':
              agg.partnerKey = toInt(value);
              continue;
            case 'Partner Mac Address':
              if (/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(value)) agg.partnerMac = value.toLowerCase();
              section = 'bond';
              continue;
            default:
              section = 'bond';
          }
        }
        if (slave) {
          switch (key) {
            case 'MII Status':
              if (/^(up|down|going back|going down)$/i.test(value)) slave.mii = value.toLowerCase();
              break;
            case 'Speed': {
              const s = /^(\d+)\s*Mbps$/i.exec(value);
              if (s) slave.speedMbps = toInt(s[1]);
              break;
            }
            case 'Duplex':
              slave.duplex = value.toLowerCase();
              break;
            case 'Link Failure Count':
              slave.linkFailures = toInt(value);
              break;
            case 'Permanent HW addr':
              if (/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(value)) slave.permanentMac = value.toLowerCase();
              break;
            case 'Aggregator ID':
              slave.aggregatorId = toInt(value);
              break;
            case 'Actor Churn State':
              slave.actorChurnState = value || undefined;
              break;
            case 'Partner Churn State':
              slave.partnerChurnState = value || undefined;
              break;
            default:
              break;
          }
          continue;
        }
        switch (key) {
          case 'Bonding Mode': {
            out.modeText = value;
            out.mode = MODES.find(([re]) => re.test(value))?.[1];
            break;
          }
          case 'Transmit Hash Policy': {
            const h = /^(\S+)/.exec(value);
            if (h && /\(\d+\)$/.test(value)) out.hashPolicy = h[1];
            break;
          }
          case 'MII Status':
            if (/^(up|down)$/i.test(value)) out.mii = value.toLowerCase();
            break;
          case 'MII Polling Interval (ms)':
            out.miimonMs = toInt(value);
            break;
          case 'Up Delay (ms)':
            out.upDelayMs = toInt(value);
            break;
          case 'Down Delay (ms)':
            out.downDelayMs = toInt(value);
            break;
          case 'ARP Polling Interval (ms)':
            out.arpIntervalMs = toInt(value);
            break;
          case 'ARP IP target/s (n.n.n.n form)':
            out.arpTargets = value.split(/[\s,]+/).filter((s) => s !== '');
            break;
          case 'Primary Slave':
            {
              const p = value.replace(/\s*\(.*\)\s*$/, '');
              out.primarySlave = p === '' || p === 'None' ? undefined : p;
            }
            break;
          case 'Currently Active Slave':
            out.activeSlave = value || undefined;
            break;
          case 'LACP rate':
            if (/^(slow|fast)$/i.test(value)) out.lacpRate = value.toLowerCase();
            break;
          case 'LACP active':
            out.lacpActive = value || undefined;
            break;
          case 'Min links':
            out.minLinks = toInt(value);
            break;
          case 'Aggregator selection policy (ad_select)':
            out.adSelect = value || undefined;
            break;
          default:
            break;
        }
      }
      if (out.activeAggregator) out.activeAggregator = compact(out.activeAggregator);
      out.slaves = out.slaves.map((s) => compact(s));
      return validate(BondingFactsSchema, compact(out));
    },
    () => ({ slaves: [] }),
  );
}
