/**
 * One store for the whole UI: a pure reducer over engine events and UI actions. Screens read slices
 * through selectors, so a tick of host A's output does not re-render host B's pane.
 */
import { STAGE_IDS, worstStatus, type CheckResult, type StageId, type StageStatus, type StepResult } from './types.js';
import { reduceTroubleshoot } from './store-troubleshoot.js';
import { TIMEBASES } from '../monitor/series.js';
import { withoutSudoWrapper } from '../transport/quote.js';
import { hostsWorstFirst } from './host-status.js';
import { clean } from '../util/sanitize.js';
export type { CommandView, PaneState, StageOutput, Screen, MonitorUi, SymptomSummary, TroubleshootUi, UiState, ApplyUi, AppState, UiAction, SessionAction, PaneOutputAction, Action } from './store-types.js';
import type { CommandView, PaneState, Screen, AppState, PaneOutputAction, Action, StageOutput } from './store-types.js';

/**
 * Lines of output kept per host and stage for its pane (taller than any pane); the session log has
 * everything. Eleven stages at 64 hosts: at most 211,200 lines; most stages print a few dozen (on the lab
 * three print thousands per host: inventory, gpudirect, rdma-link).
 */
export const PANE_LINES = 300;

export function initialState(hosts: ReadonlyArray<{ name: string; address: string }>, screen: Screen = 'pipeline'): AppState {
  const panes: Record<string, PaneState> = {};
  for (const h of hosts) {
    panes[h.name] = { host: h.name, address: h.address, connection: 'idle', commands: [], output: {} };
  }
  const stages = Object.fromEntries(STAGE_IDS.map((id) => [id, 'pending'])) as Record<StageId, StageStatus>;
  const checks = Object.fromEntries(STAGE_IDS.map((id) => [id, []])) as unknown as Record<StageId, CheckResult[]>;
  const steps = Object.fromEntries(STAGE_IDS.map((id) => [id, []])) as unknown as Record<StageId, StepResult[]>;
  return {
    hostOrder: hosts.map((h) => h.name),
    panes,
    stages,
    checks,
    steps,
    busy: false,
    monitor: { frame: null, timebase: '1m', left: 0, right: Math.min(1, hosts.length - 1), cursor: 0, returnTo: 'pipeline' },
    troubleshoot: { symptoms: [], cursor: 0, running: null, diagnosis: null, diagnoses: {}, fixing: null, returnTo: 'pipeline', scroll: 0 },
    ui: { screen, selectedStage: 'inventory', leftHost: 0, rightHost: Math.min(1, hosts.length - 1), gridHost: 0, confirmQuit: false, showHelp: false, details: null },
  };
}

function updatePane(state: AppState, host: string, f: (p: PaneState) => PaneState): AppState {
  const pane = state.panes[host];
  if (!pane) return state;
  return { ...state, panes: { ...state.panes, [host]: f(pane) } };
}

const NO_OUTPUT: StageOutput = { lines: [], totalLines: 0 };

/** A stage's output with `added` appended (only its last PANE_LINES kept) and `uncarried` more lines counted. */
function withLines(o: StageOutput, added: StageOutput['lines'], uncarried: number): StageOutput {
  const kept = added.length > PANE_LINES ? added.slice(-PANE_LINES) : added;
  const old = PANE_LINES - kept.length;
  const lines = old <= 0 ? kept : o.lines.length <= old ? [...o.lines, ...kept] : [...o.lines.slice(-old), ...kept];
  return { lines, totalLines: o.totalLines + added.length + uncarried };
}

function appendToStage(p: PaneState, stage: StageId, added: StageOutput['lines'], uncarried: number): PaneState {
  return { ...p, output: { ...p.output, [stage]: withLines(p.output[stage] ?? NO_OUTPUT, added, uncarried) } };
}

/** Lines the engine itself writes into panes (step markers, procedure notes), tagged with the step. */
function appendLines(state: AppState, hosts: readonly string[], stage: StageId, texts: readonly string[], probe: string): AppState {
  let next = state;
  for (const h of hosts) next = updatePane(next, h, (p) => appendToStage(p, stage, texts.map((text) => ({ text, stderr: false, probe })), 0));
  return next;
}

