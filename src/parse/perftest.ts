/**
 * perftest (`ib_write_bw`, `ib_read_bw`, `ib_send_bw`, `ib_atomic_bw`, `*_lat`; github.com/linux-rdma/perftest).
 *
 * A banner (`* Waiting for client to connect... *` on the server side only), a dashed rule, the test title
 * (`RDMA_Write BW Test`, `Send Latency Test`, `RDMA_Write Post List BW Test`), `<label> : <value>` header
 * lines (two per line, TAB-separated, in the raw output: `Dual-port : OFF\t\tDevice : mlx5_0`), the
 * local/remote address lines (RoCE adds `GID: 00:…:255:255:a:b:c:d`, decimal bytes), then the table:
 * BW tests `#bytes #iterations BW peak[<u>] BW average[<u>] MsgRate[Mpps] [CPU_Util[%]]`, latency tests
 * `#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec] 99% percentile[usec]
 * 99.9% percentile[usec]`. Units: `Gb/sec` (`--report_gbits`), `MB/sec` = 10^6 B/s, `MiB/sec` = 2^20 B/s
 * (perftest ≥ 24.07); bandwidth is always reported here in Gb/s. Rows are read by column name, tolerant of
 * `\t\t` inside a row and of warnings (`Conflicting CPU frequency values detected`) between header and row.
 */
import { z } from 'zod';
import { compact, guard, toInt, toNum, validate } from './common.js';
import { perftestGidIpv4, rdmaLines } from './rdma-util.js';

export const PerftestBwRowSchema = z.object({
  bytes: z.number().int(),
  iterations: z.number().int().optional(),
  bwPeakGbps: z.number().optional(),
  bwAvgGbps: z.number().optional(),
  msgRateMpps: z.number().optional(),
  cpuUtilPct: z.number().optional(),
  tMinUs: z.number().optional(),
  tMaxUs: z.number().optional(),
  tTypicalUs: z.number().optional(),
  tAvgUs: z.number().optional(),
  tStdevUs: z.number().optional(),
  p99Us: z.number().optional(),
  p999Us: z.number().optional(),
});
export type PerftestRow = z.infer<typeof PerftestBwRowSchema>;

export const PerftestFactsSchema = z.object({
  /** The program: `ib_write_bw`, `ib_send_lat`, … (from the title, else the command line). */
  test: z.string().optional(),
  title: z.string().optional(),
  /** `bw` or `lat`. */
  metric: z.enum(['bw', 'lat']).optional(),
  side: z.enum(['client', 'server']).optional(),
  device: z.string().optional(),
  /** `Link type`: `Ethernet` (RoCE) or `IB`. */
  linkType: z.string().optional(),
  transportType: z.string().optional(),
  connectionType: z.string().optional(),
  gidIndex: z.number().int().optional(),
  /** `Mtu : 1024[B]`. */
  mtu: z.number().int().optional(),
  qps: z.number().int().optional(),
  txDepth: z.number().int().optional(),
  postList: z.number().int().optional(),
  /** The unit the table printed: `Gb/sec`, `MB/sec`, `MiB/sec`. */
  unit: z.string().optional(),
  localIpv4: z.string().optional(),
  remoteIpv4: z.string().optional(),
  /** The peer from the pasted command line (client side). */
  server: z.string().optional(),
  /** `-q`/`--qp` from the command line or `Number of qps`. */
  results: z.array(PerftestBwRowSchema),
  /** perftest's own error lines (`Couldn't …`, `Failed to …`, `Unable to …`). */
  errors: z.array(z.string()).optional(),
  /** `-D`: `WARNING: BW peak won't be measured in this run.` */
  peakNotMeasured: z.boolean().optional(),
});
export type PerftestFacts = z.infer<typeof PerftestFactsSchema>;

const TITLES: Array<[RegExp, string, 'bw' | 'lat']> = [
  [/^RDMA_Write(?: Post List)? BW Test$/, 'ib_write_bw', 'bw'],
  [/^RDMA_Read(?: Post List)? BW Test$/, 'ib_read_bw', 'bw'],
  [/^Send(?: Post List)? BW Test$/, 'ib_send_bw', 'bw'],
  [/^Atomic\S*(?: Post List)? BW Test$/, 'ib_atomic_bw', 'bw'],
  [/^Raw Ethernet(?: Post List)? BW Test$/i, 'raw_ethernet_bw', 'bw'],
  [/^RDMA_Write Latency Test$/, 'ib_write_lat', 'lat'],
  [/^RDMA_Read Latency Test$/, 'ib_read_lat', 'lat'],
  [/^Send Latency Test$/, 'ib_send_lat', 'lat'],
  [/^Atomic\S* Latency Test$/, 'ib_atomic_lat', 'lat'],
];

