/**
 * The crash journal in the TUI: after connecting, an interrupted apply on these hosts is put to the
 * operator (a journal prompt: its modal); r resumes it (the interrupted stage and the ones after it, as
 * the stage view applies: dangerous steps still ask), b rolls its in-flight steps back, esc leaves the
 * decision for later (the journal stays; an apply from here keeps those steps in it until they run).
 * Every apply from the TUI keeps a journal, so killing the TUI mid-apply is recoverable the same way.
 */
import {
  ApplyJournal,
  findInterruptedApply,
  journalTarget,
  removeJournal,
  resumeStages,
  type FoundJournal,
} from './engine/journal.js';
import {
  handleStaleTimers,
  repairInterrupted,
  rollbackComplete,
  rollbackInterrupted,
  rollbackLines,
  timerLines,
} from './engine/journal-rollback.js';
import { journalUi, type JournalUi } from './engine/journal-text.js';
import type { Prompts, Answers } from './engine/prompts.js';
import type { Engine } from './engine/runner.js';
import type { StepExecutor } from './engine/steps.js';
import type { EngineStore } from './engine/store-types.js';
import { verificationText } from './engine/run-output.js';
import type { StageId, AnyStageDef } from './engine/types.js';
import type { Target } from './target.js';
import { stageById } from '../checks/stages.js';

type Interrupted = Extract<FoundJournal, { state: 'interrupted' }>;

/** How a resume applies: as the stage view does (the session's apply workflow, session-apply.ts). */
export interface ApplyRunner {
  /** An executor whose dangerous steps ask the operator, naming their hosts. */
  executor(engine: Engine): StepExecutor;
  /** The stage view follows the apply into `stage` (not while a step's question is open). */
  follow(stage: StageId): void;
  /** The apply ended, however it did. */
  ended(): void;
}

export class TuiJournal {
  /** The interrupted apply the operator has not resolved yet (esc keeps it here). */
  private found: Interrupted | undefined;
  /** Its modal: the prompt's id and what it shows. */
  private modal: { id: number; ui: JournalUi } | undefined;

  constructor(
    private readonly store: EngineStore,
    private readonly prompts: Prompts,
    private readonly onChoice: (choice: Answers['journal']) => void,
  ) {}

  private notice(text: string): void {
    this.store.dispatch({ type: 'session.notice', text });
  }

  /** The modal's phase (undefined when it is closed). */
  get phase(): JournalUi['phase'] | undefined {
    return this.modal?.ui.phase;
  }

  private show(ui: JournalUi): void {
    if (this.modal) {
      this.modal = { id: this.modal.id, ui };
      this.prompts.update(this.modal.id, { kind: 'journal', journal: ui });
    } else {
      this.modal = { id: this.prompts.show({ kind: 'journal', journal: ui }, (choice) => this.onChoice(choice)), ui };
    }
  }

