/**
 * The pipeline matrix's geometry and text as pure functions. Up to the hosts whose full columns
 * fit ("✔ pass" under each name), the matrix is as it always was; past that it turns compact: one
 * glyph per host, hosts ordered worst first across every stage (so the trouble is on the left of
 * every row), a ruler of inventory numbers over them, the cluster cell and a per-stage count.
 * Under it the selected stage's hosts are named by verdict, and the connections are counted
 * (the hosts in trouble named) instead of one line per host.
 */
import {
  byRank,
  cellStatus,
  connectionTrouble,
  entryRank,
  type ConnectionEntry,
} from '../../src/engine/host-status.js';
import type { EngineState } from '../../src/engine/store-types.js';
import type { StageId, StageStatus } from '../../src/engine/types.js';
import { STATUS_COLOR, STATUS_GLYPH } from '../format.js';

export const STAGE_COL = 26;
/** "› 11 gpu-driver" and a space: the compact form gives the hosts what the full form's padding took. */
export const COMPACT_STAGE_COL = 16;
/** "… running" (the longest cell) and a space. */
export const CLUSTER_COL = 10;
const MIN_CELL = 8;
const MAX_CELL = 16;
/** The count column keeps this much ("1err 1fail 1warn 61pass"); narrower, fewer hosts are drawn. */
const SUMMARY_MIN = 24;
/** Up to this many hosts the pipeline lists one connection per line, as it always did. */
export const CONNECTION_LINES_MAX_HOSTS = 8;

export type MatrixForm =
  { kind: 'full'; cellWidth: number } | { kind: 'compact'; hostCell: 1 | 2; shown: number; summaryWidth: number };

export function matrixForm(width: number, hostCount: number): MatrixForm {
  const columns = hostCount + 1; // the cluster column
  const room = width - STAGE_COL - 2;
  if (columns * MIN_CELL <= room)
    return { kind: 'full', cellWidth: Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(room / columns))) };
  // Two columns a glyph (glyph, space) read easier; one each when that is what fits.
  const strip = width - COMPACT_STAGE_COL - 1 - CLUSTER_COL - SUMMARY_MIN;
  const hostCell = strip >= 2 * hostCount ? 2 : 1;
  const shown = Math.max(0, Math.min(hostCount, Math.floor(strip / hostCell)));
  return {
    kind: 'compact',
    hostCell,
    shown,
    summaryWidth: width - COMPACT_STAGE_COL - shown * hostCell - 1 - CLUSTER_COL,
  };
}

/**
 * The compact form's column order (hostOrder indexes): each host ranked by its worst cell over the
 * implemented stages — unreachable or error, fail, warn, running, not run, skipped, pass — then
 * inventory order. Columns stay put across rows, so a host failing several stages is one column.
 */
export function matrixHostOrder(
  state: Pick<EngineState, 'checks' | 'stages' | 'hostOrder'>,
  stages: readonly StageId[],
  trouble: readonly string[],
): number[] {
  const troubled = new Set(trouble);
  return state.hostOrder
    .map((host, index) => {
      let rank = troubled.has(host) ? 0 : Infinity;
      for (const st of stages)
        rank = Math.min(rank, entryRank({ status: cellStatus(state, st, host), trouble: false }));
      return { index, rank };
    })
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map((h) => h.index);
}

export interface Run {
  text: string;
  color: string | undefined;
}

/** A row's glyphs as runs of one status (one <Text> per run, not per host: 64 hosts are often 2–3 runs). */
export function stripRuns(statuses: readonly StageStatus[], hostCell: 1 | 2): Run[] {
  const runs: Array<Run & { status: StageStatus }> = [];
  for (const st of statuses) {
    const cell = hostCell === 2 ? `${STATUS_GLYPH[st]} ` : STATUS_GLYPH[st];
    const last = runs[runs.length - 1];
    if (last && last.status === st) last.text += cell;
    else runs.push({ status: st, text: cell, color: STATUS_COLOR[st] });
  }
  return runs.map(({ text, color }) => ({ text, color }));
}

/** How many ruler lines the numbers 1…hostCount take (one digit each). */
export function rulerHeight(hostCount: number): number {
  return String(Math.max(1, hostCount)).length;
}

/** Ruler lines over the glyphs: each host's inventory number (1-based) read top to bottom. */
export function rulerLines(order: readonly number[], hostCell: 1 | 2, hostCount: number): string[] {
  const digits = rulerHeight(hostCount);
  return Array.from({ length: digits }, (_, d) =>
    order
      .map((i) => {
        const n = String(i + 1).padStart(digits, ' ');
        return (n[d] ?? ' ') + (hostCell === 2 ? ' ' : '');
      })
      .join(''),
  );
}

const STATUS_ORDER: readonly StageStatus[] = ['error', 'fail', 'warn', 'running', 'pending', 'skip', 'pass'];
const WORD: Record<StageStatus, string> = {
  error: 'error',
  fail: 'fail',
  warn: 'warn',
  running: 'running',
  pending: 'not run',
  skip: 'skipped',
  pass: 'pass',
};
// Short words, not glyphs: the words name the status where a glyph column would be too narrow to read.
const SHORT: Record<StageStatus, string> = {
  error: 'err',
  fail: 'fail',
  warn: 'warn',
  running: 'run',
  pending: 'todo',
  skip: 'skip',
  pass: 'pass',
};

