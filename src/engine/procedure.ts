/**
 * Steps with a procedure of their own (`execute`: the armed network changes), run for the executor in
 * steps.ts, including their resume after a lost connection.
 */
import type { Engine } from './runner.js';
import type { StepUndo } from './events.js';
import type {
  AnyStageDef,
  CheckResult,
  FileChange,
  HostFacts,
  HostRunner,
  StepDef,
  StepExecContext,
  StepResult,
} from './types.js';
import { ConnectionLostError, type Host } from '../transport/types.js';
import { clean } from '../util/sanitize.js';
import { awaitHost, probeFresh } from './step-host.js';
import { failingGuards } from './guards.js';

/** What a procedure needs from the executor. */
export interface ProcedureDeps {
  engine: Engine;
  dryRun: boolean;
  backupDir: string;
  reconnectTimeoutMs: number;
  host(name: string): Host;
  writeFile(
    host: string,
    f: FileChange,
  ): Promise<{ changed: boolean; diff: string; commandLine: string; backupPath?: string }>;
}

/**
 * A step with its own procedure (the armed network changes). Its commands wait out a lost connection
 * themselves (checks/network/across-loss.ts); should a host still end failed after losing its session
 * while every new connection to it worked (the path was never cut), the stage is probed again and the
 * procedure runs once more where its guards still fail — from the host's current state, as any apply.
 */
