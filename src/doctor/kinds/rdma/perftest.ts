/**
 * perftest (`ib_write_bw`, `ib_read_lat`, …) as a doctor kind: D20 bandwidth against the line rate stated
 * in the same text.
 */
import type { KindDef } from '../../types.js';
import { parsePerftest, type PerftestFacts } from '../../../parse/perftest.js';
import { firstMatch, scoreAt, textLines } from '../../../parse/rdma-util.js';
import { d20Bandwidth } from '../../../rules/output/d20-bandwidth.js';
import { by, fmtGbps, idx, lineRateInText } from './common.js';

// ---------------------------------------------------------------------------------------------------------
// perftest

export const perftest: KindDef<PerftestFacts> = {
  kind: 'perftest',
  detect(text) {
    const title = firstMatch(
      text,
      /^[ \t]*(?:RDMA_Write|RDMA_Read|Send|Atomic\w*|Raw Ethernet)(?: Post List)? (?:BW|Latency) Test[ \t]*$/m,
    );
    const table = /^[ \t]*#bytes[ \t]+#iterations/m.test(text);
    const labels = /^[ \t]*(?:Dual-port|Number of qps|Connection type|Link type)[ \t]*:/m.test(text);
    if (title >= 0) return scoreAt(table || labels ? 0.97 : 0.8, title, text.length);
    if (table && labels) return by(text, /^[ \t]*(?:Dual-port|Number of qps)[ \t]*:/m, 0.85);
    if (table) return by(text, /^[ \t]*#bytes[ \t]+#iterations/m, 0.7);
    return 0;
  },
  parse: parsePerftest,
  findings(f, text) {
    if (f.metric === 'lat' || f.results.length === 0) return [];
    const largest = [...f.results].filter((r) => r.bwAvgGbps !== undefined).sort((a, b) => b.bytes - a.bytes)[0];
    if (!largest || largest.bwAvgGbps === undefined) return [];
    const lines = textLines(text);
    const li = idx(lines, new RegExp(`^\\s*${largest.bytes}\\s+${largest.iterations ?? ''}`));
    const rate = lineRateInText(text, f.device);
    const d = d20Bandwidth({
      kind: 'perftest',
      bwAvgGbps: largest.bwAvgGbps,
      ports: 1,
      ...(rate !== undefined ? { lineRateGbps: rate } : {}),
      ...(f.mtu !== undefined ? { mtu: f.mtu } : {}),
      ...(f.device ? { device: f.device } : {}),
      ...(f.gidIndex !== undefined ? { gidIndex: f.gidIndex } : {}),
      evidence: `${f.test ?? 'perftest'} on ${f.device ?? '?'}: ${li >= 0 ? (lines[li] ?? '').trim().replace(/\s+/g, ' ') : `${largest.bytes} B`} (${f.unit ?? '?'}) → BW average ${fmtGbps(largest.bwAvgGbps)}; link ${rate} Gb/s`,
      ...(li >= 0 ? { line: li + 1 } : {}),
    });
    return d ? [d] : [];
  },
  summary(f) {
    const rows: Array<[string, string]> = [[`test`, `${f.test ?? '?'}${f.side ? ` (${f.side})` : ''}`]];
    rows.push([
      'device',
      `${f.device ?? '?'}${f.linkType ? `, link ${f.linkType}` : ''}${f.gidIndex !== undefined ? `, GID index ${f.gidIndex}` : ''}${f.mtu ? `, MTU ${f.mtu}` : ''}`,
    ]);
    const last = [...f.results].sort((a, b) => b.bytes - a.bytes)[0];
    if (last && f.metric !== 'lat')
      rows.push(['BW average', `${fmtGbps(last.bwAvgGbps)} at ${last.bytes} B (peak ${fmtGbps(last.bwPeakGbps)})`]);
    if (last && f.metric === 'lat')
      rows.push(['latency', `typical ${last.tTypicalUs ?? '?'} µs, avg ${last.tAvgUs ?? '?'} µs at ${last.bytes} B`]);
    if (!last) rows.push(['results', 'none (cut before the result row)']);
    if (f.mtu === 1024 && /ethernet/i.test(f.linkType ?? ''))
      rows.push(['note', 'Mtu 1024: netdev MTU < 4200 (R24), ≈ 5 % goodput lost']);
    if (f.errors?.length) rows.push(['errors', f.errors.join(' | ')]);
    return rows;
  },
};
