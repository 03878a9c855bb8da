/**
 * The interactive session: owns the engine and the target, feeds engine events into the store, and
 * implements what the views may ask for (Controller). No UI code here.
 */
import type { Controller } from './engine/controller.js';
import { Engine } from './engine/runner.js';
import { StepExecutor } from './engine/steps.js';
import { SessionLog } from './engine/session-log.js';
import type { Store } from './engine/store.js';
import type { Danger, StageId } from './engine/types.js';
import type { ClusterConfig, HostConfig } from './config/schema.js';
import { ConfigError } from './config/errors.js';
import { SavedConfig } from './config/store.js';
import { hostFromConfig, hostsFromConfig, type Target } from './target.js';
import { STAGES, STAGE_TITLES, stageById } from './stages.js';
import { STAGE_IDS } from './engine/types.js';
import type { Timebase } from './monitor/series.js';
import { MonitorSession } from './monitor/session.js';
import type { MonitorFrame } from './monitor/types.js';
import type { SymptomDef } from './troubleshoot/types.js';
import { diagnose } from './troubleshoot/engine.js';
import { SYMPTOMS } from '../checks/troubleshoot/symptoms.js';
import { TuiJournal } from './session-journal.js';

/** Where monitor frames come from: live samplers, or a recording played back. */
export interface FrameSource {
  start(): void;
  stop(): void | Promise<void>;
  setTimebase(timebase: Timebase): void;
  subscribe(listener: (frame: MonitorFrame) => void): () => void;
}

export interface SessionOptions {
  monitor?: { intervalMs?: number; recordFile?: string };
  /** Frames from elsewhere (a replay) instead of sampling the target. */
  monitorSource?: FrameSource;
  /** For hosts the setup screen adds: the sudo password typed at start (memory only). */
  sudoPassword?: string;
}

export interface TrustQuestion {
  name: string;
  host: string;
  port: number;
  fingerprint: string;
  keyType: string;
}