/**
 * Appends output to a pane, each command's lines to its stage. `omitted`: lines the coalescer counted but did
 * not carry; they belong to the stage of the batches it carried (it flushes before every other event, so one
 * action never spans two stages' runs). Output of a command the pane never saw start has no stage to go to.
 */
function appendOutput(p: PaneState, batches: PaneOutputAction['batches'], omitted: number): PaneState {
  // Gathered per stage first, so a flush of many interleaved batches copies each stage's ring once.
  const byStage = new Map<StageId, { added: StageOutput['lines']; uncarried: number }>();
  let lastStage: StageId | undefined;
  for (const b of batches) {
    const cmd = p.commands.find((c) => c.runId === b.runId);
    if (!cmd) continue;
    let into = byStage.get(cmd.stage);
    if (!into) byStage.set(cmd.stage, (into = { added: [], uncarried: 0 }));
    const stderr = b.stream === 'stderr';
    // Only the last PANE_LINES of a batch can stay; the rest are counted.
    const from = Math.max(0, b.lines.length - PANE_LINES);
    into.uncarried += from;
    for (let i = from; i < b.lines.length; i++) into.added.push({ text: b.lines[i] as string, stderr, probe: cmd.probe });
    lastStage = cmd.stage;
  }
  if (lastStage !== undefined) byStage.get(lastStage)!.uncarried += omitted;
  let next = p;
  for (const [stage, { added, uncarried }] of byStage) next = appendToStage(next, stage, added, uncarried);
  return next;
}

function updateCommand(p: PaneState, runId: string, f: (c: CommandView) => CommandView): PaneState {
  return { ...p, commands: p.commands.map((c) => (c.runId === runId ? f(c) : c)) };
}

