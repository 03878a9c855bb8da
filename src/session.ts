/**
 * The interactive session: owns the engine and the target, feeds engine events into the store, and
 * implements what the views may ask for (Controller). No UI code here.
 */
import type { Controller } from './engine/controller.js';
import { Engine } from './engine/runner.js';
import { SessionLog } from './engine/session-log.js';
import type { EngineStore } from './engine/store-types.js';
import { PaneOutputCoalescer } from './engine/output-coalescer.js';
import { Prompts, type Answers } from './engine/prompts.js';
import type { StageId, AnyStageDef } from './engine/types.js';
import type { ClusterConfig, HostConfig } from './config/schema.js';
import { ConfigError } from './config/errors.js';
import { SavedConfig } from './config/store.js';
import { hostFromConfig, hostsFromConfig, type Target } from './target.js';
import { aliasView, pathView, type AliasView } from './transport/ssh-config-report.js';
import { STAGES, STAGE_TITLES } from '../checks/stages.js';
import { STAGE_IDS } from './engine/types.js';
import type { Timebase } from './monitor/series.js';
import { MonitorSession } from './monitor/session.js';
import type { MonitorFrame } from './monitor/types.js';
import { SYMPTOMS } from '../checks/troubleshoot/symptoms.js';
import { TuiJournal } from './session-journal.js';
import { TuiTroubleshoot } from './session-troubleshoot.js';
import { TuiApply } from './session-apply.js';

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
  stages?: ReadonlyArray<AnyStageDef>;
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

/**
 * The questions it asks the operator (trust a host key, apply a previewed plan, confirm a dangerous step,
 * resume an interrupted apply) are prompt events in the store; the answers come back by prompt id.
 */
export class TuiSession implements Controller {
  private engine: Engine | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly prompts: Prompts;
  private readonly stages: ReadonlyArray<AnyStageDef>;
  readonly implementedStages: readonly StageId[];
  readonly initialHosts: HostConfig[];
  readonly initialDesign: ClusterConfig['network']['design'];
  private readonly quitPromise: Promise<void>;
  private resolveQuit!: () => void;

  private monitor: FrameSource | undefined;
  private readonly troubleshoot: TuiTroubleshoot;
  /** The crash journal: an interrupted apply found at start, and the journal of every apply from here. */
  private readonly journal: TuiJournal;
  /** Plan, preview, apply and its dangerous steps' questions (also for the journal's resume). */
  private readonly apply: TuiApply;

  constructor(
    private readonly store: EngineStore,
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
    this.prompts = new Prompts(store.dispatch);
    this.journal = new TuiJournal(store, this.prompts, (choice) => this.journalChoice(choice));
    this.troubleshoot = new TuiTroubleshoot(
      store,
      SYMPTOMS,
      () => this.engine,
      (stage) => this.planStage(stage),
    );
    this.apply = new TuiApply(store, this.prompts, {
      engine: () => this.engine,
      target: () => this.target,
      stageDef: (id) => this.stageDef(id),
      journal: this.journal,
      ended: (stage, applied) => this.planEnded(stage, applied),
    });
    if (target) this.attach(target);
  }

  /** Resolves when the operator quits. */
  whenQuit(): Promise<void> {
    return this.quitPromise;
  }

  /** The trust callback handed to every SSH host of this session: a prompt each, answered by its id. */
  askTrust = (q: TrustQuestion): Promise<boolean> =>
    this.prompts.ask({
      kind: 'trust',
      host: q.name,
      address: `${q.host}:${q.port}`,
      keyType: q.keyType,
      fingerprint: q.fingerprint,
      ...(q.recordIn !== undefined ? { knownHostsFile: q.recordIn } : {}),
      ...(q.certificateAuthority !== undefined ? { certificateAuthority: q.certificateAuthority } : {}),
    });

  answerTrust(id: number, trust: boolean): void {
    this.prompts.answer(id, 'trust', trust);
  }

  answerPlan(id: number, apply: boolean): void {
    this.prompts.answer(id, 'plan', apply);
  }

  answerConfirm(id: number, yes: boolean): void {
    this.prompts.answer(id, 'confirm', yes);
  }

  answerJournal(id: number, choice: Answers['journal']): void {
    this.prompts.answer(id, 'journal', choice);
  }

