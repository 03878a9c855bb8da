/**
 * The troubleshoot screen as lines: the symptom list's rows, and a diagnosis with its evidence side
 * by side (host A | host B, the differing lines marked with ≠ as well as coloured, so the mark reads
 * without colour). Pure, so the layout is unit-tested; the view only windows and colours it.
 */
import type { SymptomSummary } from '../../src/engine/store-types.js';
import type { Comparison, Diagnosis } from '../../src/troubleshoot/types.js';
import type { CheckStatus } from '../../src/engine/types.js';
import { fit, STATUS_GLYPH } from '../format.js';

export type TroubleTone =
  'title' | 'found' | 'clear' | 'inconclusive' | 'fix' | 'differ' | 'same' | 'header' | 'dim' | 'plain' | CheckStatus;

export interface TroubleLine {
  text: string;
  tone: TroubleTone;
}

/** The list's mark of a symptom: its latest verdict, or that it runs now, or that it has not run. */
export const SYMPTOM_MARK = {
  none: { glyph: '·', color: 'gray' },
  running: { glyph: '…', color: 'cyan' },
  found: { glyph: '✘', color: 'red' },
  clear: { glyph: '✔', color: 'green' },
  inconclusive: { glyph: '?', color: 'yellow' },
} as const;

export type SymptomMark = keyof typeof SYMPTOM_MARK;

export function symptomMark(diagnosis: Diagnosis | undefined, running: boolean): SymptomMark {
  return running ? 'running' : (diagnosis?.status ?? 'none');
}

/** One list row: the mark, then the title cut to the column. */
export function symptomRow(s: SymptomSummary, mark: SymptomMark, width: number): string {
  return `${SYMPTOM_MARK[mark].glyph} ${fit(s.title, Math.max(1, width - 2))}`;
}

/** The marker column of a comparison row: ≠ where the hosts differ. */
export const DIFFER_MARK = '≠';

const clean = (l: string): string => l.replace(/\t/g, '  ');

/** One row of a side-by-side view: a line of each host ('' where one host has none), and whether they differ. */
export interface AlignedRow {
  left: string;
  right: string;
  differ: boolean;
}

/**
 * Two hosts' outputs aligned like a side-by-side diff: lines both print (longest common subsequence)
 * share a row, and within a run of changes the two sides' lines pair up row by row, so a line one
 * host prints and the other does not shifts nothing after it, and a changed line sits beside its
 * counterpart (`3:on` next to `3:off`).
 */
export function alignLines(a: readonly string[], b: readonly string[]): AlignedRow[] {
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const rows: AlignedRow[] = [];
  let onlyA: string[] = [];
  let onlyB: string[] = [];
  const flush = () => {
    for (let k = 0; k < Math.max(onlyA.length, onlyB.length); k++)
      rows.push({ left: onlyA[k] ?? '', right: onlyB[k] ?? '', differ: true });
    onlyA = [];
    onlyB = [];
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      flush();
      rows.push({ left: a[i]!, right: b[j]!, differ: false });
      i++;
      j++;
    } else if (j >= b.length || (i < a.length && lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) onlyA.push(a[i++]!);
    else onlyB.push(b[j++]!);
  }
  flush();
  return rows;
}

/**
 * One comparison as two columns. Shown hosts: `hosts` (the panes' pair) where the comparison has
 * them, else its first two; with one host, one column. The two are aligned as a diff of their own
 * lines, so the count and the ≠ marks are of the pair shown.
 */
