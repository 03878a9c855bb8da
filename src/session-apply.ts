/**
 * Plan and apply in the TUI, in one place: the dry run of a stage (phase planning), its preview put to the
 * operator (a plan prompt: y applies, esc closes), the apply (phase applying, journaled) whose dangerous steps
 * each ask naming their hosts (a confirm prompt), and — for the crash journal's resume — the same executor and
 * stage view. Cancel refuses the step waiting for its answer. Split out of TuiSession, which owns the engine.
 */
import type { Prompts } from './engine/prompts.js';
import type { Engine } from './engine/runner.js';
import { StepExecutor } from './engine/steps.js';
import type { ApplyRun, EngineStore } from './engine/store-types.js';
import type { Danger, StageDef, StageId } from './engine/types.js';
import { verificationText } from './engine/run-output.js';
import type { ApplyRunner, TuiJournal } from './session-journal.js';
import type { Target } from './target.js';

export interface ApplyDeps {
  engine(): Engine | undefined;
  target(): Target | undefined;
  stageDef(id: StageId): StageDef | undefined;
  journal: TuiJournal;
  /** The plan of `stage` ended: closed at its preview (applied false), or applied, well or not. */
  ended(stage: StageId, applied: boolean): void;
}

export class TuiApply implements ApplyRunner {
  constructor(
    private readonly store: EngineStore,
    private readonly prompts: Prompts,
    private readonly deps: ApplyDeps,
  ) {}

  private notice(text: string): void {
    this.store.dispatch({ type: 'session.notice', text });
  }

  private phase(apply?: ApplyRun): void {
    this.store.dispatch({ type: 'session.apply', ...(apply ? { apply } : {}) });
  }

  /** The dry run of the stage's steps, then its preview: y applies it. */
  plan(stage: StageId): void {
    const def = this.deps.stageDef(stage);
    const engine = this.deps.engine();
    if (!engine || !def) return;
    if (engine.busy) return this.notice('a stage is running; wait for it or press c to cancel');
    this.phase({ stage, phase: 'planning' });
    void new StepExecutor(engine, { dryRun: true, yes: false, allowReboot: false }).applyStage(def).then(
      (o) => {
        const planned = (o.steps ?? []).some((x) => x.status === 'planned');
        this.phase();
        // The preview's header counts the steps and hosts; the notice only says what to do.
        this.notice(
          planned
            ? `${stage}: plan ready; y applies, esc closes`
            : `${stage}: nothing to apply — every guard check passes`,
        );
        const id = this.prompts.show({ kind: 'plan', stage, planned }, (yes) => {
          // Refused (a stage running, rollback timers waiting): the notice says why, the preview stays.
          if (yes && !this.mayApply()) return;
          this.prompts.close(id);
          if (yes) this.apply(stage);
          else {
            this.notice(`${stage}: plan closed; nothing applied`);
            this.deps.ended(stage, false);
          }
        });
      },
      (err: unknown) => {
        this.phase();
        this.notice(`planning ${stage} failed: ${(err as Error).message}`);
        this.deps.ended(stage, false);
      },
    );
  }

  private mayApply(): boolean {
    const engine = this.deps.engine();
    if (!engine) return false;
    if (engine.busy) {
      this.notice('a stage is running; wait for it or press c to cancel');
      return false;
    }
    return !this.deps.journal.refuseWhileTimersWait();
  }

  /** The operator confirmed the previewed plan; dangerous steps still ask, naming their hosts. */
  private apply(stage: StageId): void {
    const def = this.deps.stageDef(stage);
    const engine = this.deps.engine();
    if (!engine || !def) return;
    this.phase({ stage, phase: 'applying' });
    this.notice(`applying ${stage} on ${this.store.getState().hostOrder.join(', ')}… (c cancels)`);
    const target = this.deps.target();
    const journal = target ? this.deps.journal.open(engine, target, [def]) : undefined;
    void this.executor(engine)
      .applyStage(def)
      .finally(() => journal?.finish())
      .then(
        (o) => {
          this.phase();
          const failed = (o.steps ?? []).filter((x) => x.status === 'failed').length;
          this.notice(
            `${stage}: ${o.cancelled ? 'cancelled; ' : ''}${o.changed ?? 0} changed, ${failed} failed; ` +
              verificationText([o]),
          );
          this.deps.ended(stage, true);
        },
        (err: unknown) => {
          this.phase();
          this.notice(`applying ${stage} failed: ${(err as Error).message}`);
          this.deps.ended(stage, true);
        },
      );
  }

  executor(engine: Engine): StepExecutor {
    return new StepExecutor(engine, {
      dryRun: false,
      yes: false,
      allowReboot: true,
      confirm: (stage, step, hosts) => this.confirm(stage as StageId, step, hosts),
    });
  }

  private confirm(stage: StageId, step: { id: string; danger: Danger }, hosts: readonly string[]): Promise<boolean> {
    this.phase({ stage, phase: 'applying' });
    return this.prompts.ask({ kind: 'confirm', stage, step: step.id, danger: step.danger, hosts: [...hosts] });
  }

  follow(stage: StageId): void {
    // Not while a step waits for its y/n: its question names the stage it belongs to.
    if (this.prompts.idsOf('confirm').length > 0) return;
    this.store.dispatch({ type: 'session.showStage', stage });
    this.phase({ stage, phase: 'applying' });
  }

  ended(): void {
    this.phase();
  }

  /** Cancel: the step waiting for its answer is refused (skipped). */
  refuseOpenStep(): void {
    for (const id of this.prompts.idsOf('confirm')) this.prompts.answer(id, 'confirm', false);
  }
}
