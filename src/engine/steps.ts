/**
 * Plan and apply (STAGES.md §1): a stage's steps run only on hosts where one of their guard checks
 * does not pass, so a converged cluster changes nothing. Files are written atomically with the previous
 * version in the run's backup directory; the first failing command stops the step on that host and
 * rolls it back (files restored, the step's rollback commands run). Dangerous steps need the operator's
 * explicit confirmation; `reboot` steps also need `allowReboot`. After a step changed something the
 * stage is re-checked quietly so later steps plan against the new state; at the end every check runs
 * again as the stage's verification.
 */
import { posix } from 'node:path';
import type { Engine, StageOutcome } from './runner.js';
import type { StepUndo } from './events.js';
import type {
  CheckResult,
  Danger,
  FileChange,
  HostFacts,
  HostRunner,
  StageDef,
  StepCommand,
  StepDef,
  StepExecContext,
  StepPlan,
  StepResult,
} from './types.js';
import { ConnectionLostError, type Host } from '../transport/types.js';
import { DEFAULT_BACKUP_ROOT } from '../transport/files.js';
import { quoteArgv } from '../transport/quote.js';
import { fileDiff } from './diff.js';
import { sanitize } from '../util/sanitize.js';
import { rebootAndWait } from './reboot.js';

export interface ApplyOptions {
  /** Plan only: compute commands and diffs, change nothing. */
  dryRun: boolean;
  /** Confirms disruptive and network steps (batch `--yes`). */
  yes: boolean;
  /** Permits steps that reboot hosts (`--allow-reboot`). */
  allowReboot: boolean;
  /** Asked (TUI) for a dangerous step when `yes` is false; names the hosts it will touch. */
  confirm?: (stage: string, step: StepDef<unknown>, hosts: readonly string[], plans: readonly StepResult[]) => Promise<boolean>;
  rebootTimeoutMs?: number;
  /** How long a host that lost its connection during a step is waited for before the step fails (default 120 s). */
  reconnectTimeoutMs?: number;
}

/** How often one step on one host may lose its connection and resume before apply gives up on it. */
const MAX_RESUMES = 5;

/** Adds an entry once per path (a resumed step meets the same files again). */
function remember<T extends { path: string }>(list: T[], entry: T): void {
  if (!list.some((x) => x.path === entry.path)) list.push(entry);
}

const NEEDS_CONFIRMATION: ReadonlySet<Danger> = new Set(['disruptive', 'network', 'reboot']);

/** Guard checks that do not pass on this host (a failing pair check counts for every host). */
export function failingGuards(step: StepDef<unknown>, results: readonly CheckResult[], host: string): CheckResult[] {
  return results.filter((r) => step.guards.includes(r.id) && (r.host === host || r.host === null) && r.status !== 'pass' && r.status !== 'skip');
}

/** How a command reads in a plan: argv quoted as the shell would need it; scripts as a here-document. */
export function displayCommand(c: StepCommand): string {
  const sudo = c.sudo ?? true ? 'sudo ' : '';
  if ('argv' in c.command) return `${sudo}${quoteArgv(c.command.argv)}`;
  const args = c.command.args?.length ? ` ${quoteArgv(c.command.args)}` : '';
  return `${sudo}bash -s${args} <<'EOF'\n${c.command.script.replace(/\n$/, '')}\nEOF`;
}

function fileCommand(f: FileChange): string {
  return `sudo install -D -m ${f.mode.toString(8).padStart(4, '0')} -o root -g root /dev/stdin ${quoteArgv([f.path])}`;
}

function skipped(stage: StageDef<any, any>, step: StepDef<unknown>, host: string | null, summary: string): StepResult {
  return { id: step.id, stage: stage.id, host, status: 'skipped', danger: step.danger, summary, commands: [], diff: '', changed: false };
}

function tail(text: string, n = 8): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.slice(-n).join('\n');
}

export class StepExecutor {
  constructor(
    private readonly engine: Engine,
    private readonly options: ApplyOptions,
  ) {}

