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

/** A short, safe rendering of a bad value: JSON-escaped (so control characters show), cut at 60 chars. */
export function showValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 60 ? `${s.slice(0, 57)}…` : s;
}

export function describeIssues(error: z.ZodError, input: unknown): string[] {
  return error.issues.map((issue) => {
    const where = pathText(issue.path);
    if (issue.code === 'unrecognized_keys') {
      return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; remove ${issue.keys.length > 1 ? 'them' : 'it'} or check the spelling`;
    }
    const got = showValue(valueAt(input, issue.path));
    // Our own messages describe the expected value ("a POSIX user name …"); zod's are full sentences.
    const expected = /^(a|an|at|unique|the) /.test(issue.message) ? `expected ${issue.message}` : issue.message;
    return `${where} = ${got}: ${expected}`;
  });
}