  private attach(target: Target): void {
    this.target = target;
    this.engine = new Engine(target.hosts, { config: target.config, backpressure: () => this.log.whenWritable() });
    // The log gets every line as the engine publishes it (per chunk); the store a pane's worth per interval
    // (output-coalescer.ts, the TUI's one output timer), flushed before any other event so the store sees them
    // in order.
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
      this.store.dispatch({ type: 'session.notice', text: 'a stage is running; wait for it or press c to cancel' });
      return;
    }
    void this.engine.runStage(def);
  }

  runAll(): void {
    if (!this.engine || this.engine.busy) return;
    void this.engine.runStages(this.stages);
  }

  planStage(stage: StageId): void {
    this.apply.plan(stage);
  }

  /** A fix's plan closed at its preview leaves nothing to verify; one that applied is verified (the symptom again). */
  private planEnded(stage: StageId, applied: boolean): void {
    const fixing = this.store.getState().troubleshoot.fixing;
    if (fixing?.stage !== stage) return;
    if (applied) this.troubleshoot.verifyFix(fixing.symptom);
    else this.store.dispatch({ type: 'troubleshoot.fixing', fixing: null });
  }

  /** The interrupted apply's modal: resume it as an apply from the stage view (dangerous steps ask), roll it back, or later. */
  private journalChoice(choice: Answers['journal']): void {
    if (choice === 'later') this.journal.dismiss();
    else if (!this.engine) return;
    else if (choice === 'rollback') this.journal.rollback(this.engine);
    else if (this.target) this.journal.resume(this.engine, this.target, this.apply);
  }

  cancel(): void {
    this.troubleshoot.cancel();
    this.engine?.cancelAll();
    this.apply.refuseOpenStep();
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
      this.store.dispatch({
        type: 'session.notice',
        text: 'playing a recording: there are no hosts to go back to (q quits)',
      });
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
    const source =
      this.options.monitorSource ??
      (this.target
        ? new MonitorSession(this.target.hosts, {
            intervalMs: this.options.monitor?.intervalMs ?? 1_000,
            config: this.target.config,
            ...(this.options.monitor?.recordFile ? { recordFile: this.options.monitor.recordFile } : {}),
          })
        : undefined);
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

  async saveHosts(
    hosts: HostConfig[],
    network?: { design: ClusterConfig['network']['design'] },
  ): Promise<string | undefined> {
    if (!this.saved) return 'this session runs on the built-in lab or an --inventory file; nothing is saved';
    try {
      const base: Partial<ClusterConfig> = this.target?.config ?? {};
      const config = this.saved.save({
        ...base,
        version: 1,
        hosts,
        ...(network ? { network: { ...(base.network ?? { mtu: 9000 }), design: network.design } } : {}),
      });
      if (this.engine?.busy) this.engine.cancelAll();
      this.unsubscribe?.();
      await this.stopMonitor();
      await this.target?.close();
      const next = hostsFromConfig(config, this.hostOptions());
      this.store.dispatch({
        type: 'session.hosts',
        hosts: config.hosts.map((c, i) => ({ name: c.name, address: next[i]?.address ?? c.address })),
      });
      this.attach({
        config,
        hosts: next,
        source: this.saved.path,
        close: async () => {
          await Promise.all(next.map((x) => x.close()));
        },
      });
      return undefined;
    } catch (err) {
      return err instanceof ConfigError ? err.problems.join('; ') : (err as Error).message;
    }
  }

  private stageDef(id: StageId): AnyStageDef | undefined {
    return this.stages.find((s) => s.id === id);
  }

  stageTitle(stage: StageId): string {
    return this.stageDef(stage)?.title ?? STAGE_TITLES[stage];
  }

  stagePurpose(stage: StageId): string {
    return (
      this.stageDef(stage)?.purpose ??
      `${STAGE_TITLES[stage]} (stage ${STAGE_IDS.indexOf(stage) + 1}, not implemented yet)`
    );
  }

  async close(): Promise<void> {
    // Nobody is left to answer: an unanswered host key is not trusted.
    for (const id of this.prompts.idsOf('trust')) this.prompts.answer(id, 'trust', false);
    this.unsubscribe?.();
    await this.stopMonitor();
    await this.target?.close();
  }
}