const COLUMN_RE = /#[A-Za-z_]+|[A-Za-z0-9_.%]+(?: [A-Za-z]+)?\[[^\]\s]*\]/g;
// Header labels read (values are single tokens); each label may share its line with another.
const LABELS: Array<[string, RegExp]> = [
  'Device',
  'Link type',
  'Transport type',
  'Connection type',
  'GID index',
  'Mtu',
  'Number of qps',
  'TX depth',
  'Post List',
].map((l) => [l, new RegExp(`(?:^|\\s)${l.replace(/ /g, '\\s+')}\\s*:\\s*(\\S+)`)]);
// Options that take a value (so the token after them is not the server's address).
const VALUE_OPTS = new Set(
  '-d -i -x -s -n -D -q -m -p -I -t -Q -u -U -S -l -r -w -y -T -g -E -J -j -K -k -L -M -O -P -W -X -Y -Z -c --ib-dev --gid-index --size --iters --duration --qp --mtu --port --tclass --tx-depth --rx-depth --cq-mod --connection --source_ip --dest_ip --sl --inline_size --mmap --dont_xchg_versions'.split(
    ' ',
  ),
);

/** Gb/s from a value in `unit`. */
export function toGbps(value: number, unit: string): number | undefined {
  const u = unit.toLowerCase();
  if (u === 'gb/sec' || u === 'gbit/sec' || u === 'gbps') return value;
  if (u === 'mb/sec') return (value * 8 * 1e6) / 1e9;
  if (u === 'mib/sec') return (value * 8 * 1048576) / 1e9;
  return undefined;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

function columnKey(name: string, unit: string | undefined): { key: keyof PerftestRow; bw?: boolean } | undefined {
  switch (name) {
    case '#bytes':
      return { key: 'bytes' };
    case '#iterations':
      return { key: 'iterations' };
    case 'BW peak':
      return { key: 'bwPeakGbps', bw: true };
    case 'BW average':
      return { key: 'bwAvgGbps', bw: true };
    case 'MsgRate':
      return unit === 'Mpps' ? { key: 'msgRateMpps' } : undefined;
    case 'CPU_Util':
      return { key: 'cpuUtilPct' };
    case 't_min':
      return { key: 'tMinUs' };
    case 't_max':
      return { key: 'tMaxUs' };
    case 't_typical':
      return { key: 'tTypicalUs' };
    case 't_avg':
      return { key: 'tAvgUs' };
    case 't_stdev':
      return { key: 'tStdevUs' };
    case '99% percentile':
      return { key: 'p99Us' };
    case '99.9% percentile':
      return { key: 'p999Us' };
    default:
      return undefined;
  }
}

export function parsePerftest(text: string): PerftestFacts {
  return guard(
    () => {
      const out: PerftestFacts = { results: [] };
      const errors: string[] = [];
      let columns: Array<{ key?: keyof PerftestRow; bw?: boolean; unit?: string }> | undefined;
      let lastGidSide: 'local' | 'remote' | undefined;
      let sawRule = false;
      // The client's output starts with the dashed rule; the server's with its banner.
      let ruleFirst = false;
      let sawOther = false;
      const lines = rdmaLines(text);
      const lastIdx = (() => {
        for (let i = lines.length - 1; i >= 0; i--) if ((lines[i] ?? '').trim() !== '') return i;
        return -1;
      })();
      const endsWithNewline = /\n\s*$/.test(text);
      lines.forEach((line, idx) => {
        const t = line.trim();
        if (t === '') return;
        const cmd = /(?:^|[\s/$#>])(ib_(?:write|read|send|atomic)_(?:bw|lat)|raw_ethernet_(?:bw|lat))\b(.*)$/.exec(t);
        if (cmd && !/Test$/.test(t) && !/:\s/.test(t.slice(0, 20))) {
          out.test ??= cmd[1];
          const args = (cmd[2] ?? '')
            .trim()
            .split(/\s+/)
            .filter((x) => x !== '');
          const positional: string[] = [];
          for (let i = 0; i < args.length; i++) {
            const a = args[i] ?? '';
            if (a === '|' || a === '>' || a === '2>&1' || a === '&&' || a === ';') break;
            if (a.startsWith('-')) {
              if (!a.includes('=') && VALUE_OPTS.has(a)) i++;
              continue;
            }
            positional.push(a);
          }
          if (positional.length) out.server ??= positional[positional.length - 1];
          return;
        }
        if (/Waiting for client to connect/i.test(t)) {
          out.side = 'server';
          return;
        }
        if (/^-{20,}$/.test(t)) {
          if (!sawRule && !out.title && !sawOther) ruleFirst = true;
          sawRule = true;
          return;
        }
        const title = TITLES.find(([re]) => re.test(t));
        if (title) {
          out.title = t;
          out.test = title[1];
          out.metric = title[2];
          return;
        }
        if (!sawRule && !out.title && !/^(?:Disabling dynamic polling|WARNING|Conflicting CPU frequency)/i.test(t))
          sawOther = true;
        if (/BW peak won't be measured/i.test(t)) {
          out.peakNotMeasured = true;
          return;
        }
        if (
          /^(?:Couldn't|Failed|Unable|Error|ERROR|Conflicting port|Requested MTU|Port number|Completion with error|ibv_\w+\(?\)? failed)/.test(
            t,
          ) &&
          !/CPU Frequency/.test(t)
        ) {
          errors.push(t);
          return;
        }
        if (t.startsWith('#bytes') && t.length < 2000) {
          const names = t.match(COLUMN_RE) ?? [];
          columns = names.map((n) => {
            const br = n.indexOf('[');
            const name = br >= 0 ? n.slice(0, br) : n;
            const unit = br >= 0 ? n.slice(br + 1, -1) : undefined;
            const k = columnKey(name, unit);
            if (k?.bw && unit !== undefined && out.unit === undefined) out.unit = unit;
            return { key: k?.key, bw: k?.bw, unit };
          });
          return;
        }
        const gid = /^GID:\s*([\d:]+)$/.exec(t);
        if (gid) {
          const ip = perftestGidIpv4(gid[1]);
          if (ip && lastGidSide === 'local') out.localIpv4 ??= ip;
          if (ip && lastGidSide === 'remote') out.remoteIpv4 ??= ip;
          return;
        }
        if (/^local address:/.test(t)) {
          lastGidSide = 'local';
          return;
        }
        if (/^remote address:/.test(t)) {
          lastGidSide = 'remote';
          return;
        }
        if (columns && /^\d/.test(t)) {
          let tok = t.split(/\s+/);
          // The last line of a cut text may end inside a number: keep only tokens that are certainly whole.
          if (idx === lastIdx && !endsWithNewline) tok = tok.slice(0, -1);
          if (!tok.every((x) => /^-?\d+(?:\.\d+)?$/.test(x))) return;
          const row: Record<string, number> = {};
          tok.forEach((x, i) => {
            const col = columns?.[i];
            if (!col?.key) return;
            const v = toNum(x);
            if (v === undefined) return;
            if (col.bw) {
              const g = col.unit !== undefined ? toGbps(v, col.unit) : undefined;
              if (g !== undefined) row[col.key] = round(g);
            } else row[col.key] = v;
          });
          const bytes = row['bytes'];
          if (bytes !== undefined && Number.isInteger(bytes)) out.results.push(row as PerftestRow);
          return;
        }
        if (!sawRule && !out.title) return;
        for (const [label, re] of LABELS) {
          const m = re.exec(line);
          const value = m?.[1];
          if (value === undefined) continue;
          switch (label) {
            case 'Device':
              out.device ??= value;
              break;
            case 'Link type':
              out.linkType ??= value;
              break;
            case 'Transport type':
              out.transportType ??= value;
              break;
            case 'Connection type':
              out.connectionType ??= value;
              break;
            case 'GID index':
              out.gidIndex ??= toInt(value);
              break;
            case 'Mtu': {
              const mm = /^(\d+)\[B\]$/.exec(value);
              if (mm) out.mtu ??= toInt(mm[1]);
              break;
            }
            case 'Number of qps':
              out.qps ??= toInt(value);
              break;
            case 'TX depth':
              out.txDepth ??= toInt(value);
              break;
            case 'Post List':
              out.postList ??= toInt(value);
              break;
            default:
              break;
          }
        }
      });
      if (out.side === undefined && (out.server !== undefined || (ruleFirst && out.title !== undefined)))
        out.side = 'client';
      if (errors.length) out.errors = errors;
      return validate(PerftestFactsSchema, compact(out));
    },
    () => ({ results: [] }),
  );
}
