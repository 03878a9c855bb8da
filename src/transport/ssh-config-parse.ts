/**
 * The lexical layer of OpenSSH client configuration, as readconf.c and misc.c do it: splitting a line into
 * keyword and arguments (`key value`, `key=value`, quoted words, `#` comments), `%x` token and `~`
 * expansion, and the typed values of the options the transport reads (flags, StrictHostKeyChecking,
 * bounded integers). It knows nothing of Host matching, Include or which value wins; that is
 * ssh-config.ts. Kept apart so the quoting rules, which must match ssh's exactly, can be tested and read
 * on their own.
 */
import { posix } from 'node:path';

export type StrictHostKeyChecking = 'yes' | 'no' | 'ask' | 'accept-new';

/**
 * Splits an argument string like OpenSSH's argv_split: whitespace separates, single or double quotes group,
 * a backslash escapes the next character (outside single quotes), an unquoted word starting with `#` ends
 * the line.
 */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i >= n) break;
    if (text[i] === '#') break;
    let word = '';
    let quote: '"' | "'" | null = null;
    for (; i < n; i++) {
      const c = text[i] as string;
      if (quote === null && (c === ' ' || c === '\t')) break;
      if (c === '\\' && quote !== "'" && i + 1 < n) {
        const next = text[i + 1] as string;
        if (next === '\\' || next === '"' || next === "'" || next === ' ' || next === '\t') {
          word += next;
          i++;
          continue;
        }
        word += c;
        continue;
      }
      if (quote === null && (c === '"' || c === "'")) {
        quote = c;
        continue;
      }
      if (quote !== null && c === quote) {
        quote = null;
        continue;
      }
      word += c;
    }
    out.push(word);
  }
  return out;
}

/** Splits a config line into keyword and arguments (`key value`, `key=value`, `key = value`). */
export function splitConfigLine(line: string): { keyword: string; rest: string } | null {
  const m = /^[ \t]*([^ \t=]+)[ \t]*(?:=[ \t]*)?(.*)$/.exec(line.replace(/\r$/, ''));
  if (!m || m[1] === undefined) return null;
  if (m[1].startsWith('#')) return null;
  return { keyword: m[1].toLowerCase(), rest: (m[2] ?? '').trim() };
}

/** Expands a leading `~` to the home directory, as ssh does for paths in its config. */
export function tildeExpand(path: string, homeDir: string): string {
  if (path === '~') return homeDir;
  if (path.startsWith('~/')) return posix.join(homeDir, path.slice(2));
  return path;
}

/** Expands `%x` tokens from `tokens`; `%%` is a literal percent. Unknown tokens are left as they are. */
export function percentExpand(text: string, tokens: Readonly<Record<string, string>>, unknown?: (token: string) => void): string {
  return text.replace(/%(.)/g, (whole, ch: string) => {
    if (ch === '%') return '%';
    const v = tokens[ch];
    if (v === undefined) {
      unknown?.(whole);
      return whole;
    }
    return v;
  });
}

/**
 * Option value parsers. They return undefined for a value ssh would reject, so the resolver can warn and
 * ignore the line instead of guessing.
 */
export function parseFlag(value: string | undefined): boolean | undefined {
  switch (value?.toLowerCase()) {
    case 'yes':
    case 'true':
      return true;
    case 'no':
    case 'false':
      return false;
    default:
      return undefined;
  }
}

export function parseStrict(value: string | undefined): StrictHostKeyChecking | undefined {
  switch (value?.toLowerCase()) {
    case 'yes':
    case 'true':
      return 'yes';
    case 'no':
    case 'false':
    case 'off':
      return 'no';
    case 'ask':
      return 'ask';
    case 'accept-new':
      return 'accept-new';
    default:
      return undefined;
  }
}

export function parseInteger(value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}
