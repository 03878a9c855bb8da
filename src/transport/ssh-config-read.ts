/**
 * Reading OpenSSH client configuration files the way readconf.c does: each line split into its keyword and
 * arguments, unknown keywords refused (unless IgnoreUnknown names them), `Include` followed (globs, `~`,
 * relative paths from ~/.ssh or /etc/ssh, at most 16 deep; an included file cannot change the including block),
 * the owner and mode check, and every refusal as an `SshConfigError` naming the file and line. What a `Host` or
 * `Match` line selects and what an option line sets is the caller's (a `ConfigLineHandler`): this module only
 * says which block a line is in.
 */
import { posix } from 'node:path';
import { FileRefusedError } from '../util/read-file-safely.js';
import type { SshConfigContext, SshConfigFile } from './ssh-config-context.js';
import { OPENSSH_KEYWORDS } from './ssh-config-keywords.js';
import { splitArgs, splitConfigLine } from './ssh-config-parse.js';
import { matchPatternList } from './ssh-pattern.js';

const MAX_INCLUDE_DEPTH = 16;

/** A config that OpenSSH refuses (`ssh` exits 255): the file, line and reason. */
export class SshConfigError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
  ) {
    super(`${file}${line === undefined ? '' : ` line ${line}`}: ${reason}`);
    this.name = 'SshConfigError';
  }
}

/** Refuses the config at the line being read (throws an SshConfigError for it). */
export type ConfigFail = (reason: string) => never;

/** An option line: its keyword (lower-cased), its arguments split as ssh splits them, and the raw rest. */
export interface OptionLine {
  keyword: string;
  args: string[];
  /** The text after the keyword, unsplit (ProxyCommand and ProxyJump take it whole). */
  rest: string;
  /** `file:line`. */
  where: string;
}

/** What one pass over the files does with the lines that select blocks and the lines that set options. */
export interface ConfigLineHandler {
  /** The IgnoreUnknown patterns obtained so far: unknown keywords they match are skipped. */
  ignoreUnknown(): string | undefined;
  /** Whether a `Host` line's patterns select the host (an empty pattern refuses the config). */
  host(patterns: readonly string[], fail: ConfigFail): boolean;
  /** Whether a `Match` line's criteria (the text after the keyword) hold; evaluated even in an unread include. */
  match(criteria: string, where: string, fail: ConfigFail): boolean;
  /** An option line; `active` when its block applies to the host (ssh validates the value either way). */
  option(line: OptionLine, active: boolean, fail: ConfigFail): void;
}

/** Which block the reader is in: whether the last Host or Match line selected the host. */
interface BlockState {
  active: boolean;
}

/**
 * Reads `files` in order, as one pass of ssh's config parsing, telling `handler` every Host, Match and option
 * line. Each file read (included ones too) is appended to `filesRead`. Throws SshConfigError where ssh refuses.
 */
export function readConfigFiles(
  files: readonly SshConfigFile[],
  ctx: SshConfigContext,
  handler: ConfigLineHandler,
  filesRead: string[],
): void {
  for (const f of files) readConfig(f, ctx, handler, filesRead, { active: true }, false, 0);
}

/**
 * One file. `neverMatch`: the file is included from a block that does not apply, so nothing in it applies
 * either, though every line is still checked (as ssh's `Include` in a non-matching block does).
 */
