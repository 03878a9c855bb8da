/**
 * `/etc/nccl.conf`, `~/.nccl.conf`, env files and `export NCCL_X=…` lines: KEY=VALUE text, line by line.
 *
 * NCCL's own reader (src/misc/param.cc) is strict and literal: it skips lines with `#` in column 0 and lines
 * without `=`; the name is everything before the first `=`, the value everything after it, verbatim. So
 * `export NCCL_X=1` defines a variable named `export NCCL_X`, `NCCL_X = 1` one named `NCCL_X ` (trailing
 * space), and `NCCL_X="1" # note` the value `"1" # note`. Each entry therefore carries both readings: what
 * NCCL sees (`ncclKey`/`ncclValue`) and what the author meant (`key`/`value`, shell-like), with the reasons
 * the line is not in NCCL's strict form (`problems`, read by R12). Line numbers are 1-based and kept.
 */
import { sanitize } from '../util/sanitize.js';

export interface ConfEntry {
  /** 1-based line. */
  line: number;
  /** The line, verbatim (control characters stripped, trailing whitespace kept out). */
  raw: string;
  /** Intended name: `export ` and surrounding spaces removed. */
  key: string;
  /** Intended value: quotes and an inline `# …` comment removed, trimmed. */
  value: string;
  /** The name as NCCL reads it (text before the first `=`). */
  ncclKey: string;
  /** The value as NCCL reads it (the rest of the line, verbatim). */
  ncclValue: string;
  exported: boolean;
  quoted: boolean;
  comment?: string;
  /** Why the line is not `^[A-Z][A-Z0-9_]*=\S(.*\S)?$` without quotes or `#`; empty when it is. */
  problems: string[];
}

export interface ConfMalformed {
  line: number;
  raw: string;
  reason: string;
}

export interface NcclConfFacts {
  /** Intended KEY → value. NCCL applies the file with setenv(…, 0), so the first definition of a name wins. */
  vars: Record<string, string>;
  entries: ConfEntry[];
  /** Non-blank, non-comment lines that define nothing (no `=`, an indented comment, garbage). */
  malformed: ConfMalformed[];
}

const STRICT = /^[A-Z][A-Z0-9_]*=\S(?:.*\S)?$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Assignment {
  key: string;
  value: string;
  exported: boolean;
  quoted: boolean;
  comment?: string;
}

/**
 * Reads `[export ]KEY=VALUE[ # comment]` the way a shell or systemd would: the value may be single- or
 * double-quoted; an unquoted value ends at whitespace followed by `#`. Returns undefined when the text
 * is not an assignment (no `=`, or a name that is not an identifier).
 */
export function parseAssignment(text: string): Assignment | undefined {
  let s = text.trim();
  let exported = false;
  const ex = /^export\s+/.exec(s);
  if (ex) {
    exported = true;
    s = s.slice(ex[0].length);
  }
  const eq = s.indexOf('=');
  if (eq <= 0) return undefined;
  const key = s.slice(0, eq).trim();
  if (!NAME.test(key)) return undefined;
  let rest = s.slice(eq + 1).replace(/^\s+/, '');
  let value: string;
  let quoted = false;
  let comment: string | undefined;
  const q = rest[0];
  if (q === '"' || q === "'") {
    const end = rest.indexOf(q, 1);
    quoted = true;
    if (end < 0) {
      value = rest.slice(1);
      rest = '';
    } else {
      value = rest.slice(1, end);
      rest = rest.slice(end + 1);
    }
    const c = /^\s*#\s?(.*)$/.exec(rest);
    if (c) comment = c[1];
  } else {
    const c = /(^|\s)#/.exec(rest);
    if (c) {
      comment = rest.slice(c.index + c[0].length).trim();
      rest = rest.slice(0, c.index);
    }
    value = rest.trim();
  }
  return comment === undefined ? { key, value, exported, quoted } : { key, value, exported, quoted, comment };
}

function problemsOf(line: string, a: Assignment): string[] {
  const out: string[] = [];
  if (a.exported)
    out.push(`\`export\` is not shell here: NCCL reads a variable named "${line.slice(0, line.indexOf('=')).trim()}"`);
  const name = line.slice(0, line.indexOf('='));
  if (!a.exported && name !== name.trim()) out.push(`spaces around the name: NCCL reads the name "${name}"`);
  const after = line.slice(line.indexOf('=') + 1);
  if (/^\s/.test(after)) out.push('space after `=`: it becomes part of the value');
  if (a.quoted) out.push(`quotes are kept: NCCL reads the value ${JSON.stringify(after.trim())}`);
  if (a.comment !== undefined) out.push(`an inline comment is part of the value: NCCL reads ${JSON.stringify(after)}`);
  if (out.length === 0 && !STRICT.test(line)) {
    if (/\s$/.test(line)) out.push('trailing whitespace is part of the value');
    else if (!/^[A-Z]/.test(line) || /[a-z]/.test(name)) out.push(`"${name}" is not an upper-case NCCL name`);
    else if (after === '') out.push('empty value');
    else out.push('not of the form NAME=VALUE');
  }
  return out;
}

/** One line → an entry, a malformed line, or nothing (blank, column-0 comment). */
export function parseConfLine(rawLine: string, line: number): ConfEntry | ConfMalformed | undefined {
  const raw = sanitize(rawLine.replace(/\r$/, ''));
  if (raw.trim() === '') return undefined;
  if (raw.startsWith('#')) return undefined;
  if (/^\s+#/.test(raw))
    return {
      line,
      raw,
      reason:
        '`#` not in column 0: NCCL does not treat it as a comment' +
        (raw.includes('=') ? ' and reads a variable from it' : ''),
    };
  const a = parseAssignment(raw);
  if (!a) {
    return {
      line,
      raw,
      reason: raw.includes('=') ? 'the name before `=` is not a variable name' : 'no `=`: NCCL ignores the line',
    };
  }
  const eq = raw.indexOf('=');
  const entry: ConfEntry = {
    line,
    raw: raw.trimEnd(),
    key: a.key,
    value: a.value,
    ncclKey: raw.slice(0, eq),
    ncclValue: raw.slice(eq + 1),
    exported: a.exported,
    quoted: a.quoted,
    problems: problemsOf(raw, a),
  };
  if (a.comment !== undefined) entry.comment = a.comment;
  return entry;
}

export function isMalformed(x: ConfEntry | ConfMalformed): x is ConfMalformed {
  return (x as ConfMalformed).reason !== undefined;
}

/** Parses KEY=VALUE text. `firstLine` offsets line numbers (for a block inside a larger file). Never throws. */
export function parseNcclConf(text: string, firstLine = 1): NcclConfFacts {
  const facts: NcclConfFacts = { vars: {}, entries: [], malformed: [] };
  if (typeof text !== 'string') return facts;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const r = parseConfLine(lines[i] ?? '', firstLine + i);
    if (!r) continue;
    if (isMalformed(r)) facts.malformed.push(r);
    else {
      facts.entries.push(r);
      // NCCL applies the file with setenv(name, value, 0) line by line: the first definition wins.
      if (!(r.key in facts.vars)) facts.vars[r.key] = r.value;
    }
  }
  return facts;
}

/** The corrected, strict form of an entry (`NAME=value`), for fixes. */
export function strictLine(e: Pick<ConfEntry, 'key' | 'value'>): string {
  return `${e.key}=${e.value}`;
}
