/**
 * The last word on a verdict before anyone sees it: a check may pass only on evidence that shows what it claims.
 * A pass or warn with no evidence, or whose summary or evidence holds a value that was never read (a lone `?`,
 * `undefined`, `NaN`), becomes "cannot tell" (error) — a bug in the check shows as an error, never as a green tick.
 */
import type { Verdict } from './types.js';

const EMPTY_EVIDENCE = /^\s*(?:\((?:none|empty|nothing)\)\s*)?$/;
const PLACEHOLDER = /(?:^|[\s(:=,/])\?(?=$|[\s),.;:/]|GT)|\bx\?(?!\w)|\bundefined\b|\bNaN\b|\[object Object\]/m;

/** Where a verdict shows a value that was never read; undefined when it shows none. */
export function placeholderIn(text: string): string | undefined {
  const m = PLACEHOLDER.exec(text);
  if (!m) return undefined;
  const start = text.lastIndexOf('\n', m.index) + 1;
  const end = text.indexOf('\n', m.index);
  return text.slice(start, end < 0 ? undefined : end).trim();
}

export function groundedVerdict(v: Verdict): Verdict {
  if (v.status !== 'pass' && v.status !== 'warn') return v;
  if (EMPTY_EVIDENCE.test(v.evidence)) {
    return {
      ...v,
      status: 'error',
      summary: `cannot tell: no evidence for "${v.summary}"`,
      evidence: '(the check read nothing it could show)',
      fix: v.fix ?? 'check again; if it persists, report it as a bug in l20-setup',
    };
  }
  const unread = placeholderIn(v.summary) ?? placeholderIn(v.evidence);
  if (unread !== undefined) {
    return {
      ...v,
      status: 'error',
      summary: `cannot tell: "${v.summary}" rests on a value that was not read`,
      evidence: `${v.evidence}\n(not read: ${unread})`,
      fix: v.fix ?? 'check that the probes run on the host (the evidence shows which value is missing)',
    };
  }
  return v;
}