export function comparisonLines(c: Comparison, hosts: readonly string[], width: number): TroubleLine[] {
  const present = Object.keys(c.byHost);
  const picked = [...hosts.filter((h) => present.includes(h)), ...present.filter((h) => !hosts.includes(h))].slice(
    0,
    2,
  );
  const [a = [], b] = picked.map((h) => c.byHost[h] ?? []);
  const rows = b ? alignLines(a, b) : a.map((l) => ({ left: l, right: '', differ: false }));
  const n = rows.filter((r) => r.differ).length;
  const out: TroubleLine[] = [
    {
      text: `── ${c.label}: ${n === 0 ? `the same on ${picked.length > 1 ? 'both hosts' : 'the host'}` : `${n} line${n === 1 ? '' : 's'} differ${n === 1 ? 's' : ''} (${DIFFER_MARK})`}`,
      tone: 'title',
    },
  ];
  if (picked.length === 0) return [...out, { text: '   no output to compare', tone: 'dim' }];
  const col = picked.length === 2 ? Math.max(4, Math.floor((width - 2 - 3) / 2)) : Math.max(4, width - 2);
  const row = (cells: string[]): string => cells.map((x) => fit(clean(x), col)).join(' │ ');
  out.push({ text: `  ${row(picked)}`, tone: 'header' });
  for (const r of rows) {
    out.push({
      text: `${r.differ ? DIFFER_MARK : ' '} ${row(b ? [r.left, r.right] : [r.left])}`,
      tone: r.differ ? 'differ' : 'same',
    });
  }
  return out;
}

const HEADLINE: Record<Diagnosis['status'], string> = {
  found: 'cause found',
  clear: 'clear: every probe passes',
  inconclusive: 'inconclusive: something does not pass that no known cause explains',
};

/** Words wrapped to the width (a word longer than the width is cut by the row's truncation); continuation rows indented. */
export function wrapText(text: string, width: number, indent = '  '): string[] {
  const rows: string[] = [];
  let row = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const next = row === '' ? word : `${row} ${word}`;
    if (Array.from(next).length <= width || row === '' || row === indent) row = next;
    else {
      rows.push(row);
      row = `${indent}${word}`;
    }
  }
  if (row !== '') rows.push(row);
  return rows;
}

/**
 * The diagnosis: verdict, cause, rules and hosts, fix, the checks it rests on, the outputs side by
 * side, and last the checks' full evidence (long: it would push the comparison off the screen).
 */
export function diagnosisLines(d: Diagnosis, hosts: readonly string[], width: number): TroubleLine[] {
  const out: TroubleLine[] = [
    { text: `${SYMPTOM_MARK[d.status].glyph} ${d.title} — ${HEADLINE[d.status]}`, tone: d.status },
  ];
  const para = (text: string, tone: TroubleTone) => out.push(...wrapText(text, width).map((t) => ({ text: t, tone })));
  if (d.cause) para(`cause: ${d.cause}`, 'plain');
  const where = [
    d.rules.length > 0 ? `rules ${d.rules.join(', ')}` : '',
    d.hosts.length > 0 ? `on ${d.hosts.join(', ')}` : d.status === 'found' ? 'cluster-wide' : '',
  ]
    .filter(Boolean)
    .join(' · ');
  if (where) out.push({ text: where, tone: 'plain' });
  if (d.status !== 'clear' && d.fix)
    para(`fix${d.fixStages.length > 0 ? ` (f plans ${d.fixStages.join(' then ')})` : ''}: ${d.fix}`, 'fix');
  if (d.checks.length > 0) {
    out.push({ text: '', tone: 'plain' });
    for (const c of d.checks)
      out.push({
        text: `${STATUS_GLYPH[c.status]} ${(c.host ?? 'cluster').padEnd(10)} ${c.id}${c.rule ? ` (${c.rule})` : ''}  ${c.summary}`,
        tone: c.status,
      });
  }
  for (const c of d.comparisons) out.push({ text: '', tone: 'plain' }, ...comparisonLines(c, hosts, width));
  const evidence = d.evidence.split('\n').filter(Boolean);
  if (evidence.length > 0) {
    out.push({ text: '', tone: 'plain' }, { text: 'evidence:', tone: 'title' });
    for (const l of evidence) out.push({ text: `  ${clean(l)}`, tone: 'dim' });
  }
  return out;
}
