/**
 * The lexical layer of OpenSSH client configuration, as OpenSSH 9.2's readconf.c and misc.c do it: the
 * keyword split (strdelim: whitespace, one `=`, double quotes), argument splitting (argv_split: quotes,
 * backslash escapes, `#` comments), `~`/`~user`, `%x` tokens and `${ENV}` expansion, time values and the
 * typed values of the options the transport reads. It knows nothing of files and Include (ssh-config-read.ts),
 * Host and Match (ssh-config-match.ts) or which value wins (ssh-config-values.ts). A value OpenSSH refuses makes
 * these functions return undefined or throw a `SshSyntaxError`, so the resolver can refuse the config the way
 * `ssh` does (it exits 255).
 */
import { isIP } from 'node:net';

export type StrictHostKeyChecking = 'yes' | 'no' | 'ask' | 'accept-new';

/** A problem in one value; the resolver adds the file and line. */
export class SshSyntaxError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SshSyntaxError';
  }
}

const WHITESPACE = ' \t\r\n';

/**
 * OpenSSH's strdelim (with `=` splitting): the next word of `s` and what follows it (null at the end). A word
 * ends at whitespace, `=` or a double quote; a double-quoted part is taken whole. Returns null for a quote that
 * is never closed. Used for the keyword and for `Match` criteria, which OpenSSH reads this way (not argv_split).
 */
export function strdelim(s: string): { word: string; rest: string | null } | null {
  let i = 0;
  while (i < s.length && !`${WHITESPACE}"=`.includes(s[i] as string)) i++;
  if (i >= s.length) return { word: s, rest: null };
  const skipSpace = (from: number): number => {
    let j = from;
    while (j < s.length && WHITESPACE.includes(s[j] as string)) j++;
    return j;
  };
  if (s[i] === '"') {
    const close = s.indexOf('"', i + 1);
    if (close < 0) return null;
    return { word: s.slice(0, i) + s.slice(i + 1, close), rest: s.slice(skipSpace(close + 1)) };
  }
  const sawEquals = s[i] === '=';
  let j = skipSpace(i + 1);
  if (!sawEquals && s[j] === '=') j = skipSpace(j + 1);
  return { word: s.slice(0, i), rest: s.slice(j) };
}

/** A config line split like process_config_line: keyword (lower-cased) and the rest, or null for a blank line. */
export function splitConfigLine(line: string): { keyword: string; rest: string } | null {
  const trimmed = line.replace(/[ \t\r\n\f]+$/, '');
  if (trimmed === '') return null;
  let first = strdelim(trimmed);
  if (first === null) return null;
  if (first.word === '') first = first.rest === null ? null : strdelim(first.rest);
  if (first === null || first.word === '' || first.word.startsWith('#')) return null;
  const rest = (first.rest ?? '').replace(/^[ \t\r\n]+/, '');
  return { keyword: first.word.toLowerCase(), rest };
}

/**
 * Splits an argument string like OpenSSH's argv_split (with comments): whitespace separates, single or double
 * quotes group, a backslash escapes a quote, a backslash or (outside quotes) a space, an unquoted `#` at the
 * start of a word ends the line. An unclosed quote throws, as ssh refuses the line ("invalid quotes").
 */
export function splitArgs(text: string): string[] {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c0 = text[i] as string;
    if (c0 === ' ' || c0 === '\t') {
      i++;
      continue;
    }
    if (c0 === '#') break;
    let word = '';
    let quote = '';
    for (; i < n; i++) {
      const c = text[i] as string;
      const next = text[i + 1];
      if (c === '\\') {
        if (next === "'" || next === '"' || next === '\\' || (quote === '' && next === ' ')) {
          word += next;
          i++;
        } else {
          word += c;
        }
      } else if (quote === '' && (c === ' ' || c === '\t')) {
        break;
      } else if (quote === '' && (c === '"' || c === "'")) {
        quote = c;
      } else if (quote !== '' && c === quote) {
        quote = '';
      } else {
        word += c;
      }
    }
    if (i >= n && quote !== '') throw new SshSyntaxError('invalid quotes');
    out.push(word);
  }
  return out;
}

