/**
 * The screens' reducer: UI actions, and what the session's events and the engine's data mean for the
 * screens (a prompt opens a modal, the monitor opens over the screen it came from, a new frame keeps
 * the shown hosts inside it). It reads the engine's state before and after the same action.
 */
import { STAGE_IDS, type StageId } from '../../src/engine/types.js';
import type { EngineState } from '../../src/engine/store-types.js';
import { hostsWorstFirst } from '../../src/engine/host-status.js';
import { clean } from '../../src/util/sanitize.js';
import { nextMetric } from '../monitor/monitor-lines.js';
import { initialDraft, reduceSetup, type SetupDraft } from './setup-draft.js';
import type { AppAction, Screen, TroubleshootUi, UiState } from './ui-types.js';

export interface UiOptions {
  screen?: Screen;
  /** The session's implemented stages (default: every stage). */
  implemented?: readonly StageId[];
  setup?: SetupDraft;
  terminal?: { columns: number; rows: number };
}

export function initialUi(hosts: readonly unknown[], o: UiOptions = {}): UiState {
  const second = Math.max(0, Math.min(1, hosts.length - 1));
  return {
    screen: o.screen ?? 'pipeline',
    selectedStage: 'inventory',
    leftHost: 0,
    rightHost: second,
    gridHost: 0,
    confirmQuit: false,
    showHelp: false,
    details: null,
    prompts: [],
    planScroll: 0,
    monitor: { left: 0, right: second, cursor: 0, returnTo: 'pipeline', metric: 'util' },
    troubleshoot: { cursor: 0, scroll: 0, returnTo: 'pipeline' },
    setup: o.setup ?? initialDraft(),
    terminal: o.terminal ?? { columns: 100, rows: 30 },
    implemented: o.implemented ?? STAGE_IDS,
  };
}

/** The diagnosis the troubleshoot screen shows: the latest one of the cursor's symptom. */
export function shownDiagnosis(engine: Pick<EngineState, 'troubleshoot'>, cursor: number) {
  const id = engine.troubleshoot.symptoms[cursor]?.id;
  return (id !== undefined ? engine.troubleshoot.diagnoses[id] : undefined) ?? null;
}

/** A new diagnosis in view shows from its top. */
function keepScroll(t: TroubleshootUi, before: EngineState, beforeCursor: number, after: EngineState): TroubleshootUi {
  return shownDiagnosis(before, beforeCursor) === shownDiagnosis(after, t.cursor) ? t : { ...t, scroll: 0 };
}

function cycleHost(ui: UiState, hostCount: number, side: 'left' | 'right'): UiState {
  if (hostCount === 0) return ui;
  const key = side === 'left' ? 'leftHost' : 'rightHost';
  const otherKey = side === 'left' ? 'rightHost' : 'leftHost';
  const other = ui[otherKey];
  // The two panes always show two different hosts: skip the other pane's host; with exactly two hosts that
  // means swapping them.
  if (hostCount === 2) return { ...ui, [key]: other, [otherKey]: ui[key] };
  let next = (ui[key] + 1) % hostCount;
  if (next === other && hostCount > 1) next = (next + 1) % hostCount;
  return { ...ui, [key]: next };
}