export class TuiSession implements Controller {
  private engine: Engine | undefined;
  /** A dangerous step waiting for the operator's y/n. */
  private pendingStep: ((yes: boolean) => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private trustQueue: Array<{ q: TrustQuestion; resolve: (ok: boolean) => void }> = [];
  readonly implementedStages: readonly StageId[] = STAGES.map((s) => s.id);
  readonly initialHosts: HostConfig[];
  readonly initialDesign: ClusterConfig['network']['design'];
  private readonly quitPromise: Promise<void>;
  private resolveQuit!: () => void;

  private monitor: FrameSource | undefined;
  private readonly symptoms: readonly SymptomDef[] = SYMPTOMS;
  /** The symptom probed again after its fix applied: its verdict says whether the fix held. */
  private verifying: string | undefined;
  /** Set by cancel: a run of every symptom stops after the one being probed. */
  private symptomsCancelled = false;
  /** The crash journal: an interrupted apply found at start, and the journal of every apply from here. */
  private readonly journal: TuiJournal;

  constructor(
    private readonly store: Store,
    private target: Target | undefined,
    private readonly saved: SavedConfig | undefined,
    private readonly log: SessionLog,
    private readonly options: SessionOptions = {},
  ) {
    this.initialHosts = target?.config.hosts ?? [];
    this.initialDesign = target?.config.network.design ?? 'A';
    this.quitPromise = new Promise((r) => (this.resolveQuit = r));
    this.journal = new TuiJournal(store);
    if (target) this.attach(target);
  }

  /** Resolves when the operator quits. */
  whenQuit(): Promise<void> {
    return this.quitPromise;
  }

  /** The trust callback handed to every SSH host of this session. */
  askTrust = (q: TrustQuestion): Promise<boolean> =>
    new Promise((resolve) => {
      this.trustQueue.push({ q, resolve });
      if (this.trustQueue.length === 1) this.showTrust();
    });

  private showTrust(): void {
    const head = this.trustQueue[0];
    this.store.dispatch({
      type: 'ui.trust',
      ...(head ? { prompt: { host: head.q.name, address: `${head.q.host}:${head.q.port}`, keyType: head.q.keyType, fingerprint: head.q.fingerprint } } : {}),
    });
  }

  answerTrust(trust: boolean): void {
    const head = this.trustQueue.shift();
    head?.resolve(trust);
    this.showTrust();
  }

  private attach(target: Target): void {
    this.target = target;
    this.engine = new Engine(target.hosts, { config: target.config });
    this.unsubscribe = this.engine.subscribe((e) => {
      this.log.record(e);
      this.store.dispatch(e);
    });
    // Rolling back needs the hosts: the journal's modal opens once they are connected (or failed).
    void this.engine.connectAll().then(() => {
      if (this.target === target) this.journal.check(target);
    });
  }

  runStage(stage: StageId): void {
    const def = stageById(stage);
    if (!this.engine || !def) return;
    if (this.engine.busy) {
      this.store.dispatch({ type: 'ui.notice', text: 'a stage is running; wait for it or press c to cancel' });
      return;
    }
    void this.engine.runStage(def);
  }

  runAll(): void {
    if (!this.engine || this.engine.busy) return;
    void this.engine.runStages(STAGES);
  }

  planStage(stage: StageId): void {
    const def = stageById(stage);
    if (!this.engine || !def) return;
    if (this.engine.busy) {
      this.store.dispatch({ type: 'ui.notice', text: 'a stage is running; wait for it or press c to cancel' });
      return;
    }
    const engine = this.engine;
    this.store.dispatch({ type: 'ui.apply', apply: { stage, phase: 'planning', scroll: 0 } });
    void new StepExecutor(engine, { dryRun: true, yes: false, allowReboot: false }).applyStage(def).then(
      (o) => {
        const planned = (o.steps ?? []).some((x) => x.status === 'planned');
        this.store.dispatch({ type: 'ui.apply', apply: { stage, phase: 'preview', scroll: 0 } });
        // The preview's header counts the steps and hosts; the notice only says what to do.
        this.store.dispatch({ type: 'ui.notice', text: planned ? `${stage}: plan ready; y applies, esc closes` : `${stage}: nothing to apply — every guard check passes` });
      },
      (err: unknown) => {
        this.store.dispatch({ type: 'ui.apply' });
        this.store.dispatch({ type: 'ui.notice', text: `planning ${stage} failed: ${(err as Error).message}` });
      },
    );
  }

  applyStage(stage: StageId): void {
    const def = stageById(stage);
    if (!this.engine || !def || this.engine.busy) return;
    const engine = this.engine;
    this.store.dispatch({ type: 'ui.apply', apply: { stage, phase: 'applying', scroll: 0 } });
    this.store.dispatch({ type: 'ui.notice', text: `applying ${stage} on ${this.store.getState().hostOrder.join(', ')}… (c cancels)` });
    // The operator confirmed the previewed plan; dangerous steps still ask, naming their hosts.
    const executor = new StepExecutor(engine, {
      dryRun: false, yes: false, allowReboot: true,
      confirm: (_stage, step, hosts) => new Promise<boolean>((resolve) => {
        this.pendingStep = resolve;
        this.store.dispatch({ type: 'ui.apply', apply: { stage, phase: 'confirm', confirm: { step: step.id, danger: step.danger, hosts: [...hosts] }, scroll: 0 } });
      }),
    });
    const journal = this.target ? this.journal.open(engine, this.target, [def]) : undefined;
    void executor.applyStage(def).finally(() => journal?.finish()).then(
      (o) => {
        const fixing = this.store.getState().troubleshoot.fixing;
        this.store.dispatch({ type: 'ui.apply' });
        const steps = o.steps ?? [];
        const failed = steps.filter((x) => x.status === 'failed').length;
        const notPass = o.results.filter((r) => r.status === 'fail' || r.status === 'error').length;
        this.store.dispatch({
          type: 'ui.notice',
          text: `${stage}: ${o.changed ?? 0} changed, ${failed} failed; verification: ${notPass === 0 ? 'every check passes or warns' : `${notPass} check(s) fail`}`,
        });
        if (fixing?.stage === stage) this.verifyFix(fixing.symptom);
      },
      (err: unknown) => {
        const fixing = this.store.getState().troubleshoot.fixing;
        this.store.dispatch({ type: 'ui.apply' });
        this.store.dispatch({ type: 'ui.notice', text: `applying ${stage} failed: ${(err as Error).message}` });
        if (fixing?.stage === stage) this.verifyFix(fixing.symptom);
      },
    );
  }

  /** As an apply from the stage view: dangerous steps ask (naming their hosts) in the stage they belong to. */
  resumeInterrupted(): void {
    if (this.engine && this.target) this.journal.resume(this.engine, this.target, new StepExecutor(this.engine, { dryRun: false, yes: false, allowReboot: true, confirm: this.askStep }));
  }

  rollbackInterrupted(): void {
    if (this.engine) this.journal.rollback(this.engine);
  }

  dismissInterrupted(): void {
    this.journal.dismiss();
  }

  private askStep = (stage: string, step: { id: string; danger: Danger }, hosts: readonly string[]): Promise<boolean> => new Promise<boolean>((resolve) => {
    this.pendingStep = resolve;
    this.store.dispatch({ type: 'ui.apply', apply: { stage: stage as StageId, phase: 'confirm', confirm: { step: step.id, danger: step.danger, hosts: [...hosts] }, scroll: 0 } });
  });

  answerStep(yes: boolean): void {
    const resolve = this.pendingStep;
    this.pendingStep = undefined;
    const apply = this.store.getState().ui.apply;
    if (apply) this.store.dispatch({ type: 'ui.apply', apply: { stage: apply.stage, phase: 'applying', scroll: 0 } });
    resolve?.(yes);
  }

  cancel(): void {
    if (this.store.getState().troubleshoot.running !== null) this.symptomsCancelled = true;
    this.engine?.cancelAll();
    this.answerStep(false);
  }

  quit(): void {
    this.engine?.cancelAll();
    this.resolveQuit();
  }

  openMonitor(): void {
    this.store.dispatch({ type: 'monitor.open' });
    this.startMonitor();
  }

  closeMonitor(): void {
    if (!this.target) {
      // A replay has no hosts behind it: the stage screens would have nothing to run.
      this.store.dispatch({ type: 'ui.notice', text: 'playing a recording: there are no hosts to go back to (q quits)' });
      return;
    }
    this.store.dispatch({ type: 'monitor.close' });
  }

  monitorTimebase(timebase?: Timebase): void {
    this.store.dispatch({ type: 'monitor.timebase', ...(timebase ? { timebase } : {}) });
    this.monitor?.setTimebase(this.store.getState().monitor.timebase);
  }

  /** Samplers start the first time the monitor opens and run until quit, so history keeps growing. */
  private startMonitor(): void {
    if (this.monitor) return;
    const source = this.options.monitorSource ?? (this.target ? new MonitorSession(this.target.hosts, { intervalMs: this.options.monitor?.intervalMs ?? 1_000, config: this.target.config, ...(this.options.monitor?.recordFile ? { recordFile: this.options.monitor.recordFile } : {}) }) : undefined);
    if (!source) return;
    this.monitor = source;
    source.setTimebase(this.store.getState().monitor.timebase);
    source.subscribe((frame) => this.store.dispatch({ type: 'monitor.frame', frame }));
    source.start();
  }

  private async stopMonitor(): Promise<void> {
    const m = this.monitor;
    this.monitor = undefined;
    await m?.stop();
  }

  openTroubleshoot(symptom?: string): void {
    this.store.dispatch({
      type: 'troubleshoot.open',
      symptoms: this.symptoms.map((s) => ({ id: s.id, title: s.title, observed: s.observed })),
      ...(symptom !== undefined ? { select: symptom } : {}),
    });
    if (symptom !== undefined && this.symptoms.some((s) => s.id === symptom)) this.runSymptom(symptom);
  }

  runSymptom(symptom: string): void {
    void this.diagnoseInTurn([symptom]);
  }

  runAllSymptoms(): void {
    void this.diagnoseInTurn(this.symptoms.map((s) => s.id));
  }

  /**
   * A fix goes the stages' way: the stage view opens on the diagnosis's first fix stage with its
   * plan preview (every step's commands and per-host diffs; y applies, dangerous steps ask), and when
   * that apply ends the symptom runs again — the verification.
   */
  fixSymptom(symptom: string): void {
    const d = this.store.getState().troubleshoot.diagnoses[symptom];
    const stage = d?.fixStages[0];
    const notice = (text: string) => this.store.dispatch({ type: 'ui.notice', text });
    if (!d) return notice('run it first (⏎): the fix follows from the diagnosis');
    if (d.status === 'clear') return notice(`${d.title}: clear — nothing to fix`);
    if (!stage) return notice(`${d.title}: no stage fixes this — ${d.fix}`);
    if (this.engine?.busy) return notice('probes are running; wait for them or press c to cancel');
    this.store.dispatch({ type: 'troubleshoot.fixing', fixing: { symptom, stage } });
    this.store.dispatch({ type: 'ui.selectStage', stage });
    this.store.dispatch({ type: 'ui.screen', screen: 'stage' });
    this.planStage(stage);
  }

  /** The fix's apply ended (well or not): back on the symptom, probing it again. */
  private verifyFix(symptom: string): void {
    this.store.dispatch({ type: 'troubleshoot.open', select: symptom });
    this.store.dispatch({ type: 'troubleshoot.fixing', fixing: null });
    this.verifying = symptom;
    this.runSymptom(symptom);
  }

  /**
   * One symptom: its probes (with its benchmarks where it needs them), the result into the store.
   * Several: one quick read-only run of the stages they share, every diagnosis into the store.
   */
  private async diagnoseInTurn(wanted: readonly string[]): Promise<void> {
    let ids = wanted;
    const engine = this.engine;
    const notice = (text: string) => this.store.dispatch({ type: 'ui.notice', text });
    if (!engine || engine.busy || this.store.getState().troubleshoot.running !== null) {
      this.verifying = undefined;
      return notice(engine ? 'probes are running; wait for them or press c to cancel' : 'no hosts to probe (playing a recording?)');
    }
    this.symptomsCancelled = false;
    const found: string[] = [];
    try {
      if (ids.length > 1) {
        // Every symptom at once, as the CLI does without a symptom: one read-only run of the stages
        // they share (quick probes, no benchmarks), instead of the stages again for each symptom.
        const defs = ids.map((id) => this.symptoms.find((s) => s.id === id)).filter((d): d is SymptomDef => d !== undefined);
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
        const verdict = d.status === 'found' ? `${d.cause ?? 'cause found'}${d.rules.length ? ` (${d.rules.join(', ')})` : ''} — f fixes` : d.status;
        if (this.verifying === id) notice(`${d.title}: ${d.status === 'clear' ? 'clear after the fix — verified' : `still ${verdict}`}`);
        else if (ids.length === 1) notice(`${d.title}: ${verdict}`);
      }
      if (wanted.length > 1) notice(this.symptomsCancelled ? 'cancelled' : found.length === 0 ? 'no symptom shows on these hosts' : `found: ${found.join('; ')}`);
    } catch (err) {
      notice(`troubleshooting failed: ${(err as Error).message}`);
    } finally {
      this.verifying = undefined;
      this.store.dispatch({ type: 'troubleshoot.running', symptom: null });
    }
  }

  private hostOptions(): Parameters<typeof hostsFromConfig>[1] {
    return {
      onUnknownHostKey: (info) => this.askTrust(info),
      ...(this.options.sudoPassword !== undefined ? { sudoPassword: this.options.sudoPassword } : {}),
    };
  }

  async testConnection(h: HostConfig): Promise<{ ok: boolean; message: string }> {
    let host;
    try {
      host = hostFromConfig(h, this.hostOptions());
    } catch (err) {
      return { ok: false, message: (err as Error).message };
    }
    try {
      await host.connect();
      const r = await host.run({ argv: ['uname', '-n'] }, { timeoutMs: 10_000 });
      const sudo = await host.run({ argv: ['true'] }, { sudo: true, timeoutMs: 10_000 });
      const name = r.stdout.trim().split('\n')[0] ?? '?';
      return {
        ok: r.exitCode === 0,
        message: `connected to ${name} in ${r.durationMs} ms; sudo -n ${sudo.exitCode === 0 ? 'works' : 'needs a password (probes as root will fail)'}`,
      };
    } catch (err) {
      return { ok: false, message: (err as Error).message.split('\n')[0] ?? 'failed' };
    } finally {
      await host.close();
    }
  }

  async saveHosts(hosts: HostConfig[], network?: { design: ClusterConfig['network']['design'] }): Promise<string | undefined> {
    if (!this.saved) return 'this session runs on the built-in lab or an --inventory file; nothing is saved';
    try {
      const base: Partial<ClusterConfig> = this.target?.config ?? {};
      const config = this.saved.save({ ...base, version: 1, hosts, ...(network ? { network: { ...(base.network ?? { mtu: 9000 }), design: network.design } } : {}) });
      if (this.engine?.busy) this.engine.cancelAll();
      this.unsubscribe?.();
      await this.stopMonitor();
      await this.target?.close();
      const next = hostsFromConfig(config, this.hostOptions());
      this.store.dispatch({ type: 'session.hosts', hosts: config.hosts.map((c, i) => ({ name: c.name, address: next[i]?.address ?? c.address })) });
      this.attach({ config, hosts: next, source: this.saved.path, close: async () => { await Promise.all(next.map((x) => x.close())); } });
      return undefined;
    } catch (err) {
      return err instanceof ConfigError ? err.problems.join('; ') : (err as Error).message;
    }
  }

  stageTitle(stage: StageId): string {
    return stageById(stage)?.title ?? STAGE_TITLES[stage];
  }

  stagePurpose(stage: StageId): string {
    return stageById(stage)?.purpose ?? `${STAGE_TITLES[stage]} (stage ${STAGE_IDS.indexOf(stage) + 1}, not implemented yet)`;
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.stopMonitor();
    await this.target?.close();
  }
}
