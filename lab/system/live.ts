/**
 * Streaming output. just-bash collects a command's output and hands it on when the command ends,
 * so without help a script's output would reach the client only when the whole script finished.
 *
 * How the lab streams: every script a level runs (see exec-context.ts) is rewritten before it
 * runs, by a just-bash transform plugin on its syntax tree (one per level's interpreter). Each simple command whose stdout or
 * stderr is the level's own — not piped onward, not redirected to a file, not inside `$(…)` —
 * gets redirections to two lab devices prepended, `>>/dev/.lab-out 2>>/dev/.lab-err` (the
 * command's own redirections come after them, so `2>&1`, `>&2` or `>file` keep their meaning).
 * The file system hands whatever is written there to the level's sinks at once, so a command's
 * output leaves as soon as that command ends, in order with everything else.
 *
 * Lab commands that run for a long time write while they run: the rewrite also gives the command
 * an environment marker (LIVE_ENV, e.g. `oe` = stdout to the level's stdout, stderr to its
 * stderr; `-` = captured), which toolIo() reads. Lab commands that run scripts (sudo, env, bash,
 * sh, services) start a new level whose sinks follow the marker and strip it from the child's
 * environment.
 *
 * Limits: a streaming command piped into another command (`ib_write_bw … | grep BW`) or
 * redirected to a file delivers its output when it ends, as just-bash pipes are not concurrent;
 * shell functions' output leaves when the function returns.
 */
import type { ExecResult, ResolvedCommandContext } from 'just-bash';
import type { CommandNode, ScriptNode, SimpleCommandNode, StatementNode, WordNode } from 'just-bash';
import type { SimClock } from '../util/clock.js';
import { levelOf, type ExecLevel, type OutputSink } from './exec-context.js';

/** The two write-only lab devices the rewrite points fd 1 and fd 2 at. */
export const LIVE_OUT = '/dev/.lab-out';
export const LIVE_ERR = '/dev/.lab-err';
/** Environment marker: two characters, the destinations of fd 1 and fd 2 (`o`, `e` or `-`). */
export const LIVE_ENV = '__LAB_LIVE';

type Dest = 'o' | 'e' | '-';
interface FdMap {
  out: Dest;
  err: Dest;
}

/** Redirection shapes the plugin writes and reads (just-bash's RedirectionNode, not re-exported). */
interface Redirection {
  type: 'Redirection';
  fd: number | null;
  operator: string;
  target: WordNode | { type: 'HereDoc' };
}

const literal = (value: string): WordNode => ({ type: 'Word', parts: [{ type: 'Literal', value }] });

function wordText(w: Redirection['target'] | WordNode | null): string | undefined {
  if (!w || w.type !== 'Word' || w.parts.length !== 1) return undefined;
  const p = w.parts[0];
  return p && (p.type === 'Literal' || p.type === 'SingleQuoted') ? p.value : undefined;
}

/** Where fd 1 and fd 2 end up after `redirs`, applied left to right as bash does. */
function applyRedirections(map: FdMap, redirs: readonly Redirection[]): FdMap {
  const fds: Record<number, Dest> = { 1: map.out, 2: map.err };
  for (const r of redirs) {
    switch (r.operator) {
      case '>':
      case '>>':
      case '>|':
      case '<>':
        fds[r.fd ?? 1] = '-';
        break;
      case '&>':
      case '&>>':
        fds[1] = '-';
        fds[2] = '-';
        break;
      case '>&': {
        const t = wordText(r.target);
        if (t !== undefined && /^\d+$/.test(t)) fds[r.fd ?? 1] = fds[Number(t)] ?? '-';
        else if (t === '-') fds[r.fd ?? 1] = '-';
        else if (r.fd === null) {
          // `>&word` with a file name is `&>word`.
          fds[1] = '-';
          fds[2] = '-';
        } else fds[r.fd] = '-';
        break;
      }
      default:
        if (r.fd === 1 || r.fd === 2) fds[r.fd] = '-';
    }
  }
  return { out: fds[1] ?? '-', err: fds[2] ?? '-' };
}

const device = (d: Dest): string => (d === 'o' ? LIVE_OUT : LIVE_ERR);

function collectFunctionNames(node: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) collectFunctionNames(n, into);
  else if (node && typeof node === 'object') {
    const o = node as { type?: string; name?: unknown };
    if (o.type === 'FunctionDef' && typeof o.name === 'string') into.add(o.name);
    for (const v of Object.values(o)) if (v && typeof v === 'object') collectFunctionNames(v, into);
  }
  return into;
}

class Marker {
  constructor(private readonly noMarker: ReadonlySet<string>) {}

  statements(stmts: readonly StatementNode[], map: FdMap): void {
    for (const st of stmts) {
      for (const p of st.pipelines) {
        const n = p.commands.length;
        p.commands.forEach((c, i) => {
          const last = i === n - 1;
          this.command(c, { out: last ? map.out : '-', err: !last && p.pipeStderr?.[i] ? '-' : map.err });
        });
      }
    }
  }

  private command(c: CommandNode, map: FdMap): void {
    if (c.type === 'SimpleCommand') return this.simple(c, map);
    if (c.type === 'FunctionDef' || c.type === 'ArithmeticCommand' || c.type === 'ConditionalCommand') return;
    const inner = applyRedirections(map, c.redirections as unknown as Redirection[]);
    if (inner.out === '-' && inner.err === '-') return;
    switch (c.type) {
      case 'If':
        for (const cl of c.clauses) {
          this.statements(cl.condition, inner);
          this.statements(cl.body, inner);
        }
        if (c.elseBody) this.statements(c.elseBody, inner);
        return;
      case 'While':
      case 'Until':
        this.statements(c.condition, inner);
        this.statements(c.body, inner);
        return;
      case 'For':
      case 'CStyleFor':
      case 'Subshell':
      case 'Group':
        this.statements(c.body, inner);
        return;
      case 'Case':
        for (const item of c.items) this.statements(item.body, inner);
        return;
    }
  }