export function reduceUi(ui: UiState, action: AppAction, before: EngineState, after: EngineState): UiState {
  switch (action.type) {
    case 'ui.screen':
      return { ...ui, screen: action.screen, details: null };
    case 'ui.selectStage':
      return { ...ui, selectedStage: action.stage, details: null };
    case 'ui.moveStage': {
      const i = STAGE_IDS.indexOf(ui.selectedStage);
      const j = Math.max(0, Math.min(STAGE_IDS.length - 1, i + action.delta));
      return { ...ui, selectedStage: STAGE_IDS[j] ?? ui.selectedStage, details: null };
    }
    case 'ui.cycleHost':
      return cycleHost(ui, after.hostOrder.length, action.side);
    case 'ui.gridCursor': {
      const order = hostsWorstFirst(after, ui.selectedStage);
      const n = order.length;
      if (n === 0) return ui;
      const at = Math.max(
        0,
        order.findIndex((e) => e.index === ui.gridHost),
      );
      const to =
        Math.abs(action.delta) === 1 ? (at + action.delta + n) % n : Math.max(0, Math.min(n - 1, at + action.delta));
      const host = order[to]?.index ?? ui.gridHost;
      return host === ui.gridHost ? ui : { ...ui, gridHost: host };
    }
    case 'ui.showHost': {
      const { gridHost, leftHost, rightHost } = ui;
      if (gridHost >= after.hostOrder.length) return ui;
      if (action.side === 'left')
        return { ...ui, leftHost: gridHost, rightHost: rightHost === gridHost ? leftHost : rightHost };
      return { ...ui, rightHost: gridHost, leftHost: leftHost === gridHost ? rightHost : leftHost };
    }
    case 'ui.confirmQuit':
      return { ...ui, confirmQuit: action.open };
    case 'ui.notice':
    case 'session.notice': {
      const notice = action.text !== undefined ? clean(action.text) : undefined;
      return notice === ui.notice ? ui : { ...ui, notice };
    }
    case 'ui.toggleHelp':
      return { ...ui, showHelp: !ui.showHelp };
    case 'ui.details':
      return { ...ui, details: action.index === null ? null : Math.max(0, action.index) };
    case 'ui.scrollPlan':
      return { ...ui, planScroll: Math.max(0, ui.planScroll + action.delta) };
    case 'ui.resize':
      return ui.terminal.columns === action.columns && ui.terminal.rows === action.rows
        ? ui
        : { ...ui, terminal: { columns: action.columns, rows: action.rows } };
    case 'ui.session':
      return { ...ui, implemented: action.implemented, setup: initialDraft(action.hosts, action.design) };
    case 'prompt.open': {
      const at = ui.prompts.findIndex((p) => p.id === action.prompt.id);
      const prompts =
        at < 0 ? [...ui.prompts, action.prompt] : ui.prompts.map((p, i) => (i === at ? action.prompt : p));
      // A new plan or step question shows from its top.
      const fresh = at < 0 && (action.prompt.kind === 'plan' || action.prompt.kind === 'confirm');
      return { ...ui, prompts, ...(fresh ? { planScroll: 0 } : {}) };
    }
    case 'prompt.close':
      return ui.prompts.some((p) => p.id === action.id)
        ? { ...ui, prompts: ui.prompts.filter((p) => p.id !== action.id) }
        : ui;
    case 'session.apply': {
      const { apply: _gone, ...rest } = ui;
      return { ...(action.apply ? { ...rest, apply: action.apply } : rest), planScroll: 0 };
    }
    case 'session.showStage':
      return { ...ui, screen: 'stage', selectedStage: action.stage, details: null };
    case 'session.hosts': {
      const fresh = initialUi(action.hosts);
      return {
        ...ui,
        leftHost: fresh.leftHost,
        rightHost: fresh.rightHost,
        gridHost: 0,
        monitor: { ...fresh.monitor, returnTo: ui.monitor.returnTo, metric: ui.monitor.metric },
        troubleshoot: { ...ui.troubleshoot, scroll: 0 },
      };
    }
    case 'monitor.open':
      if (ui.screen === 'monitor') return ui;
      return { ...ui, monitor: { ...ui.monitor, returnTo: ui.screen }, screen: 'monitor', details: null };
    case 'monitor.close':
      return ui.screen === 'monitor' ? { ...ui, screen: ui.monitor.returnTo } : ui;
    case 'monitor.frame': {
      const n = action.frame.sample.hosts.length;
      const clamp = (i: number): number => Math.max(0, Math.min(Math.max(0, n - 1), i));
      const m = ui.monitor;
      const next = { ...m, left: clamp(m.left), right: clamp(m.right), cursor: clamp(m.cursor) };
      return next.left === m.left && next.right === m.right && next.cursor === m.cursor ? ui : { ...ui, monitor: next };
    }
    case 'monitor.cursor': {
      const n = after.monitor.frame?.sample.hosts.length ?? after.hostOrder.length;
      if (n === 0) return ui;
      return { ...ui, monitor: { ...ui.monitor, cursor: (ui.monitor.cursor + action.delta + n * 64) % n } };
    }
    case 'monitor.show': {
      const m = ui.monitor;
      if (action.side === 'left')
        return { ...ui, monitor: { ...m, left: m.cursor, right: m.right === m.cursor ? m.left : m.right } };
      return { ...ui, monitor: { ...m, right: m.cursor, left: m.left === m.cursor ? m.right : m.left } };
    }
    case 'monitor.metric':
      return { ...ui, monitor: { ...ui.monitor, metric: nextMetric(ui.monitor.metric) } };
    case 'troubleshoot.open': {
      const t = ui.troubleshoot;
      const symptoms = after.troubleshoot.symptoms;
      const selected = action.select !== undefined ? symptoms.findIndex((s) => s.id === action.select) : -1;
      const cursor = selected >= 0 ? selected : Math.min(t.cursor, Math.max(0, symptoms.length - 1));
      // Back from a fix's plan/apply in the stage view, esc still leads where troubleshooting began.
      const returnTo = ui.screen === 'troubleshoot' || before.troubleshoot.fixing ? t.returnTo : ui.screen;
      return {
        ...ui,
        screen: 'troubleshoot',
        details: null,
        troubleshoot: keepScroll({ ...t, cursor, returnTo }, before, t.cursor, after),
      };
    }
    case 'troubleshoot.close':
      return ui.screen === 'troubleshoot' ? { ...ui, screen: ui.troubleshoot.returnTo } : ui;
    case 'troubleshoot.cursor': {
      const t = ui.troubleshoot;
      const n = after.troubleshoot.symptoms.length;
      if (n === 0) return ui;
      const cursor = Math.max(0, Math.min(n - 1, t.cursor + action.delta));
      return { ...ui, troubleshoot: keepScroll({ ...t, cursor }, before, t.cursor, after) };
    }
    case 'troubleshoot.diagnosis': {
      const t = keepScroll(ui.troubleshoot, before, ui.troubleshoot.cursor, after);
      return t === ui.troubleshoot ? ui : { ...ui, troubleshoot: t };
    }
    case 'troubleshoot.scroll':
      return {
        ...ui,
        troubleshoot: { ...ui.troubleshoot, scroll: Math.max(0, ui.troubleshoot.scroll + action.delta) },
      };
    case 'setup.move':
    case 'setup.startEdit':
    case 'setup.insert':
    case 'setup.deleteBack':
    case 'setup.commit':
    case 'setup.undo':
    case 'setup.add':
    case 'setup.remove':
    case 'setup.design':
    case 'setup.result':
    case 'setup.message': {
      const setup = reduceSetup(ui.setup, action);
      return setup === ui.setup ? ui : { ...ui, setup };
    }
    default:
      // The engine's events and data: the screens' state does not follow them.
      return ui;
  }
}
