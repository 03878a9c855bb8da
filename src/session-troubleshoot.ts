/**
 * Troubleshooting in the TUI: the symptom list, probing one symptom (with its benchmarks) or every one
 * (one quick read-only run), the fix through the stage view's plan preview, and the symptom probed again
 * when that apply ends (the verification). Split out of TuiSession, which owns the engine.
 */
import type { Engine } from './engine/runner.js';
import type { EngineStore } from './engine/store-types.js';
import type { StageId } from './engine/types.js';
import type { SymptomDef } from './troubleshoot/types.js';
import { diagnose } from './troubleshoot/engine.js';

export class TuiTroubleshoot {
  /** The symptom probed again after its fix applied: its verdict says whether the fix held. */
  private verifying: string | undefined;
  /** Set by cancel: a run of every symptom stops after the one being probed. */
  private symptomsCancelled = false;

  constructor(
    private readonly store: EngineStore,
    private readonly symptoms: readonly SymptomDef[],
    private readonly engine: () => Engine | undefined,
    private readonly planStage: (stage: StageId) => void,
  ) {}

  /** The operator cancelled: a run of every symptom stops after the current one. */
  cancel(): void {
    if (this.store.getState().troubleshoot.running !== null) this.symptomsCancelled = true;
  }

  open(symptom?: string): void {
    this.store.dispatch({
      type: 'troubleshoot.open',
      symptoms: this.symptoms.map((s) => ({ id: s.id, title: s.title, observed: s.observed })),
      ...(symptom !== undefined ? { select: symptom } : {}),
    });
    if (symptom !== undefined && this.symptoms.some((s) => s.id === symptom)) this.run(symptom);
  }

  run(symptom: string): void {
    void this.diagnoseInTurn([symptom]);
  }

  runAll(): void {
    void this.diagnoseInTurn(this.symptoms.map((s) => s.id));
  }

  /**
   * A fix goes the stages' way: the stage view opens on the diagnosis's first fix stage with its
   * plan preview (every step's commands and per-host diffs; y applies, dangerous steps ask), and when
   * that apply ends the symptom runs again — the verification.
   */
  fix(symptom: string): void {
    const d = this.store.getState().troubleshoot.diagnoses[symptom];
    const stage = d?.fixStages[0];
    const notice = (text: string) => this.store.dispatch({ type: 'session.notice', text });
    if (!d) return notice('run it first (⏎): the fix follows from the diagnosis');
    if (d.status === 'clear') return notice(`${d.title}: clear — nothing to fix`);
    if (!stage) return notice(`${d.title}: no stage fixes this — ${d.fix}`);
    if (this.engine()?.busy) return notice('probes are running; wait for them or press c to cancel');
    this.store.dispatch({ type: 'troubleshoot.fixing', fixing: { symptom, stage } });
    this.store.dispatch({ type: 'session.showStage', stage });
    this.planStage(stage);
  }

  /** The fix's apply ended (well or not): back on the symptom, probing it again. */
  verifyFix(symptom: string): void {
    this.store.dispatch({ type: 'troubleshoot.open', select: symptom });
    this.store.dispatch({ type: 'troubleshoot.fixing', fixing: null });
    this.verifying = symptom;
    this.run(symptom);
  }

  /**
   * One symptom: its probes (with its benchmarks where it needs them), the result into the store.
   * Several: one quick read-only run of the stages they share, every diagnosis into the store.
   */
  private async diagnoseInTurn(wanted: readonly string[]): Promise<void> {
    let ids = wanted;
    const engine = this.engine();
    const notice = (text: string) => this.store.dispatch({ type: 'session.notice', text });
    if (!engine || engine.busy || this.store.getState().troubleshoot.running !== null) {
      this.verifying = undefined;
      return notice(
        engine ? 'probes are running; wait for them or press c to cancel' : 'no hosts to probe (playing a recording?)',
      );
    }
    this.symptomsCancelled = false;
    const found: string[] = [];
    try {
      if (ids.length > 1) {
        // Every symptom at once, as the CLI does without a symptom: one read-only run of the stages
        // they share (quick probes, no benchmarks), instead of the stages again for each symptom.
        const defs = ids
          .map((id) => this.symptoms.find((s) => s.id === id))
          .filter((d): d is SymptomDef => d !== undefined);
        this.store.dispatch({ type: 'troubleshoot.running', symptom: defs[0]?.id ?? ids[0] ?? '' });
        notice(`probing every symptom's quick checks on ${this.store.getState().hostOrder.join(', ')}… (c cancels)`);
        const all = this.symptomsCancelled ? [] : await diagnose(engine, defs, { benchmarks: false });
        for (const d of all) {
          this.store.dispatch({ type: 'troubleshoot.diagnosis', diagnosis: d });
          if (d.status === 'found') found.push(d.title);
        }
        ids = [];
      }
      for (const id of ids) {
        const def = this.symptoms.find((s) => s.id === id);
        if (!def) continue;
        if (this.symptomsCancelled) break;
        this.store.dispatch({ type: 'troubleshoot.running', symptom: id });
        notice(`probing "${def.title}" on ${this.store.getState().hostOrder.join(', ')}… (c cancels)`);
        const [d] = await diagnose(engine, [def]);
        if (!d) continue;
        this.store.dispatch({ type: 'troubleshoot.diagnosis', diagnosis: d });
        if (d.status === 'found') found.push(d.title);
        const verdict =
          d.status === 'found'
            ? `${d.cause ?? 'cause found'}${d.rules.length ? ` (${d.rules.join(', ')})` : ''} — f fixes`
            : d.status;
        if (this.verifying === id)
          notice(`${d.title}: ${d.status === 'clear' ? 'clear after the fix — verified' : `still ${verdict}`}`);
        else if (ids.length === 1) notice(`${d.title}: ${verdict}`);
      }
      if (wanted.length > 1)
        notice(
          this.symptomsCancelled
            ? 'cancelled'
            : found.length === 0
              ? 'no symptom shows on these hosts'
              : `found: ${found.join('; ')}`,
        );
    } catch (err) {
      notice(`troubleshooting failed: ${(err as Error).message}`);
    } finally {
      this.verifying = undefined;
      this.store.dispatch({ type: 'troubleshoot.running', symptom: null });
    }
  }
}