/**
 * Expands a leading `~` like misc.c tilde_expand: `~` and `~/path` use `homeDir` (ssh takes it from the
 * password database, not $HOME), `~user/path` asks `userHome`; an unknown user throws.
 */
export function tildeExpand(path: string, homeDir: string, userHome?: (name: string) => string | undefined): string {
  if (!path.startsWith('~')) return path;
  const body = path.slice(1);
  const slash = body.indexOf('/');
  const name = slash < 0 ? body : body.slice(0, slash);
  const tail = slash < 0 ? '' : body.slice(slash).replace(/^\/+/, '');
  let dir = homeDir;
  if (name !== '') {
    const found = userHome?.(name);
    if (found === undefined) throw new SshSyntaxError(`no such user ${JSON.stringify(name)} for ~${name}`);
    dir = found;
  }
  return dir.endsWith('/') ? `${dir}${tail}` : `${dir}/${tail}`;
}

/**
 * Expands `%x` tokens from `tokens` and, when `env` is given, `${NAME}` from it, like misc.c
 * percent_dollar_expand: `%%` is a percent; an unknown token, a `%` at the end, an unclosed or empty `${}` or
 * an unset variable throws (ssh stops with "unknown key", "invalid format" or "env var has no value").
 */
export function percentExpand(
  text: string,
  tokens: Readonly<Record<string, string>>,
  env?: Readonly<Record<string, string | undefined>>,
): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (env !== undefined && c === '$' && text[i + 1] === '{') {
      const end = text.indexOf('}', i + 2);
      if (end < 0) throw new SshSyntaxError(`environment variable in ${JSON.stringify(text)} has no closing "}"`);
      const name = text.slice(i + 2, end);
      if (name === '') throw new SshSyntaxError(`zero-length environment variable in ${JSON.stringify(text)}`);
      const value = env[name];
      if (value === undefined) throw new SshSyntaxError(`environment variable \${${name}} has no value`);
      out += value;
      i = end;
      continue;
    }
    if (c !== '%') {
      out += c;
      continue;
    }
    const key = text[++i];
    if (key === undefined) throw new SshSyntaxError(`invalid format: ${JSON.stringify(text)} ends in "%"`);
    if (key === '%') {
      out += '%';
      continue;
    }
    const value = tokens[key];
    if (value === undefined) {
      const known = Object.keys(tokens)
        .map((k) => `%${k}`)
        .join(' ');
      throw new SshSyntaxError(`unknown token %${key} in ${JSON.stringify(text)} (this keyword takes ${known} %%)`);
    }
    out += value;
  }
  return out;
}

/** True for what ssh.c calls an address (is_addr): it is not lower-cased and not canonicalised by name. */
export function isAddress(name: string): boolean {
  return name.includes('%') || name.includes(':') || /^[0-9.]*$/.test(name) || isIP(name) !== 0;
}

/** strtonum-style integer: optional leading blanks and sign, digits only, within [min, max]. */
export function parseInteger(value: string | undefined, min: number, max: number): number | undefined {
  const m = /^[ \t\n\r\f\v]*([+-]?\d+)$/.exec(value ?? '');
  if (!m) return undefined;
  const n = Number(m[1]);
  return n >= min && n <= max ? n : undefined;
}

/** a2port: a number 1-65535, or a TCP service name (ssh asks getservbyname, here `servicePort`). */
export function parsePort(value: string, servicePort?: (name: string) => number | undefined): number | undefined {
  const n = parseInteger(value, 0, 65535);
  const port = n ?? servicePort?.(value);
  return port !== undefined && port > 0 ? port : undefined;
}

const TIME_UNITS: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
const INT_MAX = 2_147_483_647;