export async function runProcedure(
  x: ProcedureDeps,
  stage: AnyStageDef,
  step: StepDef<unknown>,
  targets: string[],
  all: HostFacts<unknown>[],
  results: readonly CheckResult[],
  run: HostRunner,
  signal: AbortSignal,
): Promise<StepResult[]> {
  const ctx = x.engine.context;
  const none: StepUndo = { backupDir: x.backupDir, files: [], removeFiles: [], rollback: [] };
  if (!x.dryRun)
    for (const h of targets)
      x.engine.emit({ type: 'step.start', stage: stage.id, step: step.id, host: h, danger: step.danger, undo: none });
  const note = (h: string | null, line: string) =>
    x.engine.emit({ type: 'step.note', stage: stage.id, step: step.id, host: h, line: clean(line) });
  const sleep = (ms: number) =>
    new Promise<boolean>((resolve) => {
      if (signal.aborted) return resolve(false);
      const t = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  const lostBound = (h: string): number =>
    Math.min(x.host(h).lostBoundMs ?? x.reconnectTimeoutMs, x.reconnectTimeoutMs);
  /** When each host's connection was first seen lost or failing, until it connects again. */
  const downSince = new Map<string, number>();
  const watch = targets.map((h) =>
    x.host(h).onStateChange((state) => {
      if (state === 'connected') downSince.delete(h);
      else if ((state === 'lost' || state === 'failed') && !downSince.has(h)) downSince.set(h, Date.now());
    }),
  );
  /** What is left of a host's keepalive bound, counted from when it was first seen down (in full while up). */
  const graceLeft = (h: string): number => {
    const since = downSince.get(h);
    return since === undefined ? lostBound(h) : Math.max(0, since + lostBound(h) - Date.now());
  };
  const once = async (
    hosts: string[],
    facts: HostFacts<unknown>[],
    current: readonly CheckResult[],
  ): Promise<{ results: StepResult[]; lost: Set<string> }> => {
    const lost = new Set<string>();
    // A host a new connection could not reach had its path cut (by the change, or the network): that is
    // the procedure's own business (its proof and rollback timer), never a reason to run it again.
    const cutPath = new Set<string>();
    const offs = hosts.map((h) =>
      x.host(h).onStateChange((state) => {
        if (state === 'lost' || state === 'failed') lost.add(h);
      }),
    );
    const exec: StepExecContext<unknown> = {
      ...ctx,
      targets: hosts,
      all: facts,
      results: current,
      run,
      signal,
      dryRun: x.dryRun,
      writeFile: (h, f) => writeFileAcrossLoss(x, h, f, note, () => graceLeft(h)),
      probeFreshConnection: async (h) => {
        const r = await probeFresh(x.host(h));
        if (!r.ok) cutPath.add(h);
        return r;
      },
      // A lost host gets the keepalive bound to answer again, not the apply's reconnect limit: its rollback
      // timer guards it, and the other hosts' rollback must not wait for it (docs/RELIABILITY.md, bounds).
      awaitHost: (h) => awaitHost(x.host(h), graceLeft(h)),
      lostBoundMs: (h) => lostBound(h),
      graceLeftMs: (h) => graceLeft(h),
      recheck: async () => {
        const o = await x.engine.runStage(stage, { signal, quiet: true });
        return {
          results: o.results,
          facts: ctx.hosts.filter((h) => o.facts.has(h)).map((h) => ({ host: h, facts: o.facts.get(h) })),
        };
      },
      note,
      journalArmed: (h, timer) =>
        x.engine.emit({ type: 'timer.armed', stage: stage.id, step: step.id, host: h, timer }),
      sleep,
    };
    try {
      const results = (await step.execute!(exec)).map(cleanResult);
      for (const h of cutPath) lost.delete(h);
      return { results, lost };
    } catch (err) {
      return {
        results: hosts.map((h): StepResult => ({
          id: step.id,
          stage: stage.id,
          host: h,
          status: 'failed',
          danger: step.danger,
          summary: 'the step itself failed',
          commands: [],
          diff: '',
          changed: false,
          error: clean((err as Error).stack ?? String(err)),
        })),
        lost,
      };
    } finally {
      for (const off of offs) off();
    }
  };
  try {
    const first = await once(targets, all, results);
    if (x.dryRun || signal.aborted) return first.results;
    // Only a session that dropped while the path stayed good (every new connection worked) is resumed, once.
    const cut = first.results
      .filter((r) => r.status === 'failed' && r.host !== null && first.lost.has(r.host))
      .map((r) => r.host!);
    if (cut.length === 0) return first.results;
    for (const h of cut) if (!(await awaitHost(x.host(h), graceLeft(h))).ok) return first.results;
    note(
      null,
      `${step.id} failed after the connection to ${cut.join(', ')} was lost; ` +
        'probing again and resuming where its guards still fail',
    );
    const fresh = await x.engine.runStage(stage, { signal, quiet: true });
    const facts = ctx.hosts.filter((h) => fresh.facts.has(h)).map((h) => ({ host: h, facts: fresh.facts.get(h) }));
    const again = ctx.hosts.filter((h) => targets.includes(h) && failingGuards(step, fresh.results, h).length > 0);
    // A cut host whose guards pass now reached the step's state before the loss: applied.
    const settled = first.results.map((r): StepResult => {
      if (r.host === null || !cut.includes(r.host) || again.includes(r.host)) return r;
      const { error: _lostError, ...rest } = r;
      const summary = `${r.summary} (in place after a lost connection: its guards pass)`;
      return { ...rest, status: 'applied', changed: true, summary };
    });
    if (again.length === 0) return settled;
    const next = await once(again, facts, fresh.results);
    return [...settled.filter((r) => !again.includes(r.host ?? '')), ...next.results];
  } finally {
    for (const off of watch) off();
  }
}

/**
 * A procedure's result quotes the host (the raw tail of a failed command's output, a file's content in a diff):
 * cleaned here, once, for every procedure, so none can forget and put a host's escape sequences on a screen.
 */
function cleanResult(r: StepResult): StepResult {
  return {
    ...r,
    summary: clean(r.summary),
    commands: r.commands.map(clean),
    diff: clean(r.diff),
    ...(r.error !== undefined ? { error: clean(r.error) } : {}),
  };
}

/** ctx.writeFile for procedures: a lost connection is waited out and the write repeated (it compares first). */
async function writeFileAcrossLoss(
  x: ProcedureDeps,
  host: string,
  f: FileChange,
  note: (h: string | null, line: string) => void,
  graceLeftMs: () => number,
): ReturnType<ProcedureDeps['writeFile']> {
  try {
    return await x.writeFile(host, f);
  } catch (err) {
    if (!(err instanceof ConnectionLostError)) throw err;
    const back = await awaitHost(x.host(host), graceLeftMs());
    if (!back.ok) throw err;
    note(host, `writing ${f.path}: the connection was lost; ${host} answers again (${back.detail}); writing it again`);
    return x.writeFile(host, f);
  }
}