function readConfig(
  file: SshConfigFile,
  ctx: SshConfigContext,
  handler: ConfigLineHandler,
  filesRead: string[],
  state: BlockState,
  neverMatch: boolean,
  depth: number,
  includedAt?: string,
): void {
  if (depth > MAX_INCLUDE_DEPTH) {
    const [inFile, inLine] = splitWhere(includedAt ?? file.path);
    throw new SshConfigError(inFile, inLine, 'Too many recursive configuration includes');
  }
  const text = readConfigText(ctx, file.path);
  if (text === undefined) {
    if (file.required) throw new SshConfigError(file.path, undefined, "Can't open user config file");
    return;
  }
  if (file.checkPerm && ctx.statFile) {
    const st = ctx.statFile(file.path);
    if (st && ((st.uid !== 0 && st.uid !== ctx.uid) || (st.mode & 0o022) !== 0)) {
      throw new SshConfigError(file.path, undefined, `Bad owner or permissions on ${file.path}`);
    }
  }
  filesRead.push(file.path);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) {
    const where = `${file.path}:${i + 1}`;
    const fail = (reason: string): never => {
      throw new SshConfigError(file.path, i + 1, reason);
    };
    const parsed = splitConfigLine(lines[i] ?? '');
    if (!parsed) continue;
    const { keyword, rest } = parsed;
    if (rest === '') fail(`no argument after keyword "${keyword}"`);
    if (!OPENSSH_KEYWORDS.has(keyword)) {
      const ignoreUnknown = handler.ignoreUnknown();
      const ignored = ignoreUnknown !== undefined && matchPatternList(keyword, ignoreUnknown, true) === 1;
      if (!ignored) fail(`Bad configuration option: ${keyword}`);
      continue;
    }
    let args: string[];
    try {
      args = splitArgs(rest);
    } catch {
      return fail('invalid quotes');
    }
    const active = state.active;
    switch (keyword) {
      case 'host': {
        // In an unread include ssh stops at the first pattern, so only that one is checked.
        if (neverMatch && args[0] === '') fail('keyword host empty argument');
        state.active = neverMatch ? false : handler.host(args, fail);
        break;
      }
      case 'match': {
        const value = handler.match(rest, where, fail);
        state.active = neverMatch ? false : value;
        break;
      }
      case 'include': {
        for (const raw of args) {
          if (raw === '') fail('keyword include empty argument');
          if (raw.startsWith('~') && file.kind !== 'user') fail(`bad include path ${raw}`);
          const anchored =
            raw.startsWith('/') || raw.startsWith('~') ? raw : `${file.kind === 'user' ? '~/.ssh' : '/etc/ssh'}/${raw}`;
          const pattern = globTilde(anchored, ctx);
          for (const path of globPaths(pattern, ctx)) {
            const sub: SshConfigFile = { path, kind: file.kind, checkPerm: true };
            readConfig(sub, ctx, handler, filesRead, state, neverMatch || !active, depth + 1, where);
            state.active = active; // a Match inside an include does not change the including file's state
          }
        }
        break;
      }
      default:
        handler.option({ keyword, args, rest, where }, active, fail);
    }
  }
}

/** ctx.readFile with a refused file reported as ssh reports a bad config: by file. */
function readConfigText(ctx: SshConfigContext, path: string): string | undefined {
  try {
    return ctx.readFile(path);
  } catch (err) {
    if (err instanceof FileRefusedError) throw new SshConfigError(path, undefined, err.reason);
    throw err;
  }
}

const GLOB_MAGIC = /[*?[]/;

/** glob(3) without GLOB_NOCHECK: existing paths matching `pattern`, sorted per directory; dotfiles need a dot. */
function globPaths(pattern: string, ctx: SshConfigContext): string[] {
  if (!GLOB_MAGIC.test(pattern)) return readConfigText(ctx, pattern) === undefined ? [] : [pattern];
  const listDir = ctx.listDir ?? (() => []);
  const segments = pattern.split('/');
  let current = [segments[0] === '' ? '/' : '.'];
  for (const seg of segments.slice(segments[0] === '' ? 1 : 0)) {
    if (seg === '') continue;
    const next: string[] = [];
    for (const base of current) {
      if (GLOB_MAGIC.test(seg)) {
        const names = listDir(base)
          .filter((name) => !name.startsWith('.') || seg.startsWith('.'))
          .filter((name) => globSegmentMatch(name, seg))
          .sort();
        for (const name of names) next.push(posix.join(base, name));
      } else {
        next.push(posix.join(base, seg));
      }
    }
    current = next;
  }
  return current.filter((p) => readConfigText(ctx, p) !== undefined);
}

/** fnmatch-style glob of one path segment (`*`, `?`, `[...]`), as glob(3) matches file names. */
function globSegmentMatch(name: string, pattern: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close < 0) {
        re += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, close);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      re += `[${negate ? '^' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = close;
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`${re}$`, 's').test(name);
}

/** Include's glob(3) GLOB_TILDE: `~` is $HOME (else the home directory), `~user` that user's home. */
function globTilde(pattern: string, ctx: SshConfigContext): string {
  if (!pattern.startsWith('~')) return pattern;
  const slash = pattern.indexOf('/');
  const name = slash < 0 ? pattern.slice(1) : pattern.slice(1, slash);
  const tail = slash < 0 ? '' : pattern.slice(slash);
  const home = name === '' ? (ctx.env?.HOME ?? ctx.homeDir) : ctx.userHome?.(name);
  return home === undefined ? pattern : `${home}${tail}`;
}

/** Splits "file:line" (the file may contain colons). */
export function splitWhere(where: string): [string, number | undefined] {
  const m = /^(.*):(\d+)$/.exec(where);
  return m ? [m[1] as string, Number(m[2])] : [where, undefined];
}
