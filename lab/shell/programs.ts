/**
 * Programs that live outside /usr/bin: a venv's `python`, `pip`, `torchrun`, `ray`, `vllm`
 * (docs/STAGES.md §3.9–3.11 run them by absolute path, `/opt/l20/venv/bin/torchrun …`). just-bash only
 * dispatches a registered command when its path is `/bin/NAME` or `/usr/bin/NAME`; any other
 * executable file is run as a bash script, and its script runner passes no more than nine
 * positional parameters ("$@" loses the rest). So such programs cannot be shell scripts.
 *
 * Instead a transform plugin rewrites every simple command whose name is a literal path with a
 * registered basename (`/opt/l20/venv/bin/torchrun a b`) into `__lab_exec /opt/l20/venv/bin/torchrun
 * a b`, before the interpreter runs it; arguments stay the parsed words, so quoting and argument
 * counts are exact. `__lab_exec` then does what the kernel would: no file → bash's `No such file
 * or directory` (127), a directory or a file without an x bit → 126, otherwise the first
 * registered program whose `accepts` recognises the file (a Python console-script entry point,
 * the venv interpreter) runs; a file no program claims runs as the shell script it is.
 *
 * Names built at run time are rewritten when their literal tail names the program
 * (`"$HOME/.local/bin/torchrun"`); `__lab_exec` then sees the expanded path. Limits: commands found
 * through PATH (after `source bin/activate`) and names with no literal tail (`$TR …`) are not
 * rewritten; the stages use literal paths.
 */
import { posix } from 'node:path';
import {
  defineCommand,
  type Command,
  type ExecResult,
  type ResolvedCommandContext,
  type ScriptNode,
  type WordNode,
} from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import type { Machine } from '../model/types.js';
import { isRoot, type ToolEnv } from '../tools/types.js';
import { childEnv, runNested, stdinBytes } from './nested.js';

export const EXEC_COMMAND = '__lab_exec';

export interface ProgramInvocation extends ToolEnv {
  /** The path as the caller wrote it, resolved against the working directory. */
  path: string;
  /** The file's content (a symlink's target's content). */
  content: string;
  args: string[];
}

export interface Program {
  /** For messages and tests. */
  name: string;
  /** Basenames the rewrite applies to (`torchrun`, `python3`, …). */
  basenames: readonly string[];
  /** Whether this program is what `path` holds. */
  accepts(path: string, content: string): boolean;
  run(inv: ProgramInvocation): Promise<ExecResult> | ExecResult;
}

const programs: Program[] = [];
const basenames = new Set<string>();

/** Registers a program (idempotent by name: re-registering replaces it). */
export function registerProgram(p: Program): void {
  const at = programs.findIndex((x) => x.name === p.name);
  if (at >= 0) programs.splice(at, 1, p);
  else programs.push(p);
  for (const b of p.basenames) basenames.add(b);
}

function literalName(w: WordNode | null): string | undefined {
  if (!w || w.parts.length !== 1) return undefined;
  const p = w.parts[0];
  return p && (p.type === 'Literal' || p.type === 'SingleQuoted') ? p.value : undefined;
}

/** The literal text a word ends with (`"$HOME/.local/bin/torchrun"` → `/.local/bin/torchrun`). */
function literalTail(w: WordNode | null): string | undefined {
  let parts: readonly unknown[] | undefined = w?.parts;
  for (;;) {
    const last = parts?.[parts.length - 1] as { type?: string; value?: string; parts?: unknown[] } | undefined;
    if (!last) return undefined;
    if (last.type === 'Literal' || last.type === 'SingleQuoted') return last.value;
    if (last.type === 'DoubleQuoted' && last.parts) {
      parts = last.parts;
      continue;
    }
    return undefined;
  }
}

/** Paths the dispatcher takes over: a registered basename, not in /usr/bin or /bin (native dispatch). */
export function isProgramPath(name: string): boolean {
  if (!name.includes('/')) return false;
  if (/^\/(usr\/)?s?bin\/[^/]+$/.test(name)) return false;
  return basenames.has(posix.basename(name));
}

function rewrite(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) rewrite(n);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as { type?: string; name?: WordNode | null; args?: WordNode[] };
  if (o.type === 'SimpleCommand' && o.args) {
    const name = literalName(o.name ?? null);
    // A literal path, or an expanded one whose literal tail names the program (`"$HOME/.local/bin/torchrun"`).
    const tail = name === undefined ? literalTail(o.name ?? null) : undefined;
    const dynamic = tail !== undefined && tail.includes('/') && basenames.has(posix.basename(tail));
    if (((name !== undefined && isProgramPath(name)) || dynamic) && o.name) {
      o.args.unshift(o.name);
      o.name = { type: 'Word', parts: [{ type: 'Literal', value: EXEC_COMMAND }] };
    }
  }
  for (const v of Object.values(o)) if (v && typeof v === 'object') rewrite(v);
}

/** The just-bash transform plugin (register once per interpreter). */
export function programsPlugin(): { name: string; transform(c: { ast: ScriptNode }): { ast: ScriptNode } } {
  return {
    name: 'lab-programs',
    transform({ ast }) {
      if (basenames.size > 0) rewrite(ast.statements);
      return { ast };
    },
  };
}

const fail = (stderr: string, exitCode: number): ExecResult => ({ stdout: '', stderr, exitCode });

/** `__lab_exec PATH ARGS…`: exec(2) of a file by path, as the rewrite above produces it. */
export function programCommand(machine: Machine, cluster: Cluster): Command {
  return defineCommand(EXEC_COMMAND, async (argv, ctx: ResolvedCommandContext) => {
    const [written, ...args] = argv;
    if (written === undefined) return fail(`${EXEC_COMMAND}: missing operand\n`, 2);
    const path = ctx.fs.resolvePath(ctx.cwd, written);
    let st;
    try {
      st = await ctx.fs.stat(path);
    } catch {
      return fail(`bash: ${written}: No such file or directory\n`, 127);
    }
    if (st.isDirectory) return fail(`bash: ${written}: Is a directory\n`, 126);
    if ((st.mode & 0o111) === 0) return fail(`bash: ${written}: Permission denied\n`, 126);
    let content = '';
    try {
      content = await ctx.fs.readFile(path);
    } catch {
      return fail(`bash: ${written}: Permission denied\n`, 126);
    }
    const program = programs.find((p) => p.accepts(path, content));
    if (program) return program.run({ machine, cluster, ctx, root: isRoot(ctx), path, content, args });
    // Not a modelled program: a script, run as the kernel would run it (through its interpreter).
    const body = content.startsWith('#!') ? content.slice(content.indexOf('\n') + 1) : content;
    return runNested(ctx, body, { env: childEnv(ctx), positional: args, stdin: stdinBytes(ctx) });
  });
}
