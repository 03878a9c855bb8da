/**
 * Plan and apply (docs/STAGES.md §1): a stage's steps run only on hosts where one of their guard checks
 * does not pass, so a converged cluster changes nothing. Files are written atomically with the previous
 * version in the run's backup directory; the first failing command stops the step on that host and
 * rolls it back (files restored, the step's rollback commands run). Dangerous steps need the operator's
 * explicit confirmation; `reboot` steps also need `allowReboot`. After a step changed something the
 * stage is re-checked quietly so later steps plan against the new state; at the end every check runs
 * again as the stage's verification.
 */
import { posix } from 'node:path';
import type { Engine, StageOutcome } from './runner.js';
import type {
  AnyStageDef,
  CheckResult,
  Danger,
  FileChange,
  HostFacts,
  HostRunner,
  StageDef,
  StepDef,
  StepPlan,
  StepResult,
} from './types.js';
import { ConnectionLostError, type Host } from '../transport/types.js';
import { DEFAULT_BACKUP_ROOT } from '../transport/files.js';
import { quoteArgv } from '../transport/quote.js';
import { fileDiff } from './diff.js';
import { clean, sanitize } from '../util/sanitize.js';
import { rebootAndWait } from './reboot.js';
import { awaitHost, displayCommand, remember, rollbackStep, undoFor } from './step-host.js';
import { failingGuards } from './guards.js';
import { runProcedure, type ProcedureDeps } from './procedure.js';
import { repairPackageState, runsPackageTool } from '../../checks/os/package-guard.js';

export interface ApplyOptions {
  /** Plan only: compute commands and diffs, change nothing. */
  dryRun: boolean;
  /** Confirms disruptive and network steps (batch `--yes`). */
  yes: boolean;
  /** Permits steps that reboot hosts (`--allow-reboot`). */
  allowReboot: boolean;
  /** Asked (TUI) for a dangerous step when `yes` is false; names the hosts it will touch. */
  confirm?: (
    stage: string,
    step: StepDef<unknown>,
    hosts: readonly string[],
    plans: readonly StepResult[],
  ) => Promise<boolean>;
  rebootTimeoutMs?: number;
  /** How long a host may answer with its old boot id before the reboot is requested again (default 30 s). */
  rebootReissueMs?: number;
  /** How long a host that lost its connection during a step is waited for before the step fails (default 120 s). */
  reconnectTimeoutMs?: number;
}

/** How often one step on one host may lose its connection and resume before apply gives up on it. */
const MAX_RESUMES = 5;

const NEEDS_CONFIRMATION: ReadonlySet<Danger> = new Set(['disruptive', 'network', 'reboot']);

function fileCommand(f: FileChange): string {
  return `sudo install -D -m ${f.mode.toString(8).padStart(4, '0')} -o root -g root /dev/stdin ${quoteArgv([f.path])}`;
}

