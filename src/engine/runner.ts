/**
 * The stage runner: for each host in parallel, probe → parse → evaluate; then the pair checks over
 * every host's facts. It emits typed events and owns no UI. Probe failures become `fail`/`error`
 * verdicts with the command, exit code and output as evidence — never exceptions to the caller.
 */
import { setMaxListeners } from 'node:events';
import { ConnectionLostError, type Host, type RunResult } from '../transport/types.js';
import type { EngineEvent, EngineListener } from './events.js';
import { OutputLines } from './output-lines.js';
import { SharedProbes, type SharedProbe } from './shared-probes.js';
import { clean, sanitize, type CleanText } from '../util/sanitize.js';
import { cannotTellVerdict, unreadableNeeds } from './probe-health.js';
import { groundedVerdict } from './verdict-guard.js';
import {
  worstStatus,
  type AnyStageDef,
  type CheckResult,
  type HostCheckDef,
  type HostFacts,
  type HostRunner,
  type PairCheckDef,
  type ProbeDef,
  type StageContext,
  type StageDef,
  type StageId,
  type StepResult,
} from './types.js';
import { clusterSchema, type ClusterConfig } from '../config/schema.js';
import { backupRunId } from '../transport/files.js';

const DEFAULT_PROBE_TIMEOUT_MS = 20_000;

/**
 * Verdicts quote remote output (a PRETTY_NAME, an error line): make them inert once, here, so no
 * reporter, view or log can pass a control sequence to the operator's terminal.
 */
function inert(r: CheckResult): CheckResult {
  return {
    ...r,
    summary: sanitize(r.summary),
    evidence: sanitize(r.evidence),
    ...(r.fix !== undefined ? { fix: sanitize(r.fix) } : {}),
  };
}

export interface StageOutcome {
  stage: StageId;
  results: CheckResult[];
  /** Facts per host (absent for hosts that could not be reached). */
  facts: Map<string, unknown>;
  /** Apply/plan only: what each step did or would do, per host. */
  steps?: StepResult[];
  /** Steps that changed a host. */
  changed?: number;
  /**
   * Apply only: the operator cancelled it (or the run was stopped) before it finished. Its results are what was
   * read before the cancel, not a verification of what the steps left.
   */
  cancelled?: boolean;
  /** Each reachable host's raw probe results by probe id (troubleshoot compares them side by side). */
  outputs?: Map<string, Readonly<Record<string, RunResult>>>;
}

export interface EngineOptions {
  config?: ClusterConfig;
  runId?: string;
  /** The session log is behind: commands' output is read no faster than it is written (RunOptions.backpressure). */
  backpressure?: () => Promise<void> | undefined;
}

export interface RunStageOptions {
  /** Re-checks between apply steps: facts and verdicts are returned but no check.result is emitted. */
  quiet?: boolean;
  /** Skip the stage's cluster run and the pair checks reading it (validation benchmarks between steps). */
  skipCluster?: boolean;
  /**
   * With skipCluster: pair checks that read only the hosts' facts, never the cluster run (network.mtu,
   * rdma-link.gids …), evaluated anyway — troubleshoot's quick probes compare the hosts without benchmarks.
   */
  pairChecksWithoutCluster?: readonly string[];
  signal?: AbortSignal;
}

/** Settings for hosts built without an inventory (tests, ad-hoc runs): every default of the schema. */
function defaultConfig(hosts: readonly Host[]): ClusterConfig {
  return clusterSchema.parse({
    hosts: hosts.map((h, i) => ({ name: h.name, address: '127.0.0.1', role: i === 0 ? 'head' : 'worker' })),
  });
}

export class Engine {
  private readonly listeners = new Set<EngineListener>();
  private readonly controllers = new Set<AbortController>();
  private running = 0;
  private idleWaiters: Array<() => void> = [];
  private seq = 0;
  /** Probe results of the runStages pass under way; null outside one. */
  private shared: SharedProbes | null = null;
  readonly facts = new Map<StageId, Map<string, unknown>>();
  readonly context: StageContext;
  private readonly backpressure: EngineOptions['backpressure'];

