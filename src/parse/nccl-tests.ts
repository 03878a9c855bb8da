/**
 * nccl-tests (`all_reduce_perf`, `all_gather_perf`, `sendrecv_perf`, …) output.
 *
 * Header `# nThread 1 nGpus 1 minBytes 8 maxBytes … warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0`,
 * device list `#  Rank  0 Group  0 Pid 6899 on host device  0 [0000:04:00] NVIDIA H100 80GB HBM3` (old builds: no
 * `Group`), then the table: newer `size count type redop root time algbw busbw #wrong` twice (out-of-place, in-place),
 * old `size count type redop time algbw busbw error` twice (error = max abs error, not a count). Footer
 * `# Out of bounds values : 0 OK` and `# Avg bus bandwidth    : 70.742 `. Newest builds frame the run with
 * `# Collective test starting: all_reduce_perf`. NCCL INFO lines may interleave, so rows are read by shape: the last
 * eight cells are time/algbw/busbw/#wrong twice, led by size, count and type. Large times print as integers.
 */
import { z } from 'zod';
import { compact, guard, toInt, toNum, validate } from './common.js';
import { logLines } from './log-lines.js';

const NumOrNull = z.number().nullable();

export const NcclTestsRowSchema = z.object({
  bytes: z.number(),
  count: z.number(),
  type: z.string(),
  redop: z.string().optional(),
  root: z.number().optional(),
  timeOutUs: NumOrNull,
  algbwOut: NumOrNull,
  busbwOut: NumOrNull,
  /** `#wrong` (count of wrong values); null for `N/A` (`-c 0`). Omitted in the old `error` format. */
  wrongOut: NumOrNull.optional(),
  timeInUs: NumOrNull.optional(),
  algbwIn: NumOrNull.optional(),
  busbwIn: NumOrNull.optional(),
  wrongIn: NumOrNull.optional(),
  /** Old format: max absolute error (small float values are normal). */
  errorOut: NumOrNull.optional(),
  errorIn: NumOrNull.optional(),
  /** 1-based line of the row in the input. */
  line: z.number().int(),
});
export type NcclTestsRow = z.infer<typeof NcclTestsRowSchema>;

export const NcclTestsFactsSchema = z.object({
  /** `all_reduce_perf` (from the framing line or the command line). */
  test: z.string().optional(),
  rows: z.array(NcclTestsRowSchema),
  /** `# Avg bus bandwidth`, GB/s as printed. */
  avgBusbw: z.number().optional(),
  outOfBounds: z.number().int().optional(),
  /** `OK` / `FAILED` after the out-of-bounds count. */
  outOfBoundsStatus: z.string().optional(),
  /** `#wrong` (newer) or `error` (old, max abs error). */
  format: z.enum(['wrong', 'error']).optional(),
  /** False when the run did not validate (`validation: 0` or `#wrong` `N/A`). */
  validated: z.boolean().optional(),
  nThread: z.number().int().optional(),
  nGpus: z.number().int().optional(),
  minBytes: z.number().optional(),
  maxBytes: z.number().optional(),
  ranks: z.array(
    z.object({
      rank: z.number().int(),
      host: z.string().optional(),
      device: z.number().int().optional(),
      busId: z.string().optional(),
      name: z.string().optional(),
    }),
  ),
  hosts: z.array(z.string()),
  /** The largest size's row, for the bandwidth rule. */
  maxBusbw: z.number().optional(),
  errors: z.array(z.string()),
});
export type NcclTestsFacts = z.infer<typeof NcclTestsFactsSchema>;

const NUMERIC = /^(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|N\/A|nan|-nan|inf)$/;
const TYPE = /^[a-z][a-z0-9_]*$/;

function cell(s: string | undefined): number | null {
  if (s === undefined) return null;
  const n = toNum(s);
  return n === undefined ? null : n;
}

const COUNT = /^(?:\d+|N\/A)$/;

function parseRow(
  line: string,
  lineNo: number,
  format: 'wrong' | 'error' | undefined,
  width: number | undefined,
): NcclTestsRow | undefined {
  const t = line.trim().split(/\s+/);
  if (t.length < 11 || t.length > 14) return undefined;
  // With the column header known, a row has exactly its cells (a cut or interleaved row does not).
  if (width !== undefined && t.length !== width) return undefined;
  const bytes = toInt(t[0]);
  const count = toInt(t[1]);
  if (bytes === undefined || count === undefined || !TYPE.test(t[2] ?? '')) return undefined;
  const rest = t.slice(3);
  // Trailing cells: [time algbw busbw wrong] × 2 (out-of-place, in-place).
  let tail: string[];
  let lead: string[];
  if (rest.length >= 8 && rest.slice(-8).every((c) => NUMERIC.test(c))) {
    tail = rest.slice(-8);
    lead = rest.slice(0, -8);
  } else return undefined;
  if (lead.length > 2) return undefined;
  const row: NcclTestsRow = {
    bytes,
    count,
    type: t[2] ?? '',
    timeOutUs: cell(tail[0]),
    algbwOut: cell(tail[1]),
    busbwOut: cell(tail[2]),
    line: lineNo,
  };
  for (const l of lead) {
    if (/^-?\d+$/.test(l)) row.root = Number(l);
    else row.redop = l;
  }
  const errFmt = format === 'error' || (format === undefined && /[eE]/.test(tail[3] ?? ''));
  // `#wrong` is a count: anything else means the cells are misaligned.
  if (!errFmt && !(COUNT.test(tail[3] ?? '') && COUNT.test(tail[7] ?? ''))) return undefined;
  if (errFmt) row.errorOut = cell(tail[3]);
  else row.wrongOut = cell(tail[3]);
  if (tail.length === 8) {
    row.timeInUs = cell(tail[4]);
    row.algbwIn = cell(tail[5]);
    row.busbwIn = cell(tail[6]);
    if (errFmt) row.errorIn = cell(tail[7]);
    else row.wrongIn = cell(tail[7]);
  }
  return row;
}

