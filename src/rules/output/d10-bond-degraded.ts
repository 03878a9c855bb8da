/**
 * D10 Bond degraded — high (docs/RULES.md §3). Reads `/proc/net/bonding/<bond>`: a slave `MII Status: down`;
 * `bond <b> has no active aggregator`; in 802.3ad a `Partner Mac Address: 00:00:00:00:00:00`; a slave
 * `Aggregator ID` other than the active one; `Number of ports` below the slaves that are up; `Churn State:
 * churned`; no `Slave Interface:` section; slaves at unequal `Speed:`. One finding per condition.
 */
import type { BondingFacts } from '../../parse/bonding.js';
import type { Finding } from '../types.js';

interface Hit {
  evidence: string;
  line?: number;
  what: string;
}

/** Line numbers of each slave block and of bond-level keys, from the text the facts came from. */
function locate(lines: readonly string[]): {
  slaveStart: Map<string, number>;
  find: (re: RegExp, from?: number, to?: number) => number;
} {
  const slaveStart = new Map<string, number>();
  lines.forEach((l, i) => {
    const m = /^\s*Slave Interface:\s*(\S+)/.exec(l);
    if (m && m[1] !== undefined && !slaveStart.has(m[1])) slaveStart.set(m[1], i);
  });
  const find = (re: RegExp, from = 0, to = lines.length): number => {
    for (let i = from; i < Math.min(to, lines.length); i++) if (re.test(lines[i] ?? '')) return i;
    return -1;
  };
  return { slaveStart, find };
}

export function d10BondDegraded(f: BondingFacts, lines: readonly string[]): Finding[] {
  const hits: Hit[] = [];
  const { slaveStart, find } = locate(lines);
  const bond = f.name ?? 'bond';
  const blockEnd = (name: string): number => {
    const start = slaveStart.get(name);
    if (start === undefined) return -1;
    const next = [...slaveStart.values()].filter((v) => v > start).sort((a, b) => a - b)[0];
    return next ?? lines.length;
  };
  const at = (i: number): { text: string; line?: number } =>
    i >= 0 ? { text: (lines[i] ?? '').trim(), line: i + 1 } : { text: '' };
  const is8023ad = f.mode === '802.3ad';

  for (const s of f.slaves) {
    if (s.mii === 'down') {
      const start = slaveStart.get(s.name) ?? -1;
      const i = start >= 0 ? find(/^\s*MII Status:\s*down/i, start, blockEnd(s.name)) : -1;
      hits.push({
        evidence: `Slave Interface: ${s.name} / ${at(i).text || 'MII Status: down'}`,
        line: at(i).line,
        what: `slave ${s.name} is down`,
      });
    }
  }
  if (f.noActiveAggregator) {
    const i = find(/has no active aggregator/);
    hits.push({
      evidence: at(i).text || `bond ${bond} has no active aggregator`,
      line: at(i).line,
      what: 'no active aggregator (LACP never formed)',
    });
  }
  if (is8023ad && f.activeAggregator?.partnerMac === '00:00:00:00:00:00') {
    const i = find(/^\s*Partner Mac Address:\s*00:00:00:00:00:00/i);
    hits.push({
      evidence: at(i).text || 'Partner Mac Address: 00:00:00:00:00:00',
      line: at(i).line,
      what: 'no LACP partner (the peer does not speak LACP)',
    });
  }
  const activeId = f.activeAggregator?.id;
  if (activeId !== undefined) {
    for (const s of f.slaves) {
      if (s.aggregatorId !== undefined && s.aggregatorId !== activeId) {
        const start = slaveStart.get(s.name) ?? -1;
        const i = start >= 0 ? find(/^\s*Aggregator ID:/, start, blockEnd(s.name)) : -1;
        hits.push({
          evidence: `Slave Interface: ${s.name} / ${at(i).text || `Aggregator ID: ${s.aggregatorId}`} ≠ active Aggregator ID: ${activeId}`,
          line: at(i).line,
          what: `slave ${s.name} is outside the active aggregator`,
        });
      }
    }
    const up = f.slaves.filter((s) => s.mii === 'up').length;
    const ports = f.activeAggregator?.ports;
    if (ports !== undefined && ports < up) {
      const i = find(/^\s*Number of ports:/);
      hits.push({
        evidence: `${at(i).text || `Number of ports: ${ports}`} < ${up} slaves up`,
        line: at(i).line,
        what: `only ${ports} of ${up} up slaves aggregate`,
      });
    }
  }
  const churned: string[] = [];
  let churnLine: number | undefined;
  for (const s of f.slaves) {
    for (const [who, state] of [
      ['Actor', s.actorChurnState],
      ['Partner', s.partnerChurnState],
    ] as const) {
      if (state !== 'churned') continue;
      const start = slaveStart.get(s.name) ?? -1;
      const i = start >= 0 ? find(new RegExp(`^\\s*${who} Churn State:\\s*churned`, 'i'), start, blockEnd(s.name)) : -1;
      churned.push(`${s.name}: ${at(i).text || `${who} Churn State: churned`}`);
      churnLine ??= at(i).line;
    }
  }
  if (churned.length)
    hits.push({ evidence: churned.join('; '), line: churnLine, what: 'LACP churned (negotiation failed)' });

  if (f.slaves.length === 0 && f.mode !== undefined) {
    // A bond without slaves prints its header and nothing after; a cut paste looks the same. So the last
    // non-blank line must be the last header line the driver prints for this mode, complete (a line end
    // follows it).
    let last = lines.length - 1;
    while (last >= 0 && (lines[last] ?? '').trim() === '') last--;
    const tail = is8023ad
      ? /^\s*(?:Aggregator selection policy \(ad_select\):\s*\S+|bond \S+ has no active aggregator|Partner Mac Address:\s*[0-9a-f]{2}(?::[0-9a-f]{2}){5})\s*$/i
      : /^\s*(?:(?:Peer Notification Delay|Down Delay) \(ms\):\s*\d+|ARP IP target\/s \(n\.n\.n\.n form\):.*\d|ARP Missed Max:\s*\d+)\s*$/;
    if (last >= 0 && last < lines.length - 1 && tail.test(lines[last] ?? '')) {
      const m = find(/^\s*Bonding Mode:/);
      hits.push({
        evidence: `${at(m).text} — no Slave Interface: section`,
        line: at(m).line,
        what: 'the bond has no slaves',
      });
    }
  }
  const speeds = new Map<number, string[]>();
  for (const s of f.slaves)
    if (s.speedMbps !== undefined) speeds.set(s.speedMbps, [...(speeds.get(s.speedMbps) ?? []), s.name]);
  if (speeds.size > 1) {
    const parts = [...speeds.entries()].map(([sp, names]) => `${names.join(', ')}: Speed: ${sp} Mbps`);
    hits.push({ evidence: parts.join('; '), what: 'slaves run at unequal speeds' });
  }

  const fix =
    `Make both ends identical: bond mode (${f.mode ?? 'mode'}${is8023ad ? ', LACP on the peer' : ''}), slaves and link settings; ` +
    `bring failed slaves up (\`ip link set dev <slave> up\`, check \`ethtool <slave>\` on both ends, D09); ` +
    `delete a stale bond (R23). For RDMA traffic prefer design A: no bond on RDMA ports, one /24 per cable (R16).`;
  return hits.map((h) => ({
    rule: 'D10',
    severity: 'high' as const,
    title: `Bond degraded: ${h.what}`,
    evidence: h.evidence,
    fix,
    ...(h.line !== undefined ? { line: h.line } : {}),
    source: 'bonding',
  }));
}