  private host(name: string): Host {
    const h = this.engine.hosts.find((x) => x.name === name);
    if (!h) throw new Error(`unknown host ${name}`);
    return h;
  }

  private backupDir(): string {
    return `${DEFAULT_BACKUP_ROOT}/${this.engine.context.runId}`;
  }

  private async currentContent(host: string, path: string): Promise<string | undefined> {
    const r = await this.host(host).run({ argv: ['cat', '--', path] }, { sudo: true, timeoutMs: 20_000 });
    return r.exitCode === 0 ? r.stdout : undefined;
  }

  /**
   * Applies stages in pipeline order. A stage that cannot fix itself — a step failed, a check errored,
   * or a check one of its own steps guards still fails — stops the run: later stages build on it.
   * Failures no step of the stage guards (its tests, an operator's script, a file a later stage writes,
   * e.g. a pinned GID index in nccl.conf failing rdma-link) do not stop it; such stages are checked
   * again at the end, after the later stages had their chance.
   */
  async applyStages(stages: ReadonlyArray<StageDef<any, any>>): Promise<{ outcomes: StageOutcome[]; stoppedAfter?: StageDef<any, any>['id']; notRun: string[] }> {
    const outcomes: StageOutcome[] = [];
    const recheck: number[] = [];
    let stoppedAfter: StageDef<any, any>['id'] | undefined;
    for (const stage of stages) {
      const outcome = await this.applyStage(stage);
      outcomes.push(outcome);
      const failing = outcome.results.filter((r) => r.status === 'fail' || r.status === 'error');
      const guarded = new Set((stage.steps ?? []).flatMap((x: StepDef<unknown>) => x.guards));
      const stuck = outcome.steps?.some((x) => x.status === 'failed') || failing.some((r) => r.status === 'error' || guarded.has(r.id));
      if (!this.options.dryRun && stuck) {
        stoppedAfter = stage.id;
        break;
      }
      if (failing.length > 0) recheck.push(outcomes.length - 1);
    }
    if (!this.options.dryRun && outcomes.some((o) => o.changed)) {
      for (const i of recheck) {
        const before = outcomes[i]!;
        const stage = stages.find((x) => x.id === before.stage)!;
        const again = await this.engine.runStage(stage);
        outcomes[i] = { ...again, steps: before.steps ?? [], changed: before.changed ?? 0 };
      }
    }
    const notRun = stoppedAfter ? stages.slice(stages.findIndex((x) => x.id === stoppedAfter) + 1).map((x) => x.id) : [];
    return { outcomes, ...(stoppedAfter ? { stoppedAfter } : {}), notRun };
  }

  /** Plans (and unless dry-run, applies) every step of a stage; verifies when anything changed. */
  async applyStage<F, C>(stage: StageDef<F, C>): Promise<StageOutcome> {
    return this.engine.busyWhile(async (signal) => {
      let outcome = await this.engine.runStage(stage, { signal });
      const steps: StepResult[] = [];
      const failedHosts = new Set<string>();
      let changedAny = false;
      for (const step of stage.steps ?? []) {
        if (signal.aborted) break;
        const facts: HostFacts<F>[] = this.engine.hosts
          .filter((h) => outcome.facts.has(h.name))
          .map((h) => ({ host: h.name, facts: outcome.facts.get(h.name) as F }));
        const results = await this.runStep(stage, step as StepDef<unknown>, outcome.results, facts as HostFacts<unknown>[], failedHosts, signal);
        for (const r of results) {
          steps.push(r);
          this.engine.emit({ type: 'step.result', result: r });
          if (r.status === 'failed' && r.host) failedHosts.add(r.host);
        }
        if (!this.options.dryRun && results.some((r) => r.changed)) {
          changedAny = true;
          // Facts and host checks are re-read; the validation run (minutes) waits for the final verification,
          // so pair checks that read it keep their previous verdicts meanwhile.
          const refreshed = await this.engine.runStage(stage, { signal, quiet: true, skipCluster: true });
          const fresh = new Set(refreshed.results.map((r) => `${r.host}:${r.id}`));
          outcome = { ...refreshed, results: [...refreshed.results, ...outcome.results.filter((r) => !fresh.has(`${r.host}:${r.id}`))] };
        }
      }
      if (changedAny && !signal.aborted) outcome = await this.engine.runStage(stage, { signal });
      const changed = steps.filter((s) => s.changed).length;
      return { ...outcome, steps, changed };
    });
  }