/** misc.c convtime: `90`, `90s`, `1m`, `1h30m`, `2w`... in seconds; undefined for anything ssh rejects. */
export function parseTime(value: string): number | undefined {
  if (value === '') return undefined;
  let total = 0;
  const re = /[ \t\n\r\f\v]*([+-]?\d+)(.?)/y;
  let at = 0;
  while (at < value.length) {
    re.lastIndex = at;
    const m = re.exec(value);
    if (!m) return undefined;
    const secs = Number(m[1]);
    const multiplier = TIME_UNITS[(m[2] ?? '').toLowerCase()];
    if (secs < 0 || multiplier === undefined || secs > INT_MAX / multiplier) return undefined;
    total += secs * multiplier;
    if (total > INT_MAX) return undefined;
    at = re.lastIndex;
  }
  return total;
}

/** multistate_flag: yes/no/true/false, any case. */
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

/** multistate_strict_hostkey: yes/true, no/false/off, ask, accept-new. */
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

/** One ProxyJump hop, as parse_user_host_port / parse_ssh_uri read it. */
export interface JumpHop {
  user?: string;
  host: string;
  port?: number;
}

function parseHop(text: string, servicePort?: (name: string) => number | undefined): JumpHop | undefined {
  let rest = text;
  let user: string | undefined;
  const uri = rest.startsWith('ssh://');
  if (uri) rest = rest.slice(6);
  const at = uri ? rest.indexOf('@') : rest.lastIndexOf('@');
  if (at >= 0) {
    user = rest.slice(0, at);
    if (uri) user = user.split(';')[0] as string;
    if (user === '') return undefined;
    rest = rest.slice(at + 1);
  }
  let host: string;
  let portText: string | undefined;
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return undefined;
    host = rest.slice(1, close);
    const after = rest.slice(close + 1);
    if (after !== '' && !after.startsWith(':') && !(uri && after.startsWith('/'))) return undefined;
    portText = after.startsWith(':') ? after.slice(1) : undefined;
  } else {
    const sep = rest.search(uri ? /[:/]/ : /:/);
    host = sep < 0 ? rest : rest.slice(0, sep);
    portText = sep >= 0 && rest[sep] === ':' ? rest.slice(sep + 1) : undefined;
  }
  if (uri && portText !== undefined) portText = portText.split('/')[0];
  if (host === '') return undefined;
  const hop: JumpHop = { host };
  if (user !== undefined) hop.user = user;
  if (portText !== undefined && portText !== '') {
    const port = parsePort(portText, servicePort);
    if (port === undefined) return undefined;
    hop.port = port;
  }
  return hop;
}

/**
 * A ProxyJump value (`[user@]host[:port]`, `ssh://`, several hops separated by commas) checked like
 * readconf.c parse_jump; undefined when ssh would refuse it. `none` gives `{ none: true }`.
 */
export function parseProxyJump(
  value: string,
  servicePort?: (name: string) => number | undefined,
): { none: true } | { none: false; hops: JumpHop[]; text: string } | undefined {
  const text = value.split('#')[0]!.replace(/[ \t\r\n]+$/, '');
  if (value.toLowerCase() === 'none') return { none: true };
  const hops: JumpHop[] = [];
  for (const part of text.split(',')) {
    const hop = parseHop(part, servicePort);
    if (hop === undefined) return undefined;
    hops.push(hop);
  }
  const last = hops[hops.length - 1] as JumpHop;
  const extra = text.includes(',') ? text.slice(0, text.lastIndexOf(',')) : '';
  const bracket = last.host.includes(':') || /^[0-9.]*$/.test(last.host);
  const formatted =
    (extra === '' ? '' : `${extra},`) +
    (last.user === undefined ? '' : `${last.user}@`) +
    (bracket ? `[${last.host}]` : last.host) +
    (last.port === undefined ? '' : `:${last.port}`);
  return { none: false, hops, text: formatted };
}