export function parseNcclTests(text: string): NcclTestsFacts {
  const empty = (): NcclTestsFacts => ({ rows: [], ranks: [], hosts: [], errors: [] });
  return guard(() => {
    const lines = logLines(text);
    const facts = empty();
    let format: 'wrong' | 'error' | undefined;
    let width: number | undefined;
    let anyNa = false;
    const hosts = new Set<string>();
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      const tl = line.trim();
      if (tl === '') continue;
      if (tl.startsWith('#')) {
        const body = tl.replace(/^#\s*/, '');
        const start = /^Collective test (?:starting|concluded):\s*(\S+)/.exec(body);
        if (start?.[1]) {
          facts.test ??= start[1];
          continue;
        }
        if (body.startsWith('nThread')) {
          const g = (k: string): string | undefined => new RegExp(`\\b${k}:?\\s+(\\d+)`).exec(body)?.[1];
          facts.nThread = toInt(g('nThread'));
          facts.nGpus = toInt(g('nGpus'));
          facts.minBytes = toNum(g('minBytes'));
          facts.maxBytes = toNum(g('maxBytes'));
          const v = /validation:\s*(\d)/.exec(body);
          if (v) facts.validated = v[1] === '1';
          continue;
        }
        const rank =
          /^Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$/.exec(
            body,
          );
        if (rank) {
          const r = {
            rank: Number(rank[1]),
            host: rank[2],
            device: Number(rank[3]),
            busId: rank[4],
            name: (rank[5] ?? '').trim() || undefined,
          };
          facts.ranks.push(compact(r));
          if (rank[2] && hosts.size < 1000) hosts.add(rank[2]);
          continue;
        }
        if (/\bsize\b.*\bcount\b.*\btype\b/.test(body)) {
          format = /#wrong/.test(body) ? 'wrong' : /\berror\b/.test(body) ? 'error' : format;
          const cols = body.split(/\s+/).filter((c) => c !== '');
          width = cols.length >= 11 && cols.length <= 14 ? cols.length : undefined;
          facts.format = format;
          continue;
        }
        const oob = /^Out of bounds values\s*:\s*(\d+)\s*(\S*)/.exec(body);
        if (oob) {
          facts.outOfBounds = Number(oob[1]);
          if (oob[2]) facts.outOfBoundsStatus = oob[2];
          continue;
        }
        const avg = /^Avg bus bandwidth\s*:\s*(\S+)/.exec(body);
        if (avg) {
          const n = toNum(avg[1]);
          if (n !== undefined) facts.avgBusbw = n;
          continue;
        }
        continue;
      }
      const c0 = tl.charCodeAt(0);
      if (c0 >= 48 && c0 <= 57) {
        const row = parseRow(tl, i + 1, format, width);
        // An unterminated last line may be cut inside its last cell: do not trust that cell.
        if (row && i === lines.length - 1 && !text.endsWith('\n')) {
          delete row.wrongIn;
          delete row.errorIn;
        }
        if (row) {
          facts.rows.push(row);
          if (row.wrongOut === null || row.wrongIn === null) anyNa = true;
          continue;
        }
      }
      if (facts.test === undefined) {
        const cmd = /(?:^|[\s/])([a-z_]+_perf)(?:_mpi)?(?:\s|$)/.exec(tl);
        if (cmd?.[1] && !tl.includes('NCCL INFO')) facts.test = cmd[1];
      }
      if (/Test NCCL failure|Test CUDA failure|NCCL WARN/.test(tl) && facts.errors.length < 50)
        facts.errors.push(tl.length > 400 ? `${tl.slice(0, 400)}…` : tl);
    }
    if (format === undefined && facts.rows.some((r) => r.errorOut !== undefined)) facts.format = 'error';
    else if (format === undefined && facts.rows.length > 0) facts.format = 'wrong';
    if (anyNa && facts.format === 'wrong') facts.validated = false;
    facts.hosts = [...hosts];
    const largest = facts.rows.reduce<NcclTestsRow | undefined>(
      (m, r) => (m === undefined || r.bytes >= m.bytes ? r : m),
      undefined,
    );
    if (largest) {
      const b = Math.max(largest.busbwOut ?? -1, largest.busbwIn ?? -1);
      if (b >= 0) facts.maxBusbw = b;
    }
    return validate(NcclTestsFactsSchema, compact(facts));
  }, empty);
}
