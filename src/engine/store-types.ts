/**
 * The shape of the UI's one store: panes, checks, steps and the screens' own state, and every action the
 * reducer (store.ts) takes. Kept apart from the reducer so views and tests can name the types without it.
 */
import type { EngineEvent } from './events.js';
import type { HostConnectionState } from '../transport/types.js';
import type { CheckResult, Danger, StageId, StageStatus, StepResult } from './types.js';
import type { MonitorFrame } from '../monitor/types.js';
import type { Timebase } from '../monitor/series.js';
import type { Diagnosis } from '../troubleshoot/types.js';
import type { JournalUi } from './journal-text.js';
import type { CleanText } from '../util/sanitize.js';

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

/** A pane's output of one stage: its last PANE_LINES lines (stderr lines marked, each with the probe that printed it). */
export interface StageOutput {
  lines: Array<{ text: string; stderr: boolean; probe: string }>;
  /** Total lines seen, so views can show "last n of m lines". */
  totalLines: number;
}

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
  output: Partial<Record<StageId, StageOutput>>;
}

export type Screen = 'setup' | 'pipeline' | 'stage' | 'monitor' | 'troubleshoot';

/** The live monitor: the newest frame, the chosen timebase and which hosts are shown. */
export interface MonitorUi {
  frame: MonitorFrame | null;
  timebase: Timebase;
  /** Hosts shown side by side (indexes into the frame's hosts); with more than two, a grid picks them. */
  left: number;
  right: number;
  /** The grid's cursor (index into the frame's hosts, in the grid's order). */
  cursor: number;
  /** The screen the monitor key came from (the key again, or esc, goes back there). */
  returnTo: Screen;
}

/** A symptom as the troubleshoot screen lists it (the catalog's reasoning stays in the session). */
export interface SymptomSummary {
  id: string;
  title: string;
  observed: string;
}

/** The troubleshoot screen: the catalog, the cursor, what is being probed and the latest diagnoses. */
export interface TroubleshootUi {
  symptoms: SymptomSummary[];
  cursor: number;
  /** The symptom whose probes run now (null when none). */
  running: string | null;
  /** The diagnosis shown: the latest one of the cursor's symptom (kept in `diagnoses`). */
  diagnosis: Diagnosis | null;
  /** Latest diagnosis of every symptom run this session, for the list's status marks. */
  diagnoses: Record<string, Diagnosis>;
  /** A fix on its way through the stage's plan/apply: when that apply ends, the symptom runs again (verify). */
  fixing: { symptom: string; stage: StageId } | null;
  returnTo: Screen;
  /** First evidence line shown (the diagnosis scrolls). */
  scroll: number;
}

export interface UiState {
  screen: Screen;
  selectedStage: StageId;
  /** Host shown in the left and right panes (indexes into hostOrder). */
  leftHost: number;
  rightHost: number;
  /** The stage view's host grid cursor (more than two hosts): an index into hostOrder, so the cursor
   *  stays on its host while verdicts reorder the grid. */
  gridHost: number;
  confirmQuit: boolean;
  /** A one-line message for the status bar: it often quotes an error (a host's words), so it is clean text. */
  notice?: CleanText;
  showHelp: boolean;
  /** The stage view's verdict details: which check (index into the worst-first list) is open. */
  details: number | null;
  /** An unknown host key waiting for the operator's decision. */
  /** An unknown host key to trust or not; `knownHostsFile`: where trusting records it (none: this session only). */
  trust?: {
    host: string; address: string; keyType: string; fingerprint: string; knownHostsFile?: string;
    /** Why known_hosts names a CA for the host that the built-in transport cannot check (or that it is revoked). */
    certificateAuthority?: string;
  };
  /** Plan/apply of a stage from its view: the preview, a dangerous step's confirmation, or the run. */
  apply?: ApplyUi;
  /** An interrupted apply found at start: the pipeline's modal (resume, roll back, later). */
  journal?: JournalUi;
}

export interface ApplyUi {
  stage: StageId;
  /** planning: computing the dry run; preview: showing it (y applies); applying: steps run (panes show output);
   *  confirm: a dangerous step waits for y/n naming its hosts. */
  phase: 'planning' | 'preview' | 'applying' | 'confirm';
  confirm?: { step: string; danger: Danger; hosts: string[] };
  /** First plan line shown (the plan scrolls). */
  scroll: number;
}

export interface AppState {
  hostOrder: string[];
  panes: Record<string, PaneState>;
  stages: Record<StageId, StageStatus>;
  /** Check results of the latest run of each stage (host null = cluster check). */
  checks: Record<StageId, CheckResult[]>;
  /** Latest plan/apply result of each step on each host (a newer result for the same step and host replaces it). */
  steps: Record<StageId, StepResult[]>;
  busy: boolean;
  ui: UiState;
  monitor: MonitorUi;
  troubleshoot: TroubleshootUi;
}

export type UiAction =
  | { type: 'ui.screen'; screen: Screen }
  | { type: 'ui.selectStage'; stage: StageId }
  | { type: 'ui.moveStage'; delta: number }
  | { type: 'ui.cycleHost'; side: 'left' | 'right' }
  /** Moves the grid cursor through the selected stage's hosts worst first: by one host (wrapping) or by `delta` (a row: clamped). */
  | { type: 'ui.gridCursor'; delta: number }
  /** Shows the grid cursor's host in one pane (the other pane takes the displaced host if it showed that one). */
  | { type: 'ui.showHost'; side: 'left' | 'right' }
  | { type: 'ui.confirmQuit'; open: boolean }
  | { type: 'ui.notice'; text?: string }
  | { type: 'ui.toggleHelp' }
  | { type: 'ui.details'; index: number | null }
  | { type: 'ui.trust'; prompt?: UiState['trust'] }
  | { type: 'ui.apply'; apply?: ApplyUi }
  | { type: 'ui.journal'; journal?: JournalUi }
  | { type: 'ui.scrollPlan'; delta: number }
  | { type: 'monitor.open' }
  | { type: 'monitor.close' }
  | { type: 'monitor.frame'; frame: MonitorFrame }
  | { type: 'monitor.timebase'; timebase?: Timebase }
  | { type: 'monitor.cursor'; delta: number }
  | { type: 'monitor.show'; side: 'left' | 'right' }
  | { type: 'troubleshoot.open'; symptoms?: SymptomSummary[]; select?: string }
  | { type: 'troubleshoot.close' }
  | { type: 'troubleshoot.cursor'; delta: number }
  | { type: 'troubleshoot.running'; symptom: string | null }
  | { type: 'troubleshoot.diagnosis'; diagnosis: Diagnosis }
  | { type: 'troubleshoot.scroll'; delta: number }
  | { type: 'troubleshoot.fixing'; fixing: TroubleshootUi['fixing'] };

/** The host list changed (setup saved a new inventory). */
export type SessionAction = { type: 'session.hosts'; hosts: ReadonlyArray<{ name: string; address: string }> };

/**
 * Output as the TUI hands it to the store (engine/output-coalescer.ts): a burst's newest lines per command and
 * stream, in order, and how many lines before them were left out (counted, not shown; the session log has them).
 */
export type PaneOutputAction = {
  type: 'pane.output';
  host: string;
  omitted: number;
  batches: ReadonlyArray<{ runId: string; stream: 'stdout' | 'stderr'; lines: readonly string[] }>;
};

export type Action = EngineEvent | UiAction | SessionAction | PaneOutputAction;