/** A stage row's counts, worst first: "2 fail · 1 warn · 61 pass", or "2fail 1warn 61pass" when that does not fit. */
export function stageSummary(statuses: readonly StageStatus[], width: number): Run[] {
  const counts = new Map<StageStatus, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  const present = STATUS_ORDER.filter((s) => counts.has(s));
  const words = present.map((s) => `${counts.get(s)} ${WORD[s]}`);
  const long = words.join(' · ').length <= width;
  return present.map((s, i) => ({
    text: (i > 0 ? (long ? ' · ' : ' ') : '') + (long ? words[i] : `${counts.get(s)}${SHORT[s]}`),
    color: STATUS_COLOR[s],
  }));
}

export interface Token {
  text: string;
  color?: string | undefined;
  /** A host's name: counted in "+K more" when it does not fit. */
  host?: boolean;
}

/**
 * Tokens laid out in at most `maxLines` lines of `width` columns, broken between tokens; when they
 * do not all fit, the last line ends "… +K more" (K: the host names left out).
 */
export function wrapTokens(tokens: readonly Token[], width: number, maxLines: number): Token[][] {
  if (maxLines <= 0 || width <= 0) return [];
  const len = (t: Token): number => Array.from(t.text).length;
  const lines: Token[][] = [];
  let line: Token[] = [];
  let used = 0;
  let i = 0;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    const need = (line.length > 0 ? 1 : 0) + len(t);
    if (used + need > width && line.length > 0) {
      if (lines.length + 1 >= maxLines) break;
      lines.push(line);
      line = [];
      used = 0;
    }
    const text = line.length > 0 ? ` ${t.text}` : t.text;
    line.push({ ...t, text: Array.from(text).slice(0, width).join('') });
    used += Math.min(width, Array.from(text).length);
  }
  if (i < tokens.length) {
    let hidden = tokens.slice(i).filter((t) => t.host).length;
    const marker = (): string => (hidden > 0 ? ` … +${hidden} more` : ' …');
    // Make room for the marker by dropping tokens from the end of the last line.
    while (line.length > 0 && used + marker().length > width) {
      const dropped = line.pop()!;
      used -= len(dropped);
      if (dropped.host) hidden++;
    }
    line.push({ text: marker(), color: 'gray' });
  }
  if (line.length > 0 && lines.length < maxLines) lines.push(line);
  return lines;
}

/**
 * The selected stage's hosts by verdict, worst first: the troubled ones named ("✘ fail: l20-n7
 * l20-n33"), running / not run / skipped / pass only counted — those are the many.
 */
export function stageHostsTokens(
  state: Pick<EngineState, 'checks' | 'stages' | 'hostOrder'>,
  stage: StageId,
  trouble: readonly string[],
): Token[] {
  const troubled = new Set(trouble);
  const entries = state.hostOrder
    .map((host, index) => ({ host, index, status: cellStatus(state, stage, host), trouble: troubled.has(host) }))
    .sort(byRank);
  const tokens: Token[] = [{ text: `${stage} on ${entries.length} hosts:` }];
  const groups = new Map<string, typeof entries>();
  for (const e of entries) {
    const key = e.trouble ? 'unreachable' : e.status;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  let first = true;
  for (const [key, list] of groups) {
    const sep = first ? '' : '· ';
    first = false;
    // Every host alike: naming them all says less than "all".
    if (list.length === entries.length && entries.length > 2) {
      const { glyph, color } =
        key === 'unreachable'
          ? { glyph: '⊘', color: 'red' }
          : { glyph: STATUS_GLYPH[key as StageStatus], color: STATUS_COLOR[key as StageStatus] };
      tokens.push({ text: `all ${glyph} ${key === 'unreachable' ? key : WORD[key as StageStatus]}`, color });
      continue;
    }
    if (key === 'unreachable') {
      tokens.push({ text: `${sep}⊘ unreachable:`, color: 'red' });
      for (const e of list) tokens.push({ text: e.host, color: 'red', host: true });
      continue;
    }
    const st = key as StageStatus;
    if (st === 'error' || st === 'fail' || st === 'warn') {
      tokens.push({ text: `${sep}${STATUS_GLYPH[st]} ${WORD[st]}:`, color: STATUS_COLOR[st] });
      for (const e of list) tokens.push({ text: e.host, color: STATUS_COLOR[st], host: true });
    } else {
      tokens.push({ text: `${sep}${list.length} ${STATUS_GLYPH[st]} ${WORD[st]}`, color: STATUS_COLOR[st] });
    }
  }
  return tokens;
}

const CONNECTION_ORDER = ['failed', 'lost', 'connecting', 'connected', 'closed', 'idle'] as const;

/** "connections: 61 connected · 2 lost: l20-n7 (ECONNRESET) l20-n40 (…)" — counts per state, the troubled hosts named with why. */
export function connectionTokens(conns: readonly ConnectionEntry[]): Token[] {
  const tokens: Token[] = [{ text: 'connections:' }];
  let first = true;
  for (const state of CONNECTION_ORDER) {
    const list = conns.filter((c) => c.connection === state);
    if (list.length === 0) continue;
    const sep = first ? '' : '· ';
    first = false;
    if (connectionTrouble(state)) {
      tokens.push({ text: `${sep}${list.length} ${state}:`, color: 'red' });
      for (const c of list)
        tokens.push({ text: c.detail ? `${c.host} (${c.detail})` : c.host, color: 'red', host: true });
    } else {
      tokens.push({ text: `${sep}${list.length} ${state}`, color: state === 'connected' ? 'green' : 'gray' });
    }
  }
  return tokens;
}
