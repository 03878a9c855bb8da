/**
 * The crash journal in the TUI: after connecting, an interrupted apply on these hosts opens the
 * pipeline's modal (store ui.journal); r resumes it (the interrupted stage and the ones after it, as
 * the stage view applies: dangerous steps still ask), b rolls its in-flight steps back, esc leaves the
 * decision for later (the journal stays; an apply from here keeps those steps in it until they run).
 * Every apply from the TUI keeps a journal, so killing the TUI mid-apply is recoverable the same way.
 */
import {
  ApplyJournal, findInterruptedApply, journalTarget, removeJournal, resumeStages, type FoundJournal,
} from './engine/journal.js';
import {
  handleStaleTimers, repairInterrupted, rollbackComplete, rollbackInterrupted, rollbackLines, timerLines,
} from './engine/journal-rollback.js';
import { journalUi } from './engine/journal-text.js';
import type { Engine } from './engine/runner.js';
import type { StepExecutor } from './engine/steps.js';
import type { Store } from './engine/store.js';
import { verificationText } from './report.js';
import type { StageDef, StageId } from './engine/types.js';
import type { Target } from './target.js';
import { stageById } from './stages.js';

type Interrupted = Extract<FoundJournal, { state: 'interrupted' }>;

export class TuiJournal {
  /** The interrupted apply the operator has not resolved yet (esc keeps it here). */
  private found: Interrupted | undefined;

  constructor(private readonly store: Store) {}

  private notice(text: string): void {
    this.store.dispatch({ type: 'ui.notice', text });
  }

  /** Looks for this target's journal (call once the hosts are connected): interrupted → the modal. */
  check(target: Target): void {
    let found: FoundJournal | undefined;
    try {
      found = findInterruptedApply(journalTarget(target));
    } catch (err) {
      this.notice(`cannot read the crash journal: ${(err as Error).message}`);
      return;
    }
    this.found = undefined;
    if (!found) return;
    if (found.state === 'corrupt') this.notice(`the crash journal was unreadable (${found.problem}); moved aside to ${found.movedTo}`);
    else if (found.state === 'running') this.notice(`an apply is running on these hosts (pid ${found.journal.pid}); wait for it before applying`);
    else {
      this.found = found;
      this.store.dispatch({ type: 'ui.journal', journal: journalUi(found.journal) });
    }
  }

  /**
   * A plain apply while the interrupted run's rollback timers may still fire would be undone by them: refused,
   * naming the timers, until r (stops them, then resumes) or b (runs them) settles them. True when refused.
   */
  refuseWhileTimersWait(now = Date.now()): boolean {
    const waiting = (this.found?.journal.armed ?? []).filter((a) => Date.parse(a.firesAt) > now);
    if (waiting.length === 0) return false;
    const which = waiting.map((a) => `${a.unit}.timer on ${a.host}`).join(', ');
    this.notice(`the interrupted apply left ${which} armed, which would undo this apply: `
      + 'press r to resume (it stops them first) or b to roll back');
    return true;
  }

  /** The journal of an apply from the TUI; carries the unresolved interrupted steps. */
  open(engine: Engine, target: Target, stages: ReadonlyArray<{ id: StageId }>, resuming = false): ApplyJournal {
    // An undecided interrupted apply stays in the same file: its steps (and, until resumed, its timers) kept.
    const found = this.found;
    const where = journalTarget(target);
    return new ApplyJournal({
      key: where.key, runId: engine.context.runId, source: target.source, hosts: where.hosts,
      stages: stages.map((s) => s.id),
      ...(found ? { carry: found.journal.inFlight, path: found.path } : {}),
      ...(found && !resuming ? { carryArmed: found.journal.armed } : {}),
      onError: (err) => this.notice(`cannot write the crash journal: ${err.message}`),
    }).attach(engine);
  }

