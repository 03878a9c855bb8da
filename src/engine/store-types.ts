/**
 * The shape of the engine's state: panes, checks, steps, the monitor's frames and troubleshooting's diagnoses,
 * and every action its reducer (store.ts) takes, the session's events to the operator included. Kept apart from
 * the reducer so views and tests can name the types without it.
 */
import type { EngineEvent } from './events.js';
import type { HostConnectionState } from '../transport/types.js';
import type { CheckResult, StageId, StageStatus, StepResult } from './types.js';
import type { MonitorFrame } from '../monitor/types.js';
import type { Timebase } from '../monitor/series.js';
import type { Diagnosis } from '../troubleshoot/types.js';
import type { PromptEvent } from './prompts.js';

export interface CommandView {
  runId: string;
  stage: StageId;
  probe: string;
  commandLine: string;
  sudo: boolean;
  /** Not run: the output of this command as `stage/probe` ran it earlier in the same pass. */
  reusedFrom?: string;
  exitCode?: number | null;
  durationMs?: number;
  timedOut?: boolean;
  cancelled?: boolean;
  running: boolean;
}

/** A line of a pane as a view draws it: stderr lines marked, each with the probe (or step) that printed it. */
export interface PaneLine {
  text: string;
  stderr: boolean;
  probe: string;
}

/** Lines a probe (or step) printed on one stream, as they arrived together: what a pane keeps, no object per line. */
export interface OutputRun {
  probe: string;
  stderr: boolean;
  lines: readonly string[];
}

/**
 * A pane's output of one stage: its last PANE_LINES lines, in the runs they came in (store.ts lastLines reads
 * them).
 */
export interface StageOutput {
  runs: OutputRun[];
  /** Total lines seen, so views can show "last n of m lines". */
  totalLines: number;
}

/** A pane's output per stage. */
export type PaneOutput = Partial<Record<StageId, StageOutput>>;

export interface PaneState {
  host: string;
  address: string;
  connection: HostConnectionState;
  connectionDetail?: string;
  /** Commands of each stage's latest run, in start order (a stage's view shows its own). */
  commands: CommandView[];
  /**
   * Output per stage, from its latest run: after a run-all, the first stage's view still shows what the first
   * stage printed, not what the stage that ran last did.
   */
  output: PaneOutput;
}

/** The live monitor's data: the newest frame and the timebase its samplers keep. */
export interface MonitorData {
  frame: MonitorFrame | null;
  timebase: Timebase;
}

/** A symptom as the troubleshoot screen lists it (the catalog's reasoning stays in the session). */
export interface SymptomSummary {
  id: string;
  title: string;
  observed: string;
}

/** Troubleshooting's data: the catalog, what is being probed and the latest diagnoses. */
export interface TroubleshootData {
  symptoms: SymptomSummary[];
  /** The symptom whose probes run now (null when none). */
  running: string | null;
  /** Latest diagnosis of every symptom run this session. */
  diagnoses: Record<string, Diagnosis>;
  /** A fix on its way through the stage's plan/apply: when that apply ends, the symptom runs again (verify). */
  fixing: { symptom: string; stage: StageId } | null;
}

/** What the engine and the session know; the screens keep their own state next to it (screens/state/). */
export interface EngineState {
  hostOrder: string[];
  panes: Record<string, PaneState>;
  stages: Record<StageId, StageStatus>;
  /** Check results of the latest run of each stage (host null = cluster check). */
  checks: Record<StageId, CheckResult[]>;
  /** Latest plan/apply result of each step on each host (a newer result for the same step and host replaces it). */
  steps: Record<StageId, StepResult[]>;
  busy: boolean;
  monitor: MonitorData;
  troubleshoot: TroubleshootData;
}

/** A stage's plan or apply as the session runs it (the plan's preview and a step's question are prompts). */
export interface ApplyRun {
  stage: StageId;
  /** planning: computing the dry run; applying: steps run (panes show output). */
  phase: 'planning' | 'applying';
}

/** Data the session puts into the store. */
export type SessionDataAction =
  /** The host list changed (setup saved a new inventory). */
  | { type: 'session.hosts'; hosts: ReadonlyArray<{ name: string; address: string }> }
  | { type: 'monitor.frame'; frame: MonitorFrame }
  | { type: 'monitor.timebase'; timebase?: Timebase }
  /** The catalog (the screens also open the troubleshoot screen on it, on `select` when given). */
  | { type: 'troubleshoot.open'; symptoms?: SymptomSummary[]; select?: string }
  | { type: 'troubleshoot.running'; symptom: string | null }
  | { type: 'troubleshoot.diagnosis'; diagnosis: Diagnosis }
  | { type: 'troubleshoot.fixing'; fixing: TroubleshootData['fixing'] };

/**
 * What the session tells the operator; the engine's state does not change with these (the screens' does). A
 * notice often quotes an error (a host's words): the screens clean it.
 */
export type SessionEvent =
  | PromptEvent
  | { type: 'session.notice'; text?: string }
  | { type: 'session.apply'; apply?: ApplyRun }
  /** The session leads the operator to a stage's view (a resume, a fix). */
  | { type: 'session.showStage'; stage: StageId }
  | { type: 'monitor.open' }
  | { type: 'monitor.close' };

/**
 * Output as the TUI hands it to the store (engine/output-coalescer.ts): per stage, a burst's newest lines (at
 * most PANE_LINES, in their runs) and how many lines the burst had (`totalLines`: the others are counted, not
 * shown; the session log has them).
 */
export type PaneOutputAction = { type: 'pane.output'; host: string; output: PaneOutput };

export type EngineAction = EngineEvent | SessionDataAction | SessionEvent | PaneOutputAction;

/** The store as the session sees it: engine state to read, and every engine and session action to dispatch. */
export interface EngineStore {
  getState(): EngineState;
  dispatch(action: EngineAction): void;
  subscribe(listener: () => void): () => void;
}