  private async runStep(
    stage: StageDef<any, any>,
    step: StepDef<unknown>,
    results: readonly CheckResult[],
    all: HostFacts<unknown>[],
    failedHosts: ReadonlySet<string>,
    signal: AbortSignal,
  ): Promise<StepResult[]> {
    const ctx = this.engine.context;
    const out: StepResult[] = [];
    const targets: string[] = [];
    for (const name of ctx.hosts) {
      const failing = failingGuards(step, results, name);
      if (failing.length === 0) {
        out.push(skipped(stage, step, name, `nothing to do: ${step.guards.join(', ')} pass`));
      } else if (failedHosts.has(name)) {
        out.push(skipped(stage, step, name, 'not run: an earlier step of this stage failed on this host'));
      } else if (failing.some((r) => r.status === 'error') && !all.some((f) => f.host === name)) {
        out.push(skipped(stage, step, name, `not run: ${name} could not be probed`));
      } else {
        targets.push(name);
      }
    }
    if (targets.length === 0) return out;
    const run = this.engine.hostRunner(stage.id, signal);

    if (step.execute) {
      if (!this.options.dryRun && !(await this.confirmed(stage, step, targets, []))) {
        return [...out, ...targets.map((h) => skipped(stage, step, h, this.refusal(step)))];
      }
      return [...out, ...(await this.runProcedure(stage, step, targets, all, results, run, signal))];
    }

    // Plans first (all hosts), so a confirmation can show every host's diff before anything runs.
    const planned: Array<{ host: string; plan: StepPlan | null; preview: StepResult }> = [];
    for (const host of targets) {
      const facts = all.find((f) => f.host === host)?.facts;
      let plan: StepPlan | null;
      try {
        plan = step.plan ? step.plan({ ...ctx, host, hostIndex: ctx.hosts.indexOf(host), facts, all, results }) : null;
      } catch (err) {
        out.push({ id: step.id, stage: stage.id, host, status: 'failed', danger: step.danger, summary: 'could not plan the step (a bug in l20-setup)', commands: [], diff: '', changed: false, error: sanitize((err as Error).stack ?? String(err)) });
        continue;
      }
      planned.push({ host, plan, preview: await this.preview(stage, step, host, plan) });
    }
    const active = planned.filter((p) => p.plan && p.preview.status === 'planned');
    for (const p of planned) if (!active.includes(p)) out.push(p.preview);
    if (this.options.dryRun || active.length === 0) return [...out, ...active.map((p) => p.preview)];

    if (!(await this.confirmed(stage, step, active.map((p) => p.host), active.map((p) => p.preview)))) {
      return [...out, ...active.map((p) => ({ ...p.preview, status: 'skipped' as const, summary: this.refusal(step) }))];
    }
    const order = step.order ?? 'parallel';
    if (order === 'parallel') {
      out.push(...(await Promise.all(active.map((p) => this.execute(stage, step, p.host, p.plan!, p.preview, run)))));
    } else {
      const seq = order === 'reverse' ? [...active].reverse() : active;
      for (const p of seq) out.push(await this.execute(stage, step, p.host, p.plan!, p.preview, run));
    }
    return out;
  }

