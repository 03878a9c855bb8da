/**
 * D12 Pause storm or drops — medium (docs/RULES.md §3). Reads `ethtool -S` and `show_counters` (and the sysfs
 * hw_counters files): non-zero `tx_pause_storm_warning_events`, `tx_pause_storm_error_events`,
 * `rx_discards_phy`, `rx_out_of_buffer`, `out_of_buffer`, `rx_prio<n>_discards`, or `tx_global_pause`
 * (PFC is intended on the RoCE ports). One snapshot has no baseline: the counts may be historical.
 */
import type { Finding } from '../types.js';

const DROP_NAMES =
  /^(?:tx_pause_storm_warning_events|tx_pause_storm_error_events|rx_discards_phy|rx_out_of_buffer|out_of_buffer|rx_prio[0-7]_discards|tx_global_pause)$/;

/** The counters D12 reads that are non-zero, name → value (names trimmed). */
export function d12Triggers(counters: Record<string, number>): Array<[string, number]> {
  return Object.entries(counters)
    .map(([k, v]) => [k.trim(), v] as [string, number])
    .filter(([k, v]) => DROP_NAMES.test(k) && v > 0);
}

export function d12PauseDrops(input: {
  counters: Record<string, number>;
  lines: readonly string[];
  where?: string;
  netdev?: string;
  kind: string;
}): Finding | undefined {
  const hits = d12Triggers(input.counters);
  if (hits.length === 0) return undefined;
  const ev: string[] = [];
  let line: number | undefined;
  for (const [name, value] of hits) {
    const re = new RegExp(`(?:^|[\\s/])${name}\\s*:\\s*${value}\\s*$`);
    const i = input.lines.findIndex((l) => re.test(l));
    ev.push(i >= 0 ? (input.lines[i] ?? '').trim() : `${name}: ${value}`);
    if (i >= 0 && (line === undefined || i + 1 < line)) line = i + 1;
  }
  const names = hits.map(([n]) => n);
  const causes: string[] = [];
  if (names.some((n) => n.startsWith('tx_pause_storm')))
    causes.push('a pause storm: a stuck receiver or PFC on all priorities (R26)');
  if (names.some((n) => /discards|^rx_out_of_buffer$/.test(n)))
    causes.push('no PFC, so overload turns into drops (D11), or a receiver that cannot drain (PCIe/ACS: R38, R36)');
  if (names.includes('out_of_buffer')) causes.push('RQ starvation (out_of_buffer; benign at low rates)');
  if (names.includes('tx_global_pause'))
    causes.push('802.3x global pause in use instead of PFC on the RoCE priority (D11)');
  const dev = input.netdev ?? input.where ?? '<if>';
  return {
    rule: 'D12',
    severity: 'medium',
    title: 'Pause storm or drops',
    evidence: `${input.where ? `${input.where}: ` : ''}${ev.join('; ')} (one snapshot, no baseline: may be historical)`,
    fix:
      `Likely: ${causes.join('; ')}. Take \`ethtool -S ${dev}\` (and \`show_counters\`) before and after an \`ib_write_bw\` run (R29): ` +
      `counters that grow during the run are live; unchanged ones are history. Then fix PFC/trust (D11).`,
    ...(line !== undefined ? { line } : {}),
    source: input.kind,
  };
}
