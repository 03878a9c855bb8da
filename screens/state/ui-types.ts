/**
 * The screens' own state and the actions only the screens send: which screen and stage, cursors, help,
 * the notice, details, the quit question, the session's open questions as the modals show them, the
 * setup draft. The TUI's one store holds it next to the engine's state (app-store.ts).
 */
import type { EngineAction, EngineState, ApplyRun } from '../../src/engine/store-types.js';
import type { Prompt } from '../../src/engine/prompts.js';
import type { StageId } from '../../src/engine/types.js';
import type { CleanText } from '../../src/util/sanitize.js';
import type { GpuMetric } from '../monitor/monitor-lines.js';
import type { Design, SetupAction, SetupDraft } from './setup-draft.js';
import type { HostConfig } from '../../src/config/schema.js';

export type Screen = 'setup' | 'pipeline' | 'stage' | 'monitor' | 'troubleshoot';

/** The live monitor's view: which hosts are shown, the picker's cursor, the sparkline metric. */
export interface MonitorUi {
  /** Hosts shown side by side (indexes into the frame's hosts); with more than two, a picker chooses them. */
  left: number;
  right: number;
  /** The picker's cursor (index into the frame's hosts). */
  cursor: number;
  /** The screen the monitor key came from (the key again, or esc, goes back there). */
  returnTo: Screen;
  metric: GpuMetric;
}

export interface TroubleshootUi {
  cursor: number;
  /** First diagnosis line shown (the diagnosis scrolls; a new one shows from its top). */
  scroll: number;
  returnTo: Screen;
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
  /** The session's open questions, oldest first (the modals show them; answers go back by id). */
  prompts: Prompt[];
  /** The session's plan or apply of a stage (the preview and a step's question are prompts). */
  apply?: ApplyRun;
  /** First plan line shown (the plan scrolls). */
  planScroll: number;
  monitor: MonitorUi;
  troubleshoot: TroubleshootUi;
  setup: SetupDraft;
  /** The terminal's size, for keys that move by a row or a page. */
  terminal: { columns: number; rows: number };
  /** The stages the session implements (it refuses the others; the keys say so before asking). */
  implemented: readonly StageId[];
}

export type UiAction =
  | { type: 'ui.screen'; screen: Screen }
  | { type: 'ui.selectStage'; stage: StageId }
  | { type: 'ui.moveStage'; delta: number }
  | { type: 'ui.cycleHost'; side: 'left' | 'right' }
  /** Moves the grid cursor through the selected stage's hosts worst first: by one host (wrapping) or by `delta`
   *  (a row: clamped). */
  | { type: 'ui.gridCursor'; delta: number }
  /** Shows the grid cursor's host in one pane (the other pane takes the displaced host if it showed that one). */
  | { type: 'ui.showHost'; side: 'left' | 'right' }
  | { type: 'ui.confirmQuit'; open: boolean }
  | { type: 'ui.notice'; text?: string }
  | { type: 'ui.toggleHelp' }
  | { type: 'ui.details'; index: number | null }
  | { type: 'ui.scrollPlan'; delta: number }
  | { type: 'ui.resize'; columns: number; rows: number }
  /** What the session offers: its stages, and the inventory the setup screen starts from. */
  | { type: 'ui.session'; implemented: readonly StageId[]; hosts: HostConfig[]; design: Design }
  | { type: 'monitor.cursor'; delta: number }
  | { type: 'monitor.show'; side: 'left' | 'right' }
  | { type: 'monitor.metric' }
  | { type: 'troubleshoot.close' }
  | { type: 'troubleshoot.cursor'; delta: number }
  | { type: 'troubleshoot.scroll'; delta: number }
  | SetupAction;

/** Every UI action's type, so the store can tell them from the engine's. */
export const UI_ACTION_TYPES: Readonly<Record<UiAction['type'], true>> = {
  'ui.screen': true,
  'ui.selectStage': true,
  'ui.moveStage': true,
  'ui.cycleHost': true,
  'ui.gridCursor': true,
  'ui.showHost': true,
  'ui.confirmQuit': true,
  'ui.notice': true,
  'ui.toggleHelp': true,
  'ui.details': true,
  'ui.scrollPlan': true,
  'ui.resize': true,
  'ui.session': true,
  'monitor.cursor': true,
  'monitor.show': true,
  'monitor.metric': true,
  'troubleshoot.close': true,
  'troubleshoot.cursor': true,
  'troubleshoot.scroll': true,
  'setup.move': true,
  'setup.startEdit': true,
  'setup.insert': true,
  'setup.deleteBack': true,
  'setup.commit': true,
  'setup.undo': true,
  'setup.add': true,
  'setup.remove': true,
  'setup.design': true,
  'setup.result': true,
  'setup.message': true,
};

export function isUiAction(action: { type: string }): action is UiAction {
  return Object.hasOwn(UI_ACTION_TYPES, action.type);
}

export type AppState = EngineState & { ui: UiState };

export type AppAction = EngineAction | UiAction;