function skipped(stage: AnyStageDef, step: StepDef<unknown>, host: string | null, summary: string): StepResult {
  return {
    id: step.id,
    stage: stage.id,
    host,
    status: 'skipped',
    danger: step.danger,
    summary,
    commands: [],
    diff: '',
    changed: false,
  };
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

  private reconnectTimeoutMs(): number {
    return this.options.reconnectTimeoutMs ?? 120_000;
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
  async applyStages(
    stages: ReadonlyArray<AnyStageDef>,
  ): Promise<{ outcomes: StageOutcome[]; stoppedAfter?: AnyStageDef['id']; notRun: string[] }> {
    const outcomes: StageOutcome[] = [];
    const recheck: number[] = [];
    let stoppedAfter: AnyStageDef['id'] | undefined;
    for (const stage of stages) {
      const outcome = await this.applyStage(stage);
      outcomes.push(outcome);
      // A cancel stops the whole run: the stages after it are not started on a half-done host.
      if (outcome.cancelled) {
        stoppedAfter = stage.id;
        break;
      }
      const failing = outcome.results.filter((r) => r.status === 'fail' || r.status === 'error');
      const guarded = new Set((stage.steps ?? []).flatMap((x: StepDef<unknown>) => x.guards));
      const stuck =
        outcome.steps?.some((x) => x.status === 'failed') ||
        failing.some((r) => r.status === 'error' || guarded.has(r.id));
      if (!this.options.dryRun && stuck) {
        stoppedAfter = stage.id;
        break;
      }
      if (failing.length > 0) recheck.push(outcomes.length - 1);
    }
    if (!this.options.dryRun && outcomes.some((o) => o.changed) && !outcomes.some((o) => o.cancelled)) {
      for (const i of recheck) {
        const before = outcomes[i]!;
        const stage = stages.find((x) => x.id === before.stage)!;
        const again = await this.engine.runStage(stage);
        outcomes[i] = { ...again, steps: before.steps ?? [], changed: before.changed ?? 0 };
      }
    }
    const notRun = stoppedAfter
      ? stages.slice(stages.findIndex((x) => x.id === stoppedAfter) + 1).map((x) => x.id)
      : [];
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
        const results = await this.runStep(
          stage,
          step as StepDef<unknown>,
          outcome.results,
          facts as HostFacts<unknown>[],
          failedHosts,
          signal,
        );
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
          outcome = {
            ...refreshed,
            results: [...refreshed.results, ...outcome.results.filter((r) => !fresh.has(`${r.host}:${r.id}`))],
          };
        }
      }
      if (changedAny && !signal.aborted) outcome = await this.engine.runStage(stage, { signal });
      const changed = steps.filter((s) => s.changed).length;
      return { ...outcome, steps, changed, ...(signal.aborted ? { cancelled: true } : {}) };
    });
  }

  private async runStep(
    stage: AnyStageDef,
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
      const deps: ProcedureDeps = {
        engine: this.engine,
        dryRun: this.options.dryRun,
        backupDir: this.backupDir(),
        reconnectTimeoutMs: this.reconnectTimeoutMs(),
        host: (name) => this.host(name),
        writeFile: (h, f) => this.writeFile(h, f),
      };
      return [...out, ...(await runProcedure(deps, stage, step, targets, all, results, run, signal))];
    }

    // Plans first (all hosts), so a confirmation can show every host's diff before anything runs.
    const planned: Array<{ host: string; plan: StepPlan | null; preview: StepResult; existing: ReadonlySet<string> }> =
      [];
    for (const host of targets) {
      const facts = all.find((f) => f.host === host)?.facts;
      let plan: StepPlan | null;
      try {
        plan = step.plan ? step.plan({ ...ctx, host, hostIndex: ctx.hosts.indexOf(host), facts, all, results }) : null;
      } catch (err) {
        out.push({
          id: step.id,
          stage: stage.id,
          host,
          status: 'failed',
          danger: step.danger,
          summary: 'could not plan the step (a bug in l20-setup)',
          commands: [],
          diff: '',
          changed: false,
          error: sanitize((err as Error).stack ?? String(err)),
        });
        continue;
      }
      planned.push({ host, plan, ...(await this.preview(stage, step, host, plan)) });
    }
    const active = planned.filter((p) => p.plan && p.preview.status === 'planned');
    for (const p of planned) if (!active.includes(p)) out.push(p.preview);
    if (this.options.dryRun || active.length === 0) return [...out, ...active.map((p) => p.preview)];

    if (
      !(await this.confirmed(
        stage,
        step,
        active.map((p) => p.host),
        active.map((p) => p.preview),
      ))
    ) {
      return [
        ...out,
        ...active.map((p) => ({ ...p.preview, status: 'skipped' as const, summary: this.refusal(step) })),
      ];
    }
    const order = step.order ?? 'parallel';
    if (order === 'parallel') {
      const runs = active.map((p) => this.execute(stage, step, p.host, p.plan!, p.preview, p.existing, run, signal));
      out.push(...(await Promise.all(runs)));
    } else {
      const seq = order === 'reverse' ? [...active].reverse() : active;
      for (const p of seq) {
        out.push(await this.execute(stage, step, p.host, p.plan!, p.preview, p.existing, run, signal));
      }
    }
    return out;
  }

  private refusal(step: StepDef<unknown>): string {
    if (step.danger === 'reboot' && !this.options.allowReboot)
      return 'not run: this step reboots the host; pass --allow-reboot';
    return `not run: a ${step.danger} step needs confirmation (--yes, or confirm in the TUI)`;
  }

  private async confirmed(
    stage: AnyStageDef,
    step: StepDef<unknown>,
    hosts: readonly string[],
    plans: readonly StepResult[],
  ): Promise<boolean> {
    if (step.danger === 'reboot' && !this.options.allowReboot) return false;
    if (!NEEDS_CONFIRMATION.has(step.danger) || this.options.yes) return true;
    return this.options.confirm ? this.options.confirm(stage.id, step, hosts, plans) : false;
  }

  /**
   * The step as the plan shows it: commands and the diff of every file that would change; and which of its
   * files exist now (what undoing it takes: a file written later without a backup was new).
   */
  private async preview(
    stage: AnyStageDef,
    step: StepDef<unknown>,
    host: string,
    plan: StepPlan | null,
  ): Promise<{ preview: StepResult; existing: ReadonlySet<string> }> {
    const existing = new Set<string>();
    const result = (preview: StepResult) => ({ preview, existing });
    if (!plan) return result(skipped(stage, step, host, 'nothing to do on this host'));
    const commands: string[] = [];
    const diffs: string[] = [];
    for (const f of plan.files ?? []) {
      const before = await this.currentContent(host, f.path);
      if (before !== undefined) existing.add(f.path);
      if (before === f.content) continue; // modes are re-asserted by the write itself
      commands.push(fileCommand(f));
      diffs.push(sanitize(fileDiff(f.path, before, f.content)));
    }
    for (const path of plan.removeFiles ?? []) {
      const before = await this.currentContent(host, path);
      if (before === undefined) continue;
      commands.push(`sudo mv ${quoteArgv([path, posix.join(this.backupDir(), path)])}`);
      diffs.push(sanitize(fileDiff(path, before, undefined)));
    }
    commands.push(...(plan.commands ?? []).map((c) => sanitize(displayCommand(c))));
    if (plan.reboot) commands.push('sudo systemctl reboot   # then wait for SSH and a new boot id');
    // A file's current content is the host's output: sanitized like every other (a diff shows it).
    const summary = sanitize(plan.summary);
    if (commands.length === 0) return result(skipped(stage, step, host, `already in place: ${summary}`));
    return result({
      id: step.id,
      stage: stage.id,
      host,
      status: 'planned',
      danger: step.danger,
      summary,
      commands,
      diff: diffs.join(''),
      changed: false,
    });
  }

  private async writeFile(
    host: string,
    f: FileChange,
  ): Promise<{ changed: boolean; diff: string; commandLine: string; backupPath?: string }> {
    const before = await this.currentContent(host, f.path);
    const r = await this.host(host).writeFileAtomic(f.path, f.content, {
      mode: f.mode,
      sudo: true,
      backupDir: this.backupDir(),
    });
    return {
      changed: r.changed,
      diff: r.changed ? sanitize(fileDiff(f.path, before, f.content)) : '',
      commandLine: fileCommand(f),
      ...(r.backupPath ? { backupPath: r.backupPath } : {}),
    };
  }

  /**
   * Runs one host's plan. A connection lost part-way (ConnectionLostError) is not a failure of the step:
   * nothing is rolled back over a dead connection; the host is waited for (backoff, bounded) and the plan
   * runs again from its start — files already in place compare equal and are not written twice, moved files
   * are skipped, and step commands are idempotent by contract — so the host ends as if nothing happened.
   * Any other failure rolls back what this step changed, across every attempt.
   */
  private async execute(
    stage: AnyStageDef,
    step: StepDef<unknown>,
    host: string,
    plan: StepPlan,
    preview: StepResult,
    existing: ReadonlySet<string>,
    run: HostRunner,
    signal: AbortSignal,
  ): Promise<StepResult> {
    const written: Array<{ path: string; backupPath?: string; uncertain?: boolean }> = [];
    const moved: Array<{ path: string; backupPath: string }> = [];
    let changed = false;
    // Recorded (crash journal) before anything changes; which files existed was read by the preview.
    const undo = undoFor(plan, this.backupDir(), existing);
    this.engine.emit({ type: 'step.start', stage: stage.id, step: step.id, host, danger: step.danger, undo });
    const fail = async (why: string): Promise<StepResult> => {
      const rollback = await rollbackStep(host, written, moved, plan.rollback ?? [], run);
      return {
        ...preview,
        status: 'failed',
        changed,
        error: sanitize(`${why}${rollback ? `\nrollback: ${rollback}` : ''}`),
      };
    };
    for (let attempt = 1; ; attempt++) {
      let writing: string | undefined;
      try {
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
          const r = await run(
            host,
            `${step.id}:remove`,
            {
              script: 'test -e "$1" || exit 0\nmkdir -p "$(dirname "$2")" && mv -f -- "$1" "$2"\n',
              args: [path, backupPath],
            },
            { sudo: true },
          );
          if (r.exitCode !== 0)
            return await fail(
              `moving ${path} to ${backupPath} failed (exit ${r.exitCode}): ${tail(r.stderr || r.stdout)}`,
            );
          changed = true;
          remember(moved, { path, backupPath });
        }
        // A package command cut short earlier (cancel, timeout, crash) left dpkg interrupted: the os stage's
        // guard finishes it first, or apt would refuse with exit 100.
        if ((plan.commands ?? []).some((c) => runsPackageTool(displayCommand(c)))) {
          const note = (line: string) =>
            this.engine.emit({
              type: 'step.note',
              stage: stage.id,
              step: step.id,
              host,
              line: clean(line),
            });
          const guard = await repairPackageState(run, host, { signal, note });
          if (guard.outcome === 'busy' || guard.outcome === 'failed') {
            return await fail(`before ${step.id}: ${guard.detail}`);
          }
        }
        for (const c of plan.commands ?? []) {
          const r = await run(host, step.id, c.command, {
            sudo: c.sudo ?? true,
            timeoutMs: c.timeoutMs ?? 20 * 60_000,
          });
          changed = true;
          const ok = (c.okExit ?? [0]).includes(r.exitCode ?? -1);
          if (!ok) {
            const status = r.timedOut
              ? 'timed out'
              : r.cancelled
                ? 'was cancelled'
                : `exited ${r.exitCode ?? r.signal}`;
            return await fail(
              `\`${displayCommand(c).split('\n')[0]}\` on ${host} ${status}\n${tail(`${r.stdout}\n${r.stderr}`)}`,
            );
          }
        }
        if (plan.reboot) {
          changed = true;
          const r = await rebootAndWait(this.host(host), run, {
            timeoutMs: this.options.rebootTimeoutMs ?? 15 * 60_000,
            ...(this.options.rebootReissueMs !== undefined ? { reissueMs: this.options.rebootReissueMs } : {}),
          });
          if (!r.ok) return { ...preview, status: 'failed', changed, error: r.detail };
        }
        return { ...preview, status: 'applied', changed };
      } catch (err) {
        if (!(err instanceof ConnectionLostError)) return await fail(`${(err as Error).message}`);
        // A write cut short may have replaced the file (or made it) without telling us: roll it back too.
        if (writing !== undefined) {
          const existed = undo.files.find((f) => f.path === writing)?.existed ?? true;
          remember(written, {
            path: writing,
            uncertain: true,
            ...(existed ? { backupPath: posix.join(this.backupDir(), writing) } : {}),
          });
        }
        const note = (line: string) =>
          this.engine.emit({ type: 'step.note', stage: stage.id, step: step.id, host, line: clean(line) });
        note(`connection lost during ${step.id}: ${err.message}`);
        if (attempt > MAX_RESUMES) {
          return {
            ...preview,
            status: 'failed',
            changed,
            unsettled: true,
            error: sanitize(
              `the connection to ${host} was lost ${attempt} times during this step; stopped (nothing rolled back over a lost connection). Run apply again when ${host} is stable: every step starts from the host's current state.\n${err.message}`,
            ),
          };
        }
        const back = await awaitHost(this.host(host), this.reconnectTimeoutMs());
        if (!back.ok) {
          return {
            ...preview,
            status: 'failed',
            changed,
            unsettled: true,
            error: sanitize(
              `the connection to ${host} was lost during this step and it did not answer again (${back.detail}); nothing was rolled back. Run apply again when ${host} answers: every step starts from the host's current state.\n${err.message}`,
            ),
          };
        }
        note(
          `${host} answers again (${back.detail}); resuming ${step.id} from its start (attempt ${attempt + 1}): files in place compare equal, commands are idempotent`,
        );
      }
    }
  }
}