  /** r: applies the interrupted stage and the ones after it, in the stage view (panes, confirmations). */
  resume(engine: Engine, target: Target, executor: StepExecutor): void {
    const found = this.found;
    if (!found) return;
    if (engine.busy) return this.notice('a stage is running; wait for it or press c to cancel');
    const ids = resumeStages(found.journal);
    const defs = ids.map((id) => stageById(id)).filter((d): d is StageDef<any, any> => d !== undefined);
    const first = defs[0];
    if (!first) return;
    let journal: ApplyJournal | undefined;
    const show = (stage: StageId) => {
      this.store.dispatch({ type: 'ui.selectStage', stage });
      this.store.dispatch({ type: 'ui.apply', apply: { stage, phase: 'applying', scroll: 0 } });
    };
    this.store.dispatch({ type: 'ui.journal' });
    this.store.dispatch({ type: 'ui.screen', screen: 'stage' });
    show(first.id);
    this.notice(`resuming run ${found.journal.runId}: ${ids.join(', ')} on ${this.store.getState().hostOrder.join(', ')}… (c cancels)`);
    // The stage view follows the apply from stage to stage (not while a step waits for its y/n).
    const follow = engine.subscribe((e) => {
      if (e.type === 'stage.state' && e.state === 'running' && ids.includes(e.stage) && this.store.getState().ui.apply?.phase !== 'confirm') show(e.stage);
    });
    // The killed run's rollback timers are stopped first (else they would undo what the resume proves);
    // a package command the kill cut short is finished next (apt refuses to install until it is).
    void handleStaleTimers(engine, found.journal, 'resume').then(async (timers) => {
      if (timers.length) this.notice(`rollback timers of run ${found.journal.runId}: ${timerLines(timers).join('; ')}`);
      if (timers.some((t) => t.unreachable || !t.ok)) {
        throw new Error('a rollback timer of the interrupted run may still wait; the journal stays — ' +
          'resume again once every host answers');
      }
      journal = this.open(engine, target, defs, true);
      this.found = undefined;
      const repaired = await repairInterrupted(engine, found.journal);
      const failed = repaired.flatMap((r) => r.actions).filter((a) => !a.ok).length;
      const touched = repaired.filter((r) => r.actions.length > 0).map((r) => r.host);
      const failures = failed ? ` (${failed} failed)` : '';
      if (touched.length > 0) this.notice(`dpkg --configure -a on ${touched.join(', ')}${failures}; resuming…`);
      return executor.applyStages(defs);
    }).then(
      (run) => {
        const steps = run.outcomes.flatMap((o) => o.steps ?? []);
        this.notice(`resumed ${ids.join(', ')}: ${run.outcomes.reduce((n, o) => n + (o.changed ?? 0), 0)} changed, ${steps.filter((x) => x.status === 'failed').length} failed; ` +
          `${run.stoppedAfter && run.notRun.length ? `stopped after ${run.stoppedAfter}; ` : ''}`
          + verificationText(run.outcomes));
      },
      (err: unknown) => this.notice(`resuming failed: ${(err as Error).message}`),
    ).finally(() => {
      follow();
      journal?.finish();
      this.store.dispatch({ type: 'ui.apply' });
    });
  }

  /** b: undoes the in-flight steps; the modal shows what was restored or removed on each host. */
  rollback(engine: Engine): void {
    const found = this.found;
    const ui = this.store.getState().ui.journal;
    if (!found || !ui || ui.phase !== 'ask') return;
    if (engine.busy) return this.notice('a stage is running; wait for it or press c to cancel');
    this.store.dispatch({ type: 'ui.journal', journal: { ...ui, phase: 'rolling-back' } });
    this.notice(`rolling back run ${found.journal.runId} on ${[...new Set(found.journal.inFlight.map((x) => x.host))].join(', ')}…`);
    const undo = async () => {
      const timers = await handleStaleTimers(engine, found.journal, 'rollback');
      return { timers, results: await rollbackInterrupted(engine, found.journal) };
    };
    void undo().then(
      ({ timers, results }) => {
        const complete = rollbackComplete(results) && timers.every((t) => t.ok && !t.unreachable);
        if (complete) {
          removeJournal(found.path);
          this.found = undefined;
        }
        const last = complete
          ? 'rolled back; journal removed. Later stages were not run: apply them from the pipeline when ready.'
          : `not everything was rolled back; the journal stays (${found.path}).`;
        const lines = [...timerLines(timers), ...rollbackLines(results), last];
        this.store.dispatch({ type: 'ui.journal', journal: { ...ui, phase: 'done', lines } });
        this.notice(complete ? 'rolled back — esc closes' : 'rollback incomplete — esc closes');
      },
      (err: unknown) => {
        this.store.dispatch({ type: 'ui.journal', journal: { ...ui, phase: 'done', lines: [`rollback failed: ${(err as Error).message}`] } });
      },
    );
  }

  /** esc: closes the modal; an undecided journal stays on disk for the next start. */
  dismiss(): void {
    const ui = this.store.getState().ui.journal;
    if (!ui || ui.phase === 'rolling-back') return;
    this.store.dispatch({ type: 'ui.journal' });
    if (ui.phase === 'ask') this.notice('the interrupted apply stays recorded; restart l20-setup to decide, or apply its stage again');
  }
}