export function reduce(state: AppState, action: Action): AppState {
  switch (action.type) {
    case 'host.state':
      return updatePane(state, action.host, (p) => ({
        ...p,
        connection: action.state,
        ...(action.detail !== undefined ? { connectionDetail: action.detail } : { connectionDetail: undefined }),
      }));
    case 'stage.state': {
      const next: AppState = { ...state, stages: { ...state.stages, [action.stage]: action.state } };
      if (action.state === 'running') {
        // A new run of a stage replaces its previous results, commands and output; other stages' stay.
        next.checks = { ...state.checks, [action.stage]: [] };
        const panes: Record<string, PaneState> = {};
        for (const [name, p] of Object.entries(state.panes)) {
          const output = { ...p.output };
          delete output[action.stage];
          panes[name] = { ...p, commands: p.commands.filter((c) => c.stage !== action.stage), output };
        }
        next.panes = panes;
        next.busy = true;
      }
      return next;
    }
    case 'cmd.start':
      return updatePane(state, action.host, (p) => ({
        ...p,
        commands: [...p.commands, {
          runId: action.runId, stage: action.stage, probe: action.probe, commandLine: withoutSudoWrapper(action.commandLine), sudo: action.sudo, running: true,
          ...(action.reusedFrom !== undefined ? { reusedFrom: action.reusedFrom } : {}),
        }],
      }));
    case 'cmd.output':
      return updatePane(state, action.host, (p) => appendOutput(p, [action], 0));
    case 'pane.output':
      return updatePane(state, action.host, (p) => appendOutput(p, action.batches, action.omitted));
    case 'cmd.exit':
      return updatePane(state, action.host, (p) =>
        updateCommand(p, action.runId, (c) => ({
          ...c, running: false, exitCode: action.exitCode, durationMs: action.durationMs, timedOut: action.timedOut, cancelled: action.cancelled,
        })),
      );
    case 'check.result': {
      const stage = action.result.stage;
      return { ...state, checks: { ...state.checks, [stage]: [...state.checks[stage], action.result] } };
    }
    case 'step.start':
      return appendLines(state, [action.host], action.stage, [`▶ ${action.step} (${action.danger})`], action.step);
    case 'step.note':
      return appendLines(state, action.host === null ? state.hostOrder : [action.host], action.stage, [action.line], action.step);
    case 'step.result': {
      const r = action.result;
      const kept = state.steps[r.stage].filter((s) => !(s.id === r.id && s.host === r.host));
      return { ...state, steps: { ...state.steps, [r.stage]: [...kept, r] } };
    }
    case 'timer.armed':
      // For the crash journal; the step's own note says the timer is armed.
      return state;
    case 'engine.idle':
      return { ...state, busy: false };
    case 'session.hosts': {
      const fresh = initialState(action.hosts, state.ui.screen);
      return {
        ...fresh, ui: { ...state.ui, leftHost: 0, rightHost: Math.min(1, action.hosts.length - 1), gridHost: 0 }, monitor: { ...fresh.monitor, returnTo: state.monitor.returnTo },
        // Diagnoses were of the old hosts: the catalog and where to go back stay, the verdicts go.
        troubleshoot: { ...fresh.troubleshoot, symptoms: state.troubleshoot.symptoms, cursor: state.troubleshoot.cursor, returnTo: state.troubleshoot.returnTo },
      };
    }
    case 'ui.screen':
      return { ...state, ui: { ...state.ui, screen: action.screen, details: null } };
    case 'ui.selectStage':
      return { ...state, ui: { ...state.ui, selectedStage: action.stage, details: null } };
    case 'ui.moveStage': {
      const i = STAGE_IDS.indexOf(state.ui.selectedStage);
      const j = Math.max(0, Math.min(STAGE_IDS.length - 1, i + action.delta));
      return { ...state, ui: { ...state.ui, selectedStage: STAGE_IDS[j] ?? state.ui.selectedStage, details: null } };
    }
    case 'ui.cycleHost': {
      const n = state.hostOrder.length;
      if (n === 0) return state;
      const key = action.side === 'left' ? 'leftHost' : 'rightHost';
      const otherKey = action.side === 'left' ? 'rightHost' : 'leftHost';
      const other = state.ui[otherKey];
      // The two panes always show two different hosts: skip the other pane's host; with exactly
      // two hosts that means swapping them.
      let next = (state.ui[key] + 1) % n;
      if (next === other && n > 1) next = (next + 1) % n;
      if (n === 2) return { ...state, ui: { ...state.ui, [key]: other, [otherKey]: state.ui[key] } };
      return { ...state, ui: { ...state.ui, [key]: next } };
    }
    case 'ui.gridCursor': {
      const order = hostsWorstFirst(state, state.ui.selectedStage);
      const n = order.length;
      if (n === 0) return state;
      const at = Math.max(0, order.findIndex((e) => e.index === state.ui.gridHost));
      const to = Math.abs(action.delta) === 1 ? (at + action.delta + n) % n : Math.max(0, Math.min(n - 1, at + action.delta));
      const host = order[to]?.index ?? state.ui.gridHost;
      return host === state.ui.gridHost ? state : { ...state, ui: { ...state.ui, gridHost: host } };
    }
    case 'ui.showHost': {
      const { gridHost, leftHost, rightHost } = state.ui;
      if (gridHost >= state.hostOrder.length) return state;
      if (action.side === 'left') return { ...state, ui: { ...state.ui, leftHost: gridHost, rightHost: rightHost === gridHost ? leftHost : rightHost } };
      return { ...state, ui: { ...state.ui, rightHost: gridHost, leftHost: leftHost === gridHost ? rightHost : leftHost } };
    }
    case 'ui.confirmQuit':
      return { ...state, ui: { ...state.ui, confirmQuit: action.open } };
    case 'ui.notice':
      const notice = action.text !== undefined ? clean(action.text) : undefined;
      return { ...state, ui: { ...state.ui, notice } };
    case 'ui.trust':
      return { ...state, ui: { ...state.ui, ...(action.prompt ? { trust: action.prompt } : { trust: undefined }) } };
    case 'ui.apply': {
      const next = { ...state, ui: { ...state.ui, ...(action.apply ? { apply: action.apply } : { apply: undefined }) } };
      // A fix's preview closed without applying: nothing will need verifying.
      return !action.apply && state.ui.apply?.phase === 'preview' && state.troubleshoot.fixing ? { ...next, troubleshoot: { ...next.troubleshoot, fixing: null } } : next;
    }
    case 'ui.journal':
      return { ...state, ui: { ...state.ui, ...(action.journal ? { journal: action.journal } : { journal: undefined }) } };
    case 'ui.scrollPlan':
      return state.ui.apply ? { ...state, ui: { ...state.ui, apply: { ...state.ui.apply, scroll: Math.max(0, state.ui.apply.scroll + action.delta) } } } : state;
    case 'ui.details':
      return { ...state, ui: { ...state.ui, details: action.index === null ? null : Math.max(0, action.index) } };
    case 'monitor.open':
      if (state.ui.screen === 'monitor') return state;
      return { ...state, monitor: { ...state.monitor, returnTo: state.ui.screen }, ui: { ...state.ui, screen: 'monitor', details: null } };
    case 'monitor.close':
      return state.ui.screen === 'monitor' ? { ...state, ui: { ...state.ui, screen: state.monitor.returnTo } } : state;
    case 'monitor.frame': {
      const n = action.frame.sample.hosts.length;
      const clamp = (i: number): number => Math.max(0, Math.min(Math.max(0, n - 1), i));
      const m = state.monitor;
      return { ...state, monitor: { ...m, frame: action.frame, left: clamp(m.left), right: clamp(m.right), cursor: clamp(m.cursor) } };
    }
    case 'monitor.timebase': {
      const next = action.timebase ?? TIMEBASES[(TIMEBASES.indexOf(state.monitor.timebase) + 1) % TIMEBASES.length] ?? '1m';
      return { ...state, monitor: { ...state.monitor, timebase: next } };
    }
    case 'monitor.cursor': {
      const n = state.monitor.frame?.sample.hosts.length ?? state.hostOrder.length;
      if (n === 0) return state;
      return { ...state, monitor: { ...state.monitor, cursor: (state.monitor.cursor + action.delta + n * 64) % n } };
    }
    case 'monitor.show': {
      const m = state.monitor;
      if (action.side === 'left') return { ...state, monitor: { ...m, left: m.cursor, right: m.right === m.cursor ? m.left : m.right } };
      return { ...state, monitor: { ...m, right: m.cursor, left: m.left === m.cursor ? m.right : m.left } };
    }
    case 'troubleshoot.open':
    case 'troubleshoot.close':
    case 'troubleshoot.cursor':
    case 'troubleshoot.running':
    case 'troubleshoot.diagnosis':
    case 'troubleshoot.scroll':
    case 'troubleshoot.fixing':
      return reduceTroubleshoot(state, action);
    case 'ui.toggleHelp':
      return { ...state, ui: { ...state.ui, showHelp: !state.ui.showHelp } };
    default: {
      const unreachable: never = action;
      throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A minimal external store for useSyncExternalStore: dispatch, getState, subscribe. */
export class Store {
  private state: AppState;
  private readonly listeners = new Set<() => void>();

  constructor(initial: AppState) {
    this.state = initial;
  }

  getState = (): AppState => this.state;

  dispatch = (action: Action): void => {
    const next = reduce(this.state, action);
    if (next === this.state) return;
    this.state = next;
    for (const l of this.listeners) l();
  };

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
}

/** A stage's verdicts worst first (error, fail, warn, skip, pass), then hosts in inventory order. */
export function checksWorstFirst(state: Pick<AppState, 'checks' | 'hostOrder'>, stage: StageId): CheckResult[] {
  const rank = { error: 0, fail: 1, warn: 2, skip: 3, pass: 4 } as const;
  const hostIndex = (h: string | null) => (h === null ? state.hostOrder.length : state.hostOrder.indexOf(h));
  return [...state.checks[stage]].sort((a, b) => rank[a.status] - rank[b.status] || hostIndex(a.host) - hostIndex(b.host));
}

/** Roll-up of one stage on one host (or the cluster row when host is null). */
export function stageStatusFor(state: Pick<AppState, 'stages' | 'checks'>, stage: StageId, host: string | null): StageStatus {
  const overall = state.stages[stage];
  const results = state.checks[stage].filter((c) => c.host === host);
  if (results.length === 0) return overall === 'running' ? 'running' : 'pending';
  return overall === 'running' ? 'running' : worstStatus(results.map((r) => r.status));
}