  /**
   * A step with its own procedure (the armed network changes). Its commands wait out a lost connection
   * themselves (checks/network/across-loss.ts); should a host still end failed after losing its
   * connection during the procedure, the stage is probed again once it answers and the procedure runs
   * again where its guards still fail — it starts from the host's current state, as any apply does.
   */
  private async runProcedure(
    stage: StageDef<any, any>,
    step: StepDef<unknown>,
    targets: string[],
    all: HostFacts<unknown>[],
    results: readonly CheckResult[],
    run: HostRunner,
    signal: AbortSignal,
  ): Promise<StepResult[]> {
    const ctx = this.engine.context;
    const none: StepUndo = { backupDir: this.backupDir(), files: [], removeFiles: [], rollback: [] };
    if (!this.options.dryRun) for (const h of targets) this.engine.emit({ type: 'step.start', stage: stage.id, step: step.id, host: h, danger: step.danger, undo: none });
    const note = (h: string | null, line: string) => this.engine.emit({ type: 'step.note', stage: stage.id, step: step.id, host: h, line: sanitize(line) });
    const sleep = (ms: number) => new Promise<boolean>((resolve) => {
      if (signal.aborted) return resolve(false);
      const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(true); }, ms);
      const onAbort = () => { clearTimeout(t); resolve(false); };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const once = async (hosts: string[], facts: HostFacts<unknown>[], current: readonly CheckResult[]): Promise<{ results: StepResult[]; lost: Set<string> }> => {
      const lost = new Set<string>();
      const offs = hosts.map((h) => this.host(h).onStateChange((state) => {
        if (state === 'lost' || state === 'failed') lost.add(h);
      }));
      const exec: StepExecContext<unknown> = {
        ...ctx, targets: hosts, all: facts, results: current, run, signal, dryRun: this.options.dryRun,
        writeFile: (h, f) => this.writeFileAcrossLoss(h, f, note),
        probeFreshConnection: (h) => this.probeFresh(h),
        awaitHost: (h) => this.awaitHost(h),
        recheck: async () => {
          const o = await this.engine.runStage(stage, { signal, quiet: true });
          return { results: o.results, facts: ctx.hosts.filter((h) => o.facts.has(h)).map((h) => ({ host: h, facts: o.facts.get(h) })) };
        },
        note,
        sleep,
      };
      try {
        return { results: await step.execute!(exec), lost };
      } catch (err) {
        return {
          results: hosts.map((h): StepResult => ({
            id: step.id, stage: stage.id, host: h, status: 'failed', danger: step.danger,
            summary: 'the step itself failed', commands: [], diff: '', changed: false, error: sanitize((err as Error).stack ?? String(err)),
          })),
          lost,
        };
      } finally {
        for (const off of offs) off();
      }
    };
    let attempt = await once(targets, all, results);
    for (let resumes = 1; resumes <= 2 && !this.options.dryRun && !signal.aborted; resumes++) {
      const cut = attempt.results.filter((r) => r.status === 'failed' && r.host !== null && attempt.lost.has(r.host)).map((r) => r.host!);
      if (cut.length === 0) break;
      const unreachable: string[] = [];
      for (const h of cut) if (!(await this.awaitHost(h)).ok) unreachable.push(h);
      if (unreachable.length > 0) break;
      note(null, `${step.id} failed after the connection to ${cut.join(', ')} was lost; probing again and resuming where its guards still fail`);
      const fresh = await this.engine.runStage(stage, { signal, quiet: true });
      const facts = ctx.hosts.filter((h) => fresh.facts.has(h)).map((h) => ({ host: h, facts: fresh.facts.get(h) }));
      const again = ctx.hosts.filter((h) => targets.includes(h) && failingGuards(step, fresh.results, h).length > 0);
      const settled = attempt.results.map((r): StepResult => {
        if (r.host === null || !cut.includes(r.host) || again.includes(r.host)) return r;
        const { error: _lostError, ...rest } = r;
        return { ...rest, status: 'applied', changed: true, summary: `${r.summary} (in place after a lost connection: its guards pass)` };
      });
      if (again.length === 0) {
        attempt = { results: settled, lost: new Set() };
        break;
      }
      const next = await once(again, facts, fresh.results);
      attempt = { results: [...settled.filter((r) => !again.includes(r.host ?? '')), ...next.results], lost: next.lost };
    }
    return attempt.results;
  }