  private simple(c: SimpleCommandNode, map: FdMap): void {
    if (map.out === '-' && map.err === '-') return;
    const name = wordText(c.name);
    // `exec` without a command would make the redirection permanent for the whole script. An
    // assignment alone (`x=$(cmd)`) is left as it is: just-bash would drop its command
    // substitution's stderr if the statement had a redirection.
    if (name === 'exec' || c.name === null) return;
    const own = c.redirections as unknown as Redirection[];
    const eff = applyRedirections(map, own);
    const added: Redirection[] = [];
    if (map.out !== '-')
      added.push({ type: 'Redirection', fd: null, operator: '>>', target: literal(device(map.out)) });
    if (map.err !== '-') added.push({ type: 'Redirection', fd: 2, operator: '>>', target: literal(device(map.err)) });
    (c.redirections as unknown as Redirection[]).unshift(...added);
    // Builtins and functions run in this shell: a marker there would be exported to everything
    // they run. Dynamic command names get none either.
    if (name === undefined || this.noMarker.has(name) || (eff.out === '-' && eff.err === '-')) return;
    c.assignments.push({
      type: 'Assignment',
      name: LIVE_ENV,
      value: literal(`${eff.out}${eff.err}`),
      append: false,
      array: null,
    });
  }
}

/**
 * The just-bash transform plugin of one level's interpreter; `builtins` are names that never get
 * the marker. Only the first script the interpreter parses is the level's own: later ones are
 * sub-executions of its commands (`xargs`, `timeout`), whose output the command collects.
 */
export function liveOutputPlugin(
  level: ExecLevel,
  builtins: ReadonlySet<string>,
): { name: string; transform(c: { ast: ScriptNode }): { ast: ScriptNode } } {
  let first = true;
  return {
    name: 'lab-live-output',
    transform({ ast }) {
      if (!first) return { ast };
      first = false;
      const map: FdMap = { out: level.stdout ? 'o' : '-', err: level.stderr ? 'e' : '-' };
      if (map.out === '-' && map.err === '-') return { ast };
      const noMarker = collectFunctionNames(ast, new Set(builtins));
      new Marker(noMarker).statements(ast.statements, map);
      return { ast };
    },
  };
}

/** The sinks of a nested level started by a command that carries `marker` (LIVE_ENV). */
export function nestedSinks(
  marker: string | undefined,
  parent: ExecLevel | undefined,
): { stdout?: OutputSink; stderr?: OutputSink } {
  const pick = (c: string | undefined): OutputSink | undefined =>
    c === 'o' ? parent?.stdout : c === 'e' ? parent?.stderr : undefined;
  const stdout = pick(marker?.[0]);
  const stderr = pick(marker?.[1]);
  return { ...(stdout ? { stdout } : {}), ...(stderr ? { stderr } : {}) };
}

/** Routes a write to LIVE_OUT/LIVE_ERR to the level's sinks (none outside a level); false for any other path. */
export async function writeLiveDevice(
  level: ExecLevel | undefined,
  path: string,
  content: unknown,
  encoding: unknown,
): Promise<boolean> {
  if (path !== LIVE_OUT && path !== LIVE_ERR) return false;
  const sink = path === LIVE_OUT ? level?.stdout : level?.stderr;
  const bytes =
    content instanceof Uint8Array
      ? Buffer.from(content)
      : Buffer.from(String(content ?? ''), encoding === 'binary' || encoding === 'latin1' ? 'latin1' : 'utf8');
  if (sink && bytes.length > 0) await sink(bytes);
  return true;
}

/** Output helpers for a lab command that produces output over time. */
export interface ToolIo {
  /** Whether stdout / stderr reach their destination while the command runs. */
  readonly live: { stdout: boolean; stderr: boolean };
  readonly signal: AbortSignal | undefined;
  /** Writes to stdout now when it is live, else keeps it for the result. */
  out(text: string): Promise<void>;
  err(text: string): Promise<void>;
  /** Waits `ms` of modelled time (scaled by the lab speed, none at 'max'); false when cancelled. */
  sleep(ms: number): Promise<boolean>;
  /** What to return from the command: whatever was not written live, and the exit code. */
  result(exitCode: number): ExecResult;
}

/**
 * For a command's implementation: `const io = toolIo(ctx, machine.clock)`, then `await io.out(…)`
 * and `await io.sleep(…)` in turn, and `return io.result(code)`.
 */
export function toolIo(ctx: ResolvedCommandContext, clock: SimClock): ToolIo {
  const level = levelOf(ctx);
  const marker = ctx.env.get(LIVE_ENV) ?? '';
  const pick = (c: string | undefined): OutputSink | undefined =>
    c === 'o' ? level?.stdout : c === 'e' ? level?.stderr : undefined;
  const toOut = pick(marker[0]);
  const toErr = pick(marker[1]);
  let keptOut = '';
  let keptErr = '';
  const signal = ctx.signal ?? level?.signal;
  return {
    live: { stdout: toOut !== undefined, stderr: toErr !== undefined },
    signal,
    async out(text) {
      if (toOut) await toOut(Buffer.from(text, 'utf8'));
      else keptOut += text;
    },
    async err(text) {
      if (toErr) await toErr(Buffer.from(text, 'utf8'));
      else keptErr += text;
    },
    sleep: (ms) => clock.sleep(ms, signal),
    result: (exitCode) => ({ stdout: keptOut, stderr: keptErr, exitCode }),
  };
}
