/**
 * Stages and checks as data (checks/ defines them), and the results the engine produces.
 * Nothing here knows about SSH or the UI.
 */
import type { Command, RunResult } from '../transport/types.js';
import type { ClusterConfig } from '../config/schema.js';

export const STAGE_IDS = [
  'inventory',
  'os',
  'nic-stack',
  'network',
  'qos',
  'rdma-link',
  'gpu-driver',
  'gpudirect',
  'nccl',
  'ray',
  'vllm',
] as const;
export type StageId = (typeof STAGE_IDS)[number];

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'error' | 'skip';

/** A read-only command every host runs for a stage. */
export interface ProbeDef {
  id: string;
  command: Command;
  /** Run through `sudo -n` ([root] in docs/STAGES.md). */
  sudo?: boolean;
  timeoutMs?: number;
  /**
   * Bytes of each output stream kept for collect: the tail (default the transport's 64 MiB). For a probe whose
   * collect reads only the end of a long output; every line still reaches the panes and the session log.
   */
  keepOutputBytes?: number;
  /**
   * Programs whose absence leaves this probe's output unreadable (default: an argv probe's program). When the
   * output says one is not installed, the checks that need the probe say "cannot tell" and name its package.
   */
  tools?: readonly string[];
}

export interface Verdict {
  status: CheckStatus;
  /** One line the operator reads first. */
  summary: string;
  /** The exact lines or values the verdict rests on. */
  evidence: string;
  fix?: string;
  rule?: string;
}

/** What a host looks like to a check: its name and the results of the stage's probes. */
export interface ProbeOutputs {
  host: string;
  results: Readonly<Record<string, RunResult>>;
}

/** What every check, probe collector and step sees of the cluster besides its own facts. */
export interface StageContext {
  config: ClusterConfig;
  /** Host names in inventory order (node 1 first). */
  hosts: readonly string[];
  /** Names this run's backups, logs and transient units (`20261129T120000Z`). */
  runId: string;
}

export interface HostFacts<F> {
  host: string;
  facts: F;
}

/** What every check declares besides its verdict. */
interface CheckBase {
  id: string;
  title: string;
  /**
   * Probe ids the verdict rests on: when one of them could not be read (its tool missing, sudo refused, no unit
   * manager), the check is not evaluated and says "cannot tell", naming what is missing and how to install it.
   */
  needs?: readonly string[];
}

export interface HostCheckDef<F> extends CheckBase {
  scope: 'host';
  evaluate(facts: F, host: string, ctx: StageContext): Verdict;
}

export interface PairCheckDef<F, C = unknown> extends CheckBase {
  scope: 'pair';
  /** Facts of every host, in inventory order; `cluster` is what the stage's cluster run returned. */
  evaluate(facts: ReadonlyArray<HostFacts<F>>, ctx: StageContext & { cluster: C | undefined }): Verdict;
}

export type CheckDef<F, C = unknown> = HostCheckDef<F> | PairCheckDef<F, C>;

/** Runs one command on one host as part of a cluster run or a step; output streams to the panes. */
export type HostRunner = (
  host: string,
  label: string,
  command: Command,
  options?: {
    sudo?: boolean;
    timeoutMs?: number;
    env?: Readonly<Record<string, string>>;
    stdin?: string;
    /** The command changes nothing a probe reads (a clock read): the pass's shared probe results stay (Engine.runStages). */
    readsOnly?: boolean;
  },
) => Promise<RunResult>;

export interface ClusterRunContext<F> extends StageContext {
  facts: ReadonlyArray<HostFacts<F>>;
  run: HostRunner;
  signal: AbortSignal;
}

export interface StageDef<F = unknown, C = unknown> {
  id: StageId;
  title: string;
  /** What the stage is for, shown in the stage view. */
  purpose: string;
  probes: readonly ProbeDef[];
  /** Parse the probes' outputs into facts. Must not throw on odd output; record problems in the facts. */
  collect(outputs: ProbeOutputs, ctx: StageContext): F;
  /**
   * Coordinated commands across hosts once every host's facts are in (ping per cable, ib_write_bw
   * server then client, an all-reduce): what they measured feeds the pair checks. Must not throw
   * for a failed measurement; return it as data.
   */
  cluster?(ctx: ClusterRunContext<F>): Promise<C>;
  checks: readonly CheckDef<F, C>[];
  /** Apply steps in order; each runs only where one of its guard checks does not pass. */
  steps?: readonly StepDef<F>[];
}

/**
 * A stage whatever its facts and cluster-facts types: the registry, the runner and the session hold stages of
 * different types side by side, and each stage's functions only ever see the facts its own probes produced.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- existential: each stage's types are its own
export type AnyStageDef = StageDef<any, any>;

/** docs/STAGES.md §1: what a step may interrupt. */
export type Danger = 'safe' | 'disruptive' | 'network' | 'reboot';

/** A root-owned file a step writes (atomically, previous version backed up; skipped when identical). */
export interface FileChange {
  path: string;
  content: string;
  mode: number;
}

export interface StepCommand {
  command: Command;
  /** Default true: steps change the system. */
  sudo?: boolean;
  timeoutMs?: number;
  /** Exit codes that count as success (default [0]). */
  okExit?: readonly number[];
}