  /** ctx.writeFile for procedures: a lost connection is waited out and the write repeated (it compares first). */
  private async writeFileAcrossLoss(host: string, f: FileChange, note: (h: string | null, line: string) => void): ReturnType<StepExecutor['writeFile']> {
    try {
      return await this.writeFile(host, f);
    } catch (err) {
      if (!(err instanceof ConnectionLostError)) throw err;
      const back = await this.awaitHost(host);
      if (!back.ok) throw err;
      note(host, `writing ${f.path}: the connection was lost; ${host} answers again (${back.detail}); writing it again`);
      return this.writeFile(host, f);
    }
  }

  private refusal(step: StepDef<unknown>): string {
    if (step.danger === 'reboot' && !this.options.allowReboot) return 'not run: this step reboots the host; pass --allow-reboot';
    return `not run: a ${step.danger} step needs confirmation (--yes, or confirm in the TUI)`;
  }

  private async confirmed(stage: StageDef<any, any>, step: StepDef<unknown>, hosts: readonly string[], plans: readonly StepResult[]): Promise<boolean> {
    if (step.danger === 'reboot' && !this.options.allowReboot) return false;
    if (!NEEDS_CONFIRMATION.has(step.danger) || this.options.yes) return true;
    return this.options.confirm ? this.options.confirm(stage.id, step, hosts, plans) : false;
  }

  /** The step as the plan shows it: commands and the diff of every file that would change. */
  private async preview(stage: StageDef<any, any>, step: StepDef<unknown>, host: string, plan: StepPlan | null): Promise<StepResult> {
    if (!plan) return skipped(stage, step, host, 'nothing to do on this host');
    const commands: string[] = [];
    const diffs: string[] = [];
    for (const f of plan.files ?? []) {
      const before = await this.currentContent(host, f.path);
      if (before === f.content) continue; // modes are re-asserted by the write itself
      commands.push(fileCommand(f));
      diffs.push(fileDiff(f.path, before, f.content));
    }
    for (const path of plan.removeFiles ?? []) {
      const before = await this.currentContent(host, path);
      if (before === undefined) continue;
      commands.push(`sudo mv ${quoteArgv([path, posix.join(this.backupDir(), path)])}`);
      diffs.push(fileDiff(path, before, undefined));
    }
    commands.push(...(plan.commands ?? []).map(displayCommand));
    if (plan.reboot) commands.push('sudo systemctl reboot   # then wait for SSH and a new boot id');
    if (commands.length === 0) return skipped(stage, step, host, `already in place: ${plan.summary}`);
    return { id: step.id, stage: stage.id, host, status: 'planned', danger: step.danger, summary: plan.summary, commands, diff: diffs.join(''), changed: false };
  }

  private async writeFile(host: string, f: FileChange): Promise<{ changed: boolean; diff: string; commandLine: string; backupPath?: string }> {
    const before = await this.currentContent(host, f.path);
    const r = await this.host(host).writeFileAtomic(f.path, f.content, { mode: f.mode, sudo: true, backupDir: this.backupDir() });
    return { changed: r.changed, diff: r.changed ? fileDiff(f.path, before, f.content) : '', commandLine: fileCommand(f), ...(r.backupPath ? { backupPath: r.backupPath } : {}) };
  }

  private async probeFresh(name: string): Promise<{ ok: boolean; detail: string }> {
    const host = this.host(name);
    try {
      if (host.probeFreshConnection) await host.probeFreshConnection(15_000);
      else {
        const r = await host.run({ argv: ['true'] }, { timeoutMs: 15_000 });
        if (r.exitCode !== 0) return { ok: false, detail: `true exited ${r.exitCode}` };
      }
      return { ok: true, detail: `a new connection to ${host.address} works` };
    } catch (err) {
      return { ok: false, detail: sanitize((err as Error).message) };
    }
  }

