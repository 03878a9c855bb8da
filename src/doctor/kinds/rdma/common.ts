/**
 * Shared helpers of the RDMA-family doctor kinds: detector scoring, line lookups, and what the same
 * pasted text says about netdevs, port states and link rates (ibstat/ibstatus/ibv_devinfo/rdma link/ibdev2netdev).
 */
import { parseEthtool } from '../../../parse/ethtool.js';
import { parseIbdev2netdev } from '../../../parse/ibdev2netdev.js';
import { parseIbstat } from '../../../parse/ibstat.js';
import { parseIbstatus } from '../../../parse/ibstatus.js';
import { parseIbvDevinfo } from '../../../parse/ibv-devinfo.js';
import { parseRdmaLink } from '../../../parse/rdma-link.js';
import { countMatches, firstMatch, scoreAt } from '../../../parse/rdma-util.js';
import { isActiveState } from '../../../rules/output/d08-port-not-active.js';

/** A confidence from a regex: `strength` when it matches at least `min` times, placed by the first match. */
export function by(text: string, re: RegExp, strength: number, min = 1): number {
  if (min > 1 && countMatches(text, re, min) < min) return 0;
  return scoreAt(strength, firstMatch(text, re), text.length);
}

/** Non-empty lines, capped (detectors only need the head's shape). */
export function nonEmptyCount(text: string, cap = 5000): number {
  return countMatches(text, /^[ \t]*\S/gm, cap);
}

export const lineNo = (i: number): number | undefined => (i >= 0 ? i + 1 : undefined);

/** Index of the first line at/after `from` (before `to`) matching `re`. */
export function idx(lines: readonly string[], re: RegExp, from = 0, to = lines.length): number {
  for (let i = Math.max(0, from); i < Math.min(to, lines.length); i++) if (re.test(lines[i] ?? '')) return i;
  return -1;
}

/** Device/port → netdev, from ibdev2netdev or rdma link lines anywhere in the text. */
export function netdevsInText(text: string): Map<string, string> {
  const map = new Map<string, string>();
  if (text.includes('==>'))
    for (const l of parseIbdev2netdev(text).links) if (l.netdev) map.set(`${l.device}/${l.port}`, l.netdev);
  if (/\bnetdev\s+\S/.test(text))
    for (const p of parseRdmaLink(boundBlanks(text)).ports) if (p.netdev) map.set(`${p.device}/${p.port}`, p.netdev);
  return map;
}

interface PortState {
  active?: boolean;
  ethernet?: boolean;
  evidence: string;
  rateGbps?: number;
}

/** What the same text says about each device/port's state, link layer and rate (for D19, D20). */
export function portStatesInText(text: string): Map<string, PortState> {
  const map = new Map<string, PortState>();
  const put = (key: string, s: PortState): void => {
    const prev = map.get(key);
    map.set(key, {
      evidence: prev?.evidence ?? s.evidence,
      active: s.active ?? prev?.active,
      ethernet: s.ethernet ?? prev?.ethernet,
      rateGbps: s.rateGbps ?? prev?.rateGbps,
    });
  };
  const ll = (l: string | undefined): boolean | undefined => (l === undefined ? undefined : /^ethernet$/i.test(l));
  if (/^\s*CA:? '/m.test(text))
    for (const p of parseIbstat(text).ports)
      put(`${p.device}/${p.port}`, {
        active: isActiveState(p.state),
        ethernet: ll(p.linkLayer),
        rateGbps: p.rateGbps,
        evidence: `ibstat State: ${p.state ?? '?'}`,
      });
  if (/Infiniband device '/.test(text))
    for (const p of parseIbstatus(text).ports)
      put(`${p.device}/${p.port}`, {
        active: isActiveState(p.state),
        ethernet: ll(p.linkLayer),
        rateGbps: p.rateGbps,
        evidence: `ibstatus state: ${p.state ?? '?'}`,
      });
  if (/^\s*hca_id:/m.test(text))
    for (const p of parseIbvDevinfo(text).ports)
      if (p.device)
        put(`${p.device}/${p.port}`, {
          active: isActiveState(p.state),
          ethernet: ll(p.linkLayer),
          evidence: `ibv_devinfo state: ${p.state ?? '?'}`,
        });
  if (/\bstate\s+[A-Z_]+\s+physical_state/.test(text))
    for (const p of parseRdmaLink(boundBlanks(text)).ports)
      put(`${p.device}/${p.port}`, { active: isActiveState(p.state), evidence: `rdma link state ${p.state ?? '?'}` });
  if (text.includes('==>'))
    for (const l of parseIbdev2netdev(text).links)
      if (l.portState)
        put(`${l.device}/${l.port}`, {
          active: isActiveState(l.portState),
          evidence: `ibdev2netdev -v (${l.portState})`,
        });
  return map;
}

/** Link speed of a device's port (Gb/s) stated in the same text: ibstat/ibstatus `Rate:` or ethtool `Speed:`. */
export function lineRateInText(text: string, device: string | undefined): number | undefined {
  const states = portStatesInText(text);
  if (device) {
    for (const [k, s] of states)
      if (k.startsWith(`${device}/`) && s.active !== false && s.rateGbps !== undefined) return s.rateGbps;
  }
  if (/^\s*Settings for \S+:/m.test(text)) {
    const e = parseEthtool(boundBlanks(text));
    if (e.speedMbps !== undefined && e.linkDetected !== false) return e.speedMbps / 1000;
  }
  if (!device) {
    const rates = [...states.values()]
      .filter((s) => s.active === true && s.rateGbps !== undefined)
      .map((s) => s.rateGbps!);
    if (rates.length > 0 && rates.every((r) => r === rates[0])) return rates[0];
  }
  return undefined;
}

export function uniq<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

export function countBy<T>(xs: readonly T[], f: (x: T) => string | undefined): string {
  const m = new Map<string, number>();
  for (const x of xs) {
    const k = f(x);
    if (k !== undefined) m.set(k, (m.get(k) ?? 0) + 1);
  }
  return [...m.entries()].map(([k, n]) => `${n} ${k}`).join(', ');
}

/**
 * Bounds runs of blanks before handing text to the shared parsers whose `cleanLines` trims with `/\s+$/`
 * (quadratic on a long blank run inside a line). Real outputs pad with at most a few dozen blanks.
 */
export function boundBlanks(text: string): string {
  return text.replace(/[ \t]{256,}/g, (m) => m.slice(0, 255));
}

export const fmtGbps = (n: number | undefined): string => (n === undefined ? '?' : `${Math.round(n * 100) / 100} Gb/s`);
export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function nextIdx(lines: readonly string[], re: RegExp, from: number): number {
  const i = idx(lines, re, from);
  return i >= 0 ? i : lines.length;
}
