/**
 * Line access for log-like outputs (NCCL, vLLM, torch, nccl-tests) where findings cite 1-based line numbers.
 *
 * Unlike `cleanText`, nothing is dropped: CRLF becomes LF, carriage-return redraws are collapsed and
 * control/ANSI sequences are removed per line, so line N here is line N of the input. Pure; never throws.
 */
import { collapseCarriageReturns, sanitize } from '../util/sanitize.js';

/** The lines of `text`, cleaned of control characters, line numbering preserved. */
export function logLines(text: unknown): string[] {
  if (typeof text !== 'string' || text === '') return [];
  const lines = text.split('\n');

  const anyControl = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/.test(text);
  if (!anyControl) return lines;
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i] ?? '';
    if (l.endsWith('\r')) l = l.slice(0, -1);
    // Fast path: most log lines carry no control characters at all.

    if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/.test(l)) {
      l = sanitize(collapseCarriageReturns(l));
    }
    lines[i] = l;
  }
  return lines;
}

/** A line cut to a sane length for evidence (a 100 KB log line would swamp a report). */
export function clip(line: string, max = 400): string {
  const t = line.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** `Mean TTFT (ms)` → `meanTtftMs`; `SRAM Uncorrectable Parity` → `sramUncorrectableParity`. */
export function camel(label: string): string {
  const words = label
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter((w) => w !== '');
  return words
    .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
    .join('');
}

/** Counts lines of `text` that include `needle`, stopping at `cap` (cheap detection helper). */
export function countIncludes(text: string, needle: string, cap = 1000): number {
  let n = 0;
  let i = text.indexOf(needle);
  while (i >= 0 && n < cap) {
    n++;
    i = text.indexOf(needle, i + needle.length);
  }
  return n;
}