  /**
   * Runs one host's plan. A connection lost part-way (ConnectionLostError) is not a failure of the step:
   * nothing is rolled back over a dead connection; the host is waited for (backoff, bounded) and the plan
   * runs again from its start — files already in place compare equal and are not written twice, moved files
   * are skipped, and step commands are idempotent by contract — so the host ends as if nothing happened.
   * Any other failure rolls back what this step changed, across every attempt.
   */
  private async execute(stage: StageDef<any, any>, step: StepDef<unknown>, host: string, plan: StepPlan, preview: StepResult, run: HostRunner): Promise<StepResult> {
    const written: Array<{ path: string; backupPath?: string }> = [];
    const moved: Array<{ path: string; backupPath: string }> = [];
    let changed = false;
    let undo: StepUndo | undefined;
    const fail = async (why: string): Promise<StepResult> => {
      const rollback = await this.rollback(host, written, moved, plan.rollback ?? [], run);
      return { ...preview, status: 'failed', changed, error: sanitize(`${why}${rollback ? `\nrollback: ${rollback}` : ''}`) };
    };
    for (let attempt = 1; ; attempt++) {
      let writing: string | undefined;
      try {
        if (!undo) {
          undo = await this.undoFor(host, plan);
          this.engine.emit({ type: 'step.start', stage: stage.id, step: step.id, host, danger: step.danger, undo });
        }
        for (const f of plan.files ?? []) {
          writing = f.path;
          const r = await this.writeFile(host, f);
          writing = undefined;
          if (r.changed) {
            changed = true;
            remember(written, { path: f.path, ...(r.backupPath ? { backupPath: r.backupPath } : {}) });
          }
        }
        for (const path of plan.removeFiles ?? []) {
          const backupPath = posix.join(this.backupDir(), path);
          const r = await run(host, `${step.id}:remove`, {
            script: 'test -e "$1" || exit 0\nmkdir -p "$(dirname "$2")" && mv -f -- "$1" "$2"\n', args: [path, backupPath],
          }, { sudo: true });
          if (r.exitCode !== 0) return await fail(`moving ${path} to ${backupPath} failed (exit ${r.exitCode}): ${tail(r.stderr || r.stdout)}`);
          changed = true;
          remember(moved, { path, backupPath });
        }
        for (const c of plan.commands ?? []) {
          const r = await run(host, step.id, c.command, { sudo: c.sudo ?? true, timeoutMs: c.timeoutMs ?? 20 * 60_000 });
          changed = true;
          const ok = (c.okExit ?? [0]).includes(r.exitCode ?? -1);
          if (!ok) {
            const status = r.timedOut ? 'timed out' : r.cancelled ? 'was cancelled' : `exited ${r.exitCode ?? r.signal}`;
            return await fail(`\`${displayCommand(c).split('\n')[0]}\` on ${host} ${status}\n${tail(`${r.stdout}\n${r.stderr}`)}`);
          }
        }
        if (plan.reboot) {
          changed = true;
          const r = await rebootAndWait(this.host(host), run, { timeoutMs: this.options.rebootTimeoutMs ?? 15 * 60_000 });
          if (!r.ok) return { ...preview, status: 'failed', changed, error: r.detail };
        }
        return { ...preview, status: 'applied', changed };
      } catch (err) {
        if (!(err instanceof ConnectionLostError)) return await fail(`${(err as Error).message}`);
        // A write cut short may have replaced the file (or made it) without telling us: roll it back too.
        if (writing !== undefined && undo) {
          const existed = undo.files.find((f) => f.path === writing)?.existed ?? true;
          remember(written, { path: writing, ...(existed ? { backupPath: posix.join(this.backupDir(), writing) } : {}) });
        }
        const note = (line: string) => this.engine.emit({ type: 'step.note', stage: stage.id, step: step.id, host, line: sanitize(line) });
        note(`connection lost during ${step.id}: ${err.message}`);
        if (attempt > MAX_RESUMES) {
          return { ...preview, status: 'failed', changed, error: sanitize(`the connection to ${host} was lost ${attempt} times during this step; stopped (nothing rolled back over a lost connection). Run apply again when ${host} is stable: every step starts from the host's current state.\n${err.message}`) };
        }
        const back = await this.awaitHost(host);
        if (!back.ok) {
          return { ...preview, status: 'failed', changed, error: sanitize(`the connection to ${host} was lost during this step and it did not answer again (${back.detail}); nothing was rolled back. Run apply again when ${host} answers: every step starts from the host's current state.\n${err.message}`) };
        }
        note(`${host} answers again (${back.detail}); resuming ${step.id} from its start (attempt ${attempt + 1}): files in place compare equal, commands are idempotent`);
      }
    }
  }

