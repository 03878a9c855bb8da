/**
 * The interactive session: owns the engine and the target, feeds engine events into the store, and
 * implements what the views may ask for (Controller). No UI code here.
 */
import type { Controller } from './engine/controller.js';
import { Engine } from './engine/runner.js';
import { StepExecutor } from './engine/steps.js';
import { SessionLog } from './engine/session-log.js';
import type { Store } from './engine/store.js';
import { PaneOutputCoalescer } from './engine/output-coalescer.js';
import type { Danger, StageDef, StageId } from './engine/types.js';
import type { ClusterConfig, HostConfig } from './config/schema.js';
import { ConfigError } from './config/errors.js';
import { SavedConfig } from './config/store.js';
import { hostFromConfig, hostsFromConfig, type Target } from './target.js';
import { aliasView, pathView, type AliasView } from './transport/ssh-config-report.js';
import { STAGES, STAGE_TITLES } from './stages.js';
import { STAGE_IDS } from './engine/types.js';
import type { Timebase } from './monitor/series.js';
import { MonitorSession } from './monitor/session.js';
import type { MonitorFrame } from './monitor/types.js';
import { SYMPTOMS } from '../checks/troubleshoot/symptoms.js';
import { verificationText } from './report.js';
import { TuiJournal } from './session-journal.js';
import { TuiTroubleshoot } from './session-troubleshoot.js';

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
  /** The stages to offer instead of the registry (bench/stream.mjs runs one streaming stage through the real TUI). */
  stages?: ReadonlyArray<StageDef<any, any>>;
}

export interface TrustQuestion {
  name: string;
  host: string;
  port: number;
  fingerprint: string;
  keyType: string;
  recordIn?: string;
  /** A CA in known_hosts vouches for the host (ssh-host-key.ts certificateAuthorityNote): shown with the prompt. */
  certificateAuthority?: string;
}

export class TuiSession implements Controller {
  private engine: Engine | undefined;
  /** A dangerous step waiting for the operator's y/n. */
  private pendingStep: ((yes: boolean) => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private trustQueue: Array<{ q: TrustQuestion; resolve: (ok: boolean) => void }> = [];
  private readonly stages: ReadonlyArray<StageDef<any, any>>;
  readonly implementedStages: readonly StageId[];
  readonly initialHosts: HostConfig[];
  readonly initialDesign: ClusterConfig['network']['design'];
  private readonly quitPromise: Promise<void>;
  private resolveQuit!: () => void;

  private monitor: FrameSource | undefined;
  private readonly troubleshoot: TuiTroubleshoot;
  /** The crash journal: an interrupted apply found at start, and the journal of every apply from here. */
  private readonly journal: TuiJournal;

  constructor(
    private readonly store: Store,
    private target: Target | undefined,
    private readonly saved: SavedConfig | undefined,
    private readonly log: SessionLog,
    private readonly options: SessionOptions = {},
  ) {
    this.stages = options.stages ?? STAGES;
    this.implementedStages = this.stages.map((s) => s.id);
    this.initialHosts = target?.config.hosts ?? [];
    this.initialDesign = target?.config.network.design ?? 'A';
    this.quitPromise = new Promise((r) => (this.resolveQuit = r));
    this.journal = new TuiJournal(store);
    this.troubleshoot = new TuiTroubleshoot(store, SYMPTOMS, () => this.engine, (stage) => this.planStage(stage));
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
      ...(head ? {
        prompt: {
          host: head.q.name, address: `${head.q.host}:${head.q.port}`,
          keyType: head.q.keyType, fingerprint: head.q.fingerprint,
          ...(head.q.recordIn !== undefined ? { knownHostsFile: head.q.recordIn } : {}),
          ...(head.q.certificateAuthority !== undefined ? { certificateAuthority: head.q.certificateAuthority } : {}),
        },
      } : {}),
    });
  }

  answerTrust(trust: boolean): void {
    const head = this.trustQueue.shift();
    head?.resolve(trust);
    this.showTrust();
  }

  private attach(target: Target): void {
    this.target = target;
    this.engine = new Engine(target.hosts, { config: target.config, backpressure: () => this.log.whenWritable() });
    // The log gets every line as it comes; the store a pane's worth per interval (output-coalescer.ts), flushed
    // before any other event so the store sees them in order.
    const output = new PaneOutputCoalescer(this.store.dispatch);
    const off = this.engine.subscribe((e) => {
      this.log.record(e);
      if (e.type === 'cmd.output') output.push(e);
      else {
        output.flush();
        this.store.dispatch(e);
      }
    });
    this.unsubscribe = () => {
      off();
      output.stop();
    };
    // Rolling back needs the hosts: the journal's modal opens once they are connected (or failed).
    void this.engine.connectAll().then(() => {
      if (this.target === target) this.journal.check(target);
    });
  }

  runStage(stage: StageId): void {
    const def = this.stageDef(stage);
    if (!this.engine || !def) return;
    if (this.engine.busy) {
      this.store.dispatch({ type: 'ui.notice', text: 'a stage is running; wait for it or press c to cancel' });
      return;
    }
    void this.engine.runStage(def);
  }

  runAll(): void {
    if (!this.engine || this.engine.busy) return;
    void this.engine.runStages(this.stages);
  }

  planStage(stage: StageId): void {
    const def = this.stageDef(stage);
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
    const def = this.stageDef(stage);
    if (!this.engine || !def || this.engine.busy) return;
    if (this.journal.refuseWhileTimersWait()) return;
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
        this.store.dispatch({
          type: 'ui.notice',
          text: `${stage}: ${o.cancelled ? 'cancelled; ' : ''}${o.changed ?? 0} changed, ${failed} failed; `
            + verificationText([o]),
        });
        if (fixing?.stage === stage) this.troubleshoot.verifyFix(fixing.symptom);
      },
      (err: unknown) => {
        const fixing = this.store.getState().troubleshoot.fixing;
        this.store.dispatch({ type: 'ui.apply' });
        this.store.dispatch({ type: 'ui.notice', text: `applying ${stage} failed: ${(err as Error).message}` });
        if (fixing?.stage === stage) this.troubleshoot.verifyFix(fixing.symptom);
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
    this.troubleshoot.cancel();
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
    this.troubleshoot.open(symptom);
  }

  runSymptom(symptom: string): void {
    this.troubleshoot.run(symptom);
  }

  runAllSymptoms(): void {
    this.troubleshoot.runAll();
  }

  fixSymptom(symptom: string): void {
    this.troubleshoot.fix(symptom);
  }

  private hostOptions(): Parameters<typeof hostsFromConfig>[1] {
    return {
      onUnknownHostKey: (info) => this.askTrust(info),
      ...(this.options.sudoPassword !== undefined ? { sudoPassword: this.options.sudoPassword } : {}),
    };
  }

  describeAddress(h: HostConfig): AliasView | undefined {
    return aliasView(h);
  }

  describePath(h: HostConfig): string | undefined {
    return pathView(h);
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

  private stageDef(id: StageId): StageDef<any, any> | undefined {
    return this.stages.find((s) => s.id === id);
  }

  stageTitle(stage: StageId): string {
    return this.stageDef(stage)?.title ?? STAGE_TITLES[stage];
  }

  stagePurpose(stage: StageId): string {
    return this.stageDef(stage)?.purpose ?? `${STAGE_TITLES[stage]} (stage ${STAGE_IDS.indexOf(stage) + 1}, not implemented yet)`;
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.stopMonitor();
    await this.target?.close();
  }
}