/** What a step would do on one host. */
export interface StepPlan {
  /** One line for the plan: what changes and why. */
  summary: string;
  files?: readonly FileChange[];
  /** Files moved into the run's backup directory (e.g. the tutorial's netplan file on migration). */
  removeFiles?: readonly string[];
  /** Run after the files are in place, in order; the first failure stops the step and rolls it back. */
  commands?: readonly StepCommand[];
  /** Reboot afterwards and wait for the host to come back with a new boot id. */
  reboot?: boolean;
  /** Run (after the files are restored) when the step fails or is rolled back. */
  rollback?: readonly StepCommand[];
}

export interface StepPlanContext<F> extends StageContext {
  host: string;
  hostIndex: number;
  facts: F;
  all: ReadonlyArray<HostFacts<F>>;
  /** This stage's current check results (all hosts and pair checks). */
  results: readonly CheckResult[];
}

export type StepStatus = 'planned' | 'applied' | 'skipped' | 'failed';

export interface StepResult {
  id: string;
  stage: StageId;
  host: string | null;
  status: StepStatus;
  danger: Danger;
  summary: string;
  /** The command lines run (or that would run), files first as `install` lines. */
  commands: string[];
  /** Unified diff of every file the step writes on this host. */
  diff: string;
  /** Whether the host was changed (files written, commands run). */
  changed: boolean;
  /** Why it failed: command, exit code and last output lines. */
  error?: string;
  /**
   * The step ended without finishing or being rolled back (its host's connection was lost and did not come
   * back): the host may be part-way through it. The crash journal keeps it for `apply --resume`/`--rollback`.
   */
  unsettled?: boolean;
}

/** The facilities a custom executor gets (network.apply's armed rollback and lockstep proof). */
/**
 * A transient rollback timer (`systemd-run --on-active=`): `<unit>.timer` starts `<unit>.service`,
 * which runs `command` as root, unless the step confirms (stops the timer) first.
 */
export interface ArmedTimer {
  unit: string;
  /** What firing does, in words (`ufw --force disable`, the netplan snapshot restored). */
  undoes: string;
  command: readonly string[];
  windowS: number;
}

export interface StepExecContext<F> extends StageContext {
  /** Hosts where a guard does not pass, in inventory order. */
  targets: readonly string[];
  all: ReadonlyArray<HostFacts<F>>;
  results: readonly CheckResult[];
  run: HostRunner;
  /** Writes a file as the generic executor does; returns whether it changed and the diff. */
  writeFile(host: string, file: FileChange): Promise<{ changed: boolean; diff: string; commandLine: string }>;
  /** Opens a brand-new SSH connection to the host and runs `true` over it (proves the management path). */
  probeFreshConnection(host: string): Promise<{ ok: boolean; detail: string }>;
  /**
   * Waits for a host whose connection was lost to answer again (the transport reconnects with backoff);
   * ok false when it did not within the apply's bound.
   */
  awaitHost(host: string): Promise<{ ok: boolean; detail: string }>;
  /**
   * How long a host may stay unreachable during the procedure before it is reported lost: its transport's
   * keepalive bound (Host.lostBoundMs). awaitHost waits no longer than this.
   */
  lostBoundMs(host: string): number;
  /** What is left of that bound for the host: counted from when its connection was first seen lost or failing. */
  graceLeftMs(host: string): number;
  /** Re-runs this stage's probes and checks quietly and returns the new results and facts. */
  recheck(): Promise<{ results: CheckResult[]; facts: ReadonlyArray<HostFacts<F>> }>;
  /** A line in both panes' output (what the procedure is doing and why). */
  note(host: string | null, line: string): void;
  /**
   * Records a rollback timer in the crash journal; call it BEFORE arming the timer, so a kill in between
   * leaves it known (`apply --resume` stops it, `--rollback` honours it).
   */
  journalArmed(host: string, timer: ArmedTimer): void;
  /** Waits on the simulated or real clock; resolves early with false when cancelled. */
  sleep(ms: number): Promise<boolean>;
  signal: AbortSignal;
  dryRun: boolean;
}

export interface StepDef<F> {
  id: string;
  title: string;
  danger: Danger;
  /** Check ids (host or pair); the step is needed on a host where any of them is not pass or skip. */
  guards: readonly string[];
  /** Hosts in parallel (default), one after another in inventory order, or in reverse (node 2 first). */
  order?: 'parallel' | 'sequential' | 'reverse';
  /** What the step would do on one host; null when there is nothing to do there. */
  plan?(ctx: StepPlanContext<F>): StepPlan | null;
  /** A whole-cluster procedure instead of plan (lockstep network changes); returns one result per target host. */
  execute?(ctx: StepExecContext<F>): Promise<StepResult[]>;
}

export interface CheckResult {
  id: string;
  stage: StageId;
  /** null for cluster (pair) checks. */
  host: string | null;
  status: CheckStatus;
  summary: string;
  evidence: string;
  fix?: string;
  rule?: string;
}

export type StageStatus = 'pending' | 'running' | CheckStatus;

/**
 * Worst-first ordering used for roll-ups. A skip (not applicable, nothing to compare) says nothing against the
 * passes beside it: passes and skips roll up to pass; only skips (or nothing) to skip.
 */
export const STATUS_RANK: Record<CheckStatus, number> = { error: 4, fail: 3, warn: 2, pass: 1, skip: 0 };

export function worstStatus(statuses: Iterable<CheckStatus>): CheckStatus {
  let worst: CheckStatus = 'skip';
  for (const s of statuses) if (STATUS_RANK[s] > STATUS_RANK[worst]) worst = s;
  return worst;
}