  /** Waits for a host that lost its connection to run `true` again: backoff from 1 s doubling to 15 s, bounded. */
  private async awaitHost(name: string): Promise<{ ok: boolean; detail: string }> {
    const host = this.host(name);
    const started = Date.now();
    const limit = this.options.reconnectTimeoutMs ?? 120_000;
    let pause = 1000;
    let last = '';
    for (let tries = 1; ; tries++) {
      try {
        const r = await host.run({ argv: ['true'] }, { timeoutMs: 15_000 });
        if (r.exitCode === 0) return { ok: true, detail: `reconnected after ${((Date.now() - started) / 1000).toFixed(1)} s, ${tries} ${tries === 1 ? 'try' : 'tries'}` };
        last = `\`true\` exited ${r.exitCode ?? r.signal}`;
      } catch (err) {
        last = (err as Error).message;
      }
      if (Date.now() - started + pause > limit) return { ok: false, detail: `${tries} tries in ${Math.round((Date.now() - started) / 1000)} s; last: ${last}` };
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(15_000, pause * 2);
    }
  }

  /**
   * What undoing this step would take, read before it changes anything: one command learns which of its
   * files exist now (a file written later without a backup was new, and rollback removes it).
   */
  private async undoFor(host: string, plan: StepPlan): Promise<StepUndo> {
    const paths = (plan.files ?? []).map((f) => f.path);
    let existing: string[] = [];
    if (paths.length > 0) {
      const r = await this.host(host).run(
        { script: 'for p in "$@"; do if [ -e "$p" ]; then echo 1; else echo 0; fi; done\n', args: paths },
        { sudo: true, timeoutMs: 20_000 },
      );
      existing = r.stdout.split('\n');
    }
    return {
      backupDir: this.backupDir(),
      files: paths.map((path, i) => ({ path, existed: existing[i] === '1' })),
      removeFiles: plan.removeFiles ?? [],
      rollback: plan.rollback ?? [],
    };
  }

  /** Restores written files from their backups (new files are removed), then the step's rollback commands. */
  private async rollback(
    host: string,
    written: ReadonlyArray<{ path: string; backupPath?: string }>,
    moved: ReadonlyArray<{ path: string; backupPath: string }>,
    commands: readonly StepCommand[],
    run: HostRunner,
  ): Promise<string> {
    const notes: string[] = [];
    for (const w of [...written].reverse()) {
      const r = w.backupPath
        // The backup may be missing for a write a lost connection cut short before it made one: then the
        // file was never replaced, and there is nothing to restore.
        ? await run(host, 'rollback', { script: 'if [ -e "$2" ]; then cp -p -- "$2" "$1"; fi\n', args: [w.path, w.backupPath] }, { sudo: true })
        : await run(host, 'rollback', { argv: ['rm', '-f', '--', w.path] }, { sudo: true });
      notes.push(`${w.backupPath ? 'restored' : 'removed'} ${w.path}${r.exitCode === 0 ? '' : ` (failed: exit ${r.exitCode})`}`);
    }
    for (const m of [...moved].reverse()) {
      const r = await run(host, 'rollback', { argv: ['mv', '-f', '--', m.backupPath, m.path] }, { sudo: true });
      notes.push(`restored ${m.path}${r.exitCode === 0 ? '' : ` (failed: exit ${r.exitCode})`}`);
    }
    for (const c of commands) {
      const r = await run(host, 'rollback', c.command, { sudo: c.sudo ?? true, timeoutMs: c.timeoutMs ?? 10 * 60_000 });
      notes.push(`${displayCommand(c).split('\n')[0]} → exit ${r.exitCode}`);
    }
    return notes.join('; ');
  }
}