  constructor(
    readonly hosts: readonly Host[],
    options: EngineOptions = {},
  ) {
    this.backpressure = options.backpressure;
    this.context = {
      config: options.config ?? defaultConfig(hosts),
      hosts: hosts.map((h) => h.name),
      runId: options.runId ?? backupRunId(),
    };
    for (const host of hosts) {
      host.onStateChange((state, detail) =>
        this.emit({ type: 'host.state', host: host.name, state, ...(detail ? { detail: clean(detail) } : {}) }),
      );
    }
  }

  subscribe(listener: EngineListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Public for the step executor, which shares this engine's listeners. */
  emit(event: EngineEvent): void {
    for (const l of this.listeners) l(event);
  }

  /** Resolves when no stage is running (tests: act → await whenIdle → assert). */
  whenIdle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  get busy(): boolean {
    return this.running > 0;
  }

  /** Cancels every running command on every host. */
  cancelAll(): void {
    for (const c of this.controllers) c.abort();
  }

  /**
   * Connects every host in parallel; unreachable hosts are reported through host.state, not thrown, and
   * returned with why, as clean text: the reason quotes what the other end sent (a pre-KEX disconnect).
   */
  async connectAll(): Promise<Map<string, CleanText>> {
    const failures = new Map<string, CleanText>();
    await Promise.all(
      this.hosts.map(async (h) => {
        try {
          await h.connect();
        } catch (err) {
          const message = clean((err as Error).message);
          failures.set(h.name, message);
          this.emit({ type: 'host.state', host: h.name, state: 'failed', detail: message });
        }
      }),
    );
    return failures;
  }

  /**
   * Runs the stages' checks one stage after the other, as one pass: busy (and cancelled) as a whole, and
   * reading each host once. A probe command a stage of this pass already ran on a host (lspci, `ip -j addr`,
   * `rdma link show` …: a third of the 154 commands per host of the full suite) is not run again; its result is
   * reused, and the pane and the session log say so (cmd.start `reusedFrom`). A command that is not a probe
   * (a stage's cluster run: pings, benchmarks) may change what the probes read: the results shared before it
   * are dropped, unless it says it only reads (HostRunner `readsOnly`: the os stage's clock read).
   */
  async runStages(
    stages: readonly AnyStageDef[],
    optionsFor: (stage: AnyStageDef) => Omit<RunStageOptions, 'signal'> = () => ({}),
  ): Promise<StageOutcome[]> {
    return this.busyWhile(async (signal) => {
      const outcomes: StageOutcome[] = [];
      this.shared = new SharedProbes();
      try {
        for (const s of stages) {
          if (signal.aborted) break; // cancelled: the stages not reached stay as they were
          outcomes.push(await this.runStage(s, { ...optionsFor(s), signal }));
        }
      } finally {
        this.shared = null;
      }
      return outcomes;
    });
  }

  /** Marks the engine busy for the duration of fn (whenIdle waits for it). */
  async busyWhile<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    this.running++;
    const controller = new AbortController();
    // Every probe on every host listens to this one signal: more than Node's default 10 is expected.
    setMaxListeners(0, controller.signal);
    this.controllers.add(controller);
    try {
      return await fn(controller.signal);
    } finally {
      this.controllers.delete(controller);
      this.running--;
      if (this.running === 0) {
        this.emit({ type: 'engine.idle' });
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  runStage<F, C = unknown>(stage: StageDef<F, C>, options: RunStageOptions = {}): Promise<StageOutcome> {
    const run = (signal: AbortSignal) =>
      this.runStageWith(
        stage,
        signal,
        options.quiet ?? false,
        options.skipCluster ?? false,
        options.pairChecksWithoutCluster ?? [],
      );
    return options.signal ? run(options.signal) : this.busyWhile(run);
  }

  /** A runner for cluster runs and steps: the command's output streams to the panes like a probe's. */
  hostRunner(stage: StageId, signal: AbortSignal): HostRunner {
    return async (hostName, label, command, opts = {}) => {
      const host = this.hosts.find((h) => h.name === hostName);
      if (!host) throw new Error(`unknown host ${hostName}`);
      if (!opts.readsOnly) this.shared?.clear(); // it may change what the probes read (runStages)
      return this.runProbe(
        stage,
        host,
        {
          id: label,
          command,
          sudo: opts.sudo ?? false,
          timeoutMs: opts.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
          ...(opts.env ? { env: opts.env } : {}),
          ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
        },
        signal,
      );
    };
  }

  private async runStageWith<F, C>(
    stage: StageDef<F, C>,
    signal: AbortSignal,
    quiet: boolean,
    skipCluster: boolean,
    factOnlyPairChecks: readonly string[] = [],
  ): Promise<StageOutcome> {
    const ctx = this.context;
    if (!quiet) this.emit({ type: 'stage.state', stage: stage.id, state: 'running' });
    const results: CheckResult[] = [];
    const report = (r: CheckResult) => {
      const clean = inert(r);
      results.push(clean);
      if (!quiet) this.emit({ type: 'check.result', result: clean });
    };
    const factsByHost = new Map<string, F>();
    const outputsByHost = new Map<string, Readonly<Record<string, RunResult>>>();
    await Promise.all(
      this.hosts.map(async (host) => {
        const facts = await this.runHost(stage, host, signal, report, (outputs) =>
          outputsByHost.set(host.name, outputs),
        );
        if (facts !== undefined) factsByHost.set(host.name, facts);
      }),
    );
    // Without the cluster run its pair checks have nothing to read: they are left out, not guessed.
    const pairChecks = stage.checks.filter(
      (c): c is PairCheckDef<F, C> =>
        c.scope === 'pair' && (!(skipCluster && stage.cluster) || factOnlyPairChecks.includes(c.id)),
    );
    const ordered: HostFacts<F>[] = this.hosts
      .filter((h) => factsByHost.has(h.name))
      .map((h) => ({ host: h.name, facts: factsByHost.get(h.name) as F }));
    const complete = !signal.aborted && ordered.length === this.hosts.length;
    let cluster: C | undefined;
    if (complete && stage.cluster && !skipCluster && pairChecks.length > 0) {
      try {
        cluster = await stage.cluster({ ...ctx, facts: ordered, run: this.hostRunner(stage.id, signal), signal });
      } catch (err) {
        for (const check of pairChecks) {
          report({
            id: check.id,
            stage: stage.id,
            host: null,
            status: 'error',
            summary: 'the cluster run failed',
            evidence: (err as Error).message,
          });
        }
        return this.finishStage(stage, results, factsByHost, quiet, outputsByHost);
      }
    }
    for (const check of pairChecks) {
      if (!complete || signal.aborted) {
        const summary = signal.aborted ? 'cancelled by the operator' : 'skipped: not every host could be probed';
        report({
          id: check.id,
          stage: stage.id,
          host: null,
          status: 'skip',
          summary,
          evidence: `probed: ${ordered.map((o) => o.host).join(', ') || 'none'}`,
        });
        continue;
      }
      const unreadable = this.hosts
        .map((h) => ({
          host: h.name,
          problems: unreadableNeeds(stage.probes, check.needs, outputsByHost.get(h.name) ?? {}),
        }))
        .find((u) => u.problems.length > 0);
      report(
        unreadable
          ? { id: check.id, stage: stage.id, host: null, ...cannotTellVerdict(unreadable.problems, unreadable.host) }
          : this.safeEvaluate(stage.id, check.id, null, () => check.evaluate(ordered, { ...ctx, cluster })),
      );
    }
    return this.finishStage(stage, results, factsByHost, quiet, outputsByHost);
  }

  private finishStage<F, C>(
    stage: StageDef<F, C>,
    results: CheckResult[],
    factsByHost: Map<string, F>,
    quiet: boolean,
    outputs?: Map<string, Readonly<Record<string, RunResult>>>,
  ): StageOutcome {
    // Events arrive as hosts finish; the outcome lists hosts in inventory order, cluster checks last.
    const order = new Map<string | null, number>(this.hosts.map((h, i) => [h.name, i]));
    order.set(null, this.hosts.length);
    const checkOrder = new Map(stage.checks.map((c, i) => [c.id, i]));
    results.sort((a, b) => order.get(a.host)! - order.get(b.host)! || checkOrder.get(a.id)! - checkOrder.get(b.id)!);
    this.facts.set(stage.id, factsByHost as Map<string, unknown>);
    if (!quiet) this.emit({ type: 'stage.state', stage: stage.id, state: worstStatus(results.map((r) => r.status)) });
    return { stage: stage.id, results, facts: factsByHost as Map<string, unknown>, ...(outputs ? { outputs } : {}) };
  }

  private async runHost<F, C>(
    stage: StageDef<F, C>,
    host: Host,
    signal: AbortSignal,
    report: (r: CheckResult) => void,
    keepOutputs?: (outputs: Readonly<Record<string, RunResult>>) => void,
  ): Promise<F | undefined> {
    const hostChecks = stage.checks.filter((c): c is HostCheckDef<F> => c.scope === 'host');
    const failAll = (status: 'error' | 'skip', summary: string, evidence: string, fix?: string) => {
      for (const c of hostChecks)
        report({ id: c.id, stage: stage.id, host: host.name, status, summary, evidence, ...(fix ? { fix } : {}) });
    };
    try {
      await host.connect();
    } catch (err) {
      failAll(
        'error',
        `cannot connect to ${host.name}`,
        (err as Error).message,
        `check ${host.name}'s address, port, user and key in the inventory; \`ssh -p PORT USER@ADDRESS true\` must work without a password prompt`,
      );
      return undefined;
    }
    const outputs: Record<string, RunResult> = {};
    let transportError: Error | undefined;
    const runProbes = (probes: typeof stage.probes) =>
      Promise.all(
        probes.map(async (probe) => {
          try {
            outputs[probe.id] = await this.runSharedProbe(stage.id, host, probe, signal);
          } catch (err) {
            transportError ??= err as Error;
          }
        }),
      );
    await runProbes(stage.probes);
    // Probes only read: those a lost connection cut short run once more over a new one (the transport
    // reconnects with backoff), so one dropped connection does not turn a stage's checks into errors.
    if (transportError instanceof ConnectionLostError && !signal.aborted) {
      transportError = undefined;
      await runProbes(stage.probes.filter((p) => outputs[p.id] === undefined));
    }
    if (signal.aborted) {
      failAll('skip', 'cancelled by the operator', 'the stage was cancelled before its probes finished');
      return undefined;
    }
    if (transportError) {
      failAll('error', `lost ${host.name} while probing`, transportError.message);
      return undefined;
    }
    keepOutputs?.(outputs);
    let facts: F;
    try {
      facts = stage.collect({ host: host.name, results: outputs }, this.context);
    } catch (err) {
      failAll('error', 'could not read the probe output', (err as Error).stack ?? String(err));
      return undefined;
    }
    for (const check of hostChecks) {
      const unreadable = unreadableNeeds(stage.probes, check.needs, outputs);
      report(
        unreadable.length > 0
          ? { id: check.id, stage: stage.id, host: host.name, ...cannotTellVerdict(unreadable, host.name) }
          : this.safeEvaluate(stage.id, check.id, host.name, () => check.evaluate(facts, host.name, this.context)),
      );
    }
    return facts;
  }

  private safeEvaluate(
    stage: StageId,
    id: string,
    host: string | null,
    fn: () => ReturnType<HostCheckDef<unknown>['evaluate']>,
  ): CheckResult {
    try {
      const v = groundedVerdict(fn());
      return { id, stage, host, ...v };
    } catch (err) {
      return {
        id,
        stage,
        host,
        status: 'error',
        summary: 'the check itself failed (a bug in l20-setup)',
        evidence: (err as Error).stack ?? String(err),
      };
    }
  }

  /** A stage's probe: within a runStages pass, the result of the same command run earlier in it, if any. */
  private async runSharedProbe(stage: StageId, host: Host, probe: ProbeDef, signal: AbortSignal): Promise<RunResult> {
    const shared = this.shared;
    if (!shared) return this.runProbe(stage, host, probe, signal);
    const earlier = await shared.lookup(host.name, probe);
    if (earlier && !signal.aborted) return this.replayProbe(stage, host.name, probe, earlier);
    const run = this.runProbe(stage, host, probe, signal);
    shared.record(host.name, probe, stage, run);
    return run;
  }

  /** Shows a shared result as this stage's command: in the pane and the session log, marked as reused. */
  private replayProbe(stage: StageId, host: string, probe: ProbeDef, earlier: SharedProbe): RunResult {
    const { result, from } = earlier;
    const runId = `${host}:${stage}:${probe.id}:${++this.seq}`;
    const script = 'script' in probe.command ? { script: probe.command.script } : {};
    this.emit({
      type: 'cmd.start',
      host,
      runId,
      stage,
      probe: probe.id,
      commandLine: result.commandLine,
      sudo: probe.sudo ?? false,
      ...script,
      reusedFrom: from,
    });
    const output = new OutputLines((stream, lines) =>
      this.emit({ type: 'cmd.output', host, runId, stage, probe: probe.id, stream, lines }),
    );
    output.push('stdout', result.stdout);
    output.push('stderr', result.stderr);
    output.end();
    this.emit({
      type: 'cmd.exit',
      host,
      runId,
      exitCode: result.exitCode,
      signal: result.signal,
      durationMs: 0,
      timedOut: false,
      cancelled: false,
    });
    return { ...result }; // collect reads it as the stage that ran it did (its duration too)
  }

  private async runProbe(
    stage: StageId,
    host: Host,
    probe: ProbeDef & { env?: Readonly<Record<string, string>>; stdin?: string },
    signal: AbortSignal,
  ): Promise<RunResult> {
    const runId = `${host.name}:${stage}:${probe.id}:${++this.seq}`;
    const output = new OutputLines((stream, lines) =>
      this.emit({ type: 'cmd.output', host: host.name, runId, stage, probe: probe.id, stream, lines }),
    );
    let started = false;
    const script = 'script' in probe.command ? { script: probe.command.script } : {};
    try {
      const result = await host.run(probe.command, {
        sudo: probe.sudo ?? false,
        timeoutMs: probe.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS,
        signal,
        ...(probe.env ? { env: probe.env } : {}),
        ...(probe.stdin !== undefined ? { stdin: probe.stdin } : {}),
        ...(probe.keepOutputBytes !== undefined ? { maxBufferBytes: probe.keepOutputBytes } : {}),
        ...(this.backpressure ? { backpressure: this.backpressure } : {}),
        onStdout: (c) => output.push('stdout', c),
        onStderr: (c) => output.push('stderr', c),
        onStart: (commandLine: string) => {
          started = true;
          this.emit({
            type: 'cmd.start',
            host: host.name,
            runId,
            stage,
            probe: probe.id,
            commandLine,
            sudo: probe.sudo ?? false,
            ...script,
          });
        },
      });
      output.end();
      if (!started)
        this.emit({
          type: 'cmd.start',
          host: host.name,
          runId,
          stage,
          probe: probe.id,
          commandLine: result.commandLine,
          sudo: probe.sudo ?? false,
          ...script,
        });
      this.emit({
        type: 'cmd.exit',
        host: host.name,
        runId,
        exitCode: result.exitCode,
        signal: result.signal,
        durationMs: result.durationMs,
        timedOut: result.timedOut,
        cancelled: result.cancelled,
      });
      return result;
    } catch (err) {
      output.end();
      this.emit({
        type: 'cmd.exit',
        host: host.name,
        runId,
        exitCode: null,
        signal: null,
        durationMs: 0,
        timedOut: false,
        cancelled: signal.aborted,
      });
      throw err;
    }
  }
}