  private closeModal(): void {
    if (this.modal) this.prompts.close(this.modal.id);
    this.modal = undefined;
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
    if (found.state === 'corrupt')
      this.notice(`the crash journal was unreadable (${found.problem}); moved aside to ${found.movedTo}`);
    else if (found.state === 'running')
      this.notice(`an apply is running on these hosts (pid ${found.journal.pid}); wait for it before applying`);
    else {
      this.found = found;
      this.show(journalUi(found.journal));
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
    this.notice(
      `the interrupted apply left ${which} armed, which would undo this apply: ` +
        'press r to resume (it stops them first) or b to roll back',
    );
    // Its modal takes those keys: back on screen if it was left for later.
    if (!this.modal && this.found) this.show(journalUi(this.found.journal));
    return true;
  }

  /** The journal of an apply from the TUI; carries the unresolved interrupted steps. */
  open(engine: Engine, target: Target, stages: ReadonlyArray<{ id: StageId }>, resuming = false): ApplyJournal {
    // An undecided interrupted apply stays in the same file: its steps (and, until resumed, its timers) kept.
    const found = this.found;
    const where = journalTarget(target);
    return new ApplyJournal({
      key: where.key,
      runId: engine.context.runId,
      source: target.source,
      hosts: where.hosts,
      stages: stages.map((s) => s.id),
      ...(found ? { carry: found.journal.inFlight, path: found.path } : {}),
      ...(found && !resuming ? { carryArmed: found.journal.armed } : {}),
      onError: (err) => this.notice(`cannot write the crash journal: ${err.message}`),
    }).attach(engine);
  }

  /** r: applies the interrupted stage and the ones after it, in the stage view (panes, confirmations). */
  resume(engine: Engine, target: Target, runner: ApplyRunner): void {
    const found = this.found;
    if (!found || this.modal?.ui.phase !== 'ask') return;
    if (engine.busy) return this.notice('a stage is running; wait for it or press c to cancel');
    const ids = resumeStages(found.journal);
    const defs = ids.map((id) => stageById(id)).filter((d): d is AnyStageDef => d !== undefined);
    const first = defs[0];
    if (!first) return;
    let journal: ApplyJournal | undefined;
    this.closeModal();
    runner.follow(first.id);
    this.notice(
      `resuming run ${found.journal.runId}: ${ids.join(', ')} on ${this.store.getState().hostOrder.join(', ')}… (c cancels)`,
    );
    // The stage view follows the apply from stage to stage.
    const follow = engine.subscribe((e) => {
      if (e.type === 'stage.state' && e.state === 'running' && ids.includes(e.stage)) runner.follow(e.stage);
    });
    // The killed run's rollback timers are stopped first (else they would undo what the resume proves);
    // a package command the kill cut short is finished next (apt refuses to install until it is).
    void handleStaleTimers(engine, found.journal, 'resume')
      .then(async (timers) => {
        if (timers.length)
          this.notice(`rollback timers of run ${found.journal.runId}: ${timerLines(timers).join('; ')}`);
        if (timers.some((t) => t.unreachable || !t.ok)) {
          throw new Error(
            'a rollback timer of the interrupted run may still wait; the journal stays — ' +
              'resume again once every host answers',
          );
        }
        journal = this.open(engine, target, defs, true);
        this.found = undefined;
        const repaired = await repairInterrupted(engine, found.journal);
        const failed = repaired.flatMap((r) => r.actions).filter((a) => !a.ok).length;
        const touched = repaired.filter((r) => r.actions.length > 0).map((r) => r.host);
        const failures = failed ? ` (${failed} failed)` : '';
        if (touched.length > 0) this.notice(`dpkg --configure -a on ${touched.join(', ')}${failures}; resuming…`);
        return runner.executor(engine).applyStages(defs);
      })
      .then(
        (run) => {
          const steps = run.outcomes.flatMap((o) => o.steps ?? []);
          this.notice(
            `resumed ${ids.join(', ')}: ${run.outcomes.reduce((n, o) => n + (o.changed ?? 0), 0)} changed, ${steps.filter((x) => x.status === 'failed').length} failed; ` +
              `${run.stoppedAfter && run.notRun.length ? `stopped after ${run.stoppedAfter}; ` : ''}` +
              verificationText(run.outcomes),
          );
        },
        (err: unknown) => this.notice(`resuming failed: ${(err as Error).message}`),
      )
      .finally(() => {
        follow();
        journal?.finish();
        runner.ended();
      });
  }

  /** b: undoes the in-flight steps; the modal shows what was restored or removed on each host. */
  rollback(engine: Engine): void {
    const found = this.found;
    const ui = this.modal?.ui;
    if (!found || !ui || ui.phase !== 'ask') return;
    if (engine.busy) return this.notice('a stage is running; wait for it or press c to cancel');
    this.show({ ...ui, phase: 'rolling-back' });
    this.notice(
      `rolling back run ${found.journal.runId} on ${[...new Set(found.journal.inFlight.map((x) => x.host))].join(', ')}…`,
    );
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
        this.show({ ...ui, phase: 'done', lines });
        this.notice(complete ? 'rolled back — esc closes' : 'rollback incomplete — esc closes');
      },
      (err: unknown) => {
        this.show({ ...ui, phase: 'done', lines: [`rollback failed: ${(err as Error).message}`] });
      },
    );
  }

  /** esc: closes the modal; an undecided journal stays on disk for the next start. */
  dismiss(): void {
    const ui = this.modal?.ui;
    if (!ui || ui.phase === 'rolling-back') return;
    this.closeModal();
    if (ui.phase === 'ask')
      this.notice('the interrupted apply stays recorded; restart l20-setup to decide, or apply its stage again');
  }
}
