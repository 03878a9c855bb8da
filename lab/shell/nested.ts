/**
 * Running a script inside a command (bash -s, sudo, env). just-bash's sub-executions do not
 * inherit the caller's exported variables reliably, so the child starts from an empty
 * environment and a prelude exports exactly what a real child process would receive, then sets
 * the positional parameters. That makes `sudo -n -- env LC_ALL=C bash -s -- a b` see LC_ALL, $1
 * and $2, and nothing of the SSH session's environment that sudo's env_reset would drop.
 */
import { latin1FromBytes, type ExecResult, type ResolvedCommandContext } from 'just-bash';
import { errnoText, errorPath } from '../fs/vfs.js';
import { levelOf, type ExecLevel, type OutputSink } from '../system/exec-context.js';
import { LIVE_ENV, nestedSinks } from '../system/live.js';
import { shellQuote } from './args.js';
import { rewriteStderr } from './notfound.js';

/** Shell variables bash maintains itself; exporting them would fail or lie. */
const NOT_EXPORTABLE = new Set([
  'UID',
  'EUID',
  'PPID',
  'BASHPID',
  'SHELLOPTS',
  'BASHOPTS',
  'PWD',
  'OLDPWD',
  'IFS',
  'OPTIND',
  'HOSTTYPE',
  'MACHTYPE',
  'OSTYPE',
  'BASH',
  'BASH_VERSION',
  'RANDOM',
  'SECONDS',
  'LINENO',
  '_',
  'PIPESTATUS',
  'GROUPS',
]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The environment a child process of this command would inherit (without the lab's live-output marker). */
export function childEnv(ctx: ResolvedCommandContext): Record<string, string> {
  const env = ctx.exportedEnv ? { ...ctx.exportedEnv } : Object.fromEntries(ctx.env);
  delete env[LIVE_ENV];
  return env;
}

export function exportPrelude(env: Record<string, string>): string {
  const words = Object.entries(env)
    .filter(([k]) => NAME.test(k) && !NOT_EXPORTABLE.has(k))
    .map(([k, v]) => `${k}=${shellQuote(v)}`);
  return words.length > 0 ? `export ${words.join(' ')}\n` : '';
}

export interface NestedOptions {
  env: Record<string, string>;
  positional?: readonly string[];
  /** Bytes for the script's stdin (latin1-shaped); default none. */
  stdin?: string;
  /** `set` flags to apply first, e.g. ['-e', '-o pipefail']. */
  setFlags?: readonly string[];
  cwd?: string;
  /** Effective uid of the script (sudo: 0); default the caller's. */
  uid?: number;
}

/** just-bash's limit on nested executions, which the lab's nested levels keep (see runNested). */
const MAX_EXEC_DEPTH = 64;

export async function runNested(ctx: ResolvedCommandContext, script: string, opts: NestedOptions): Promise<ExecResult> {
  const parent = levelOf(ctx);
  if (!parent) return { stdout: '', stderr: 'bash: cannot execute: no interpreter\n', exitCode: 126 };
  let prelude = exportPrelude(opts.env);
  if (opts.positional && opts.positional.length > 0) prelude += `set -- ${opts.positional.map(shellQuote).join(' ')}\n`;
  for (const flag of opts.setFlags ?? []) prelude += `set ${flag}\n`;
  const execOpts = {
    cwd: opts.cwd ?? ctx.cwd,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(opts.stdin !== undefined ? { stdin: opts.stdin, stdinKind: 'bytes' as const } : {}),
  };
  const root = opts.env.USER === 'root';
  // The script's output streams wherever this command's own output does (system/live.ts).
  const sinks = nestedSinks(ctx.env.get(LIVE_ENV), parent);
  const signal = ctx.signal ?? parent.signal;
  const level: ExecLevel = {
    ...(sinks.stdout ? { stdout: sinks.stdout } : {}),
    ...(sinks.stderr ? { stderr: rewritingSink(sinks.stderr, root) } : {}),
    uid: opts.uid ?? parent.uid,
    ...(signal ? { signal } : {}),
    depth: parent.depth + 1,
    nest: parent.nest,
  };
  // Each level runs in an interpreter of its own, so just-bash's own count of nested executions
  // starts afresh there; the lab counts levels instead, with just-bash's limit and message.
  if (level.depth > MAX_EXEC_DEPTH)
    return { stdout: '', stderr: `bash: maximum nested execution depth (${MAX_EXEC_DEPTH}) exceeded\n`, exitCode: 126 };
  let res: ExecResult;
  try {
    res = await parent.nest(level, prelude + script, execOpts);
  } catch (e) {
    // A redirection the file system refused escapes just-bash's exec(): the script ends there.
    const code = (e as { code?: string }).code;
    if (code === undefined || !/^E[A-Z]+$/.test(code)) throw e;
    return { stdout: '', stderr: `bash: ${errorPath(e) ?? 'line 1'}: ${errnoText(e)}\n`, exitCode: 1 };
  }
  // Rewritten here, where the effective user (sudo apt install vs apt install) is known.
  return { ...res, stderr: rewriteStderr(res.stderr, root) };
}

function rewritingSink(sink: OutputSink, root: boolean): OutputSink {
  return (chunk) => sink(Buffer.from(rewriteStderr(chunk.toString('utf8'), root), 'utf8'));
}

export const stdinBytes = (ctx: ResolvedCommandContext): string => latin1FromBytes(ctx.stdin);
