/** Turns zod issues into messages that name the field, the value and what is expected. */
import type { z } from 'zod';

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly source: string,
    readonly problems: string[],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

function pathText(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out === '' ? '(top level)' : out;
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v: unknown = input;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/**
 * Everything outside printable ASCII, \u-escaped: control characters (C0, DEL, C1 — ESC and CSI
 * would drive the operator's terminal), bidi overrides and zero-width characters (they hide or
 * reorder text), and look-alikes (a fullwidth ";" or a Cyrillic "а" in "ens1f0" shows as such).
 */
export function asciiSafe(s: string): string {
  return s.replace(/[^\x20-\x7e]/gu, (c) => {
    const cp = c.codePointAt(0)!;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/** What a value is when it cannot be printed (nested too deep for JSON.stringify's recursion). */
function kindOf(v: unknown): string {
  if (Array.isArray(v)) return `an array of ${v.length}`;
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : typeof v;
}

/**
 * A short, safe rendering of a bad value: JSON, escaped to printable ASCII (asciiSafe), cut at 60
 * chars. Never throws: an inventory nested thousands of levels deep still gets its message.
 */
export function showValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  let s: string;
  try {
    // Cut a long string before encoding it: a 1 MB host name is reported, not copied.
    s = JSON.stringify(typeof v === 'string' && v.length > 120 ? v.slice(0, 120) : v) ?? kindOf(v);
  } catch {
    s = kindOf(v);
  }
  s = asciiSafe(s);
  return s.length > 60 || (typeof v === 'string' && v.length > 120) ? `${s.slice(0, 57)}…` : s;
}

/** zod's union issue says only "Invalid input": list what each alternative expects instead. */
function unionExpectation(issue: z.ZodIssue): string | undefined {
  if (issue.code !== 'invalid_union' || !('errors' in issue) || !Array.isArray(issue.errors)) return undefined;
  const alternatives = (issue.errors as z.ZodIssue[][])
    .map((errs) => errs[0]?.message.replace(/^.*?expected /i, '').replace(/, received \w+$/, ''))
    .filter((m): m is string => !!m);
  return alternatives.length > 0 ? `expected ${[...new Set(alternatives)].join(' or ')}` : undefined;
}

export function describeIssues(error: z.ZodError, input: unknown): string[] {
  return error.issues.map((issue) => {
    const where = pathText(issue.path);
    if (issue.code === 'unrecognized_keys') {
      // Keys are input too: shown escaped and cut like values, never raw.
      const keys =
        issue.keys
          .slice(0, 5)
          .map((k) => showValue(k))
          .join(', ') + (issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : '');
      return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}; remove ${issue.keys.length > 1 ? 'them' : 'it'} or check the spelling`;
    }
    const got = showValue(valueAt(input, issue.path));
    // Our own messages describe the expected value ("a POSIX user name …"); zod's are full sentences.
    const expected =
      unionExpectation(issue) ??
      (/^(a|an|at|unique|the) /.test(issue.message) ? `expected ${issue.message}` : issue.message);
    return `${where} = ${got}: ${expected}`;
  });
}
