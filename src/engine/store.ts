/**
 * The engine's state: a pure reducer over engine events and the session's data. The TUI's one store composes
 * it with the screens' own state (screens/state/); screens read slices through selectors, so a tick of host
 * A's output does not re-render host B's pane.
 */
import { STAGE_IDS, worstStatus, type CheckResult, type StageId, type StageStatus, type StepResult } from './types.js';
import { TIMEBASES } from '../monitor/series.js';
import { withoutSudoWrapper } from '../transport/quote.js';
import type {
  CommandView,
  EngineAction,
  EngineState,
  EngineStore,
  PaneOutputAction,
  PaneState,
  StageOutput,
} from './store-types.js';

/**
 * Lines of output kept per host and stage for its pane (taller than any pane); the session log has
 * everything. Eleven stages at 64 hosts: at most 211,200 lines; most stages print a few dozen (on the lab
 * three print thousands per host: inventory, gpudirect, rdma-link).
 */
export const PANE_LINES = 300;

export function initialState(hosts: ReadonlyArray<{ name: string; address: string }>): EngineState {
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
    monitor: { frame: null, timebase: '1m' },
    troubleshoot: { symptoms: [], running: null, diagnoses: {}, fixing: null },
  };
}

function updatePane(state: EngineState, host: string, f: (p: PaneState) => PaneState): EngineState {
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
function appendLines(
  state: EngineState,
  hosts: readonly string[],
  stage: StageId,
  texts: readonly string[],
  probe: string,
): EngineState {
  let next = state;
  for (const h of hosts)
    next = updatePane(next, h, (p) =>
      appendToStage(
        p,
        stage,
        texts.map((text) => ({ text, stderr: false, probe })),
        0,
      ),
    );
  return next;
}

/**
 * Appends output to a pane, each batch's lines to the stage its event named. `omitted`: lines the coalescer
 * counted but did not carry; they belong to the stage of the batches it carried (it flushes before every other
 * event, so one action never spans two stages' runs).
 */
function appendOutput(p: PaneState, batches: PaneOutputAction['batches'], omitted: number): PaneState {
  // Gathered per stage first, so a flush of many interleaved batches copies each stage's ring once.
  const byStage = new Map<StageId, { added: StageOutput['lines']; uncarried: number }>();
  let lastStage: StageId | undefined;
  for (const b of batches) {
    let into = byStage.get(b.stage);
    if (!into) byStage.set(b.stage, (into = { added: [], uncarried: 0 }));
    const stderr = b.stream === 'stderr';
    // Only the last PANE_LINES of a batch can stay; the rest are counted.
    const from = Math.max(0, b.lines.length - PANE_LINES);
    into.uncarried += from;
    for (let i = from; i < b.lines.length; i++) into.added.push({ text: b.lines[i] as string, stderr, probe: b.probe });
    lastStage = b.stage;
  }
  if (lastStage !== undefined) byStage.get(lastStage)!.uncarried += omitted;
  let next = p;
  for (const [stage, { added, uncarried }] of byStage) next = appendToStage(next, stage, added, uncarried);
  return next;
}

function updateCommand(p: PaneState, runId: string, f: (c: CommandView) => CommandView): PaneState {
  return { ...p, commands: p.commands.map((c) => (c.runId === runId ? f(c) : c)) };
}

export function reduce(state: EngineState, action: EngineAction): EngineState {
  switch (action.type) {
    case 'host.state':
      return updatePane(state, action.host, (p) => ({
        ...p,
        connection: action.state,
        ...(action.detail !== undefined ? { connectionDetail: action.detail } : { connectionDetail: undefined }),
      }));
    case 'stage.state': {
      const next: EngineState = { ...state, stages: { ...state.stages, [action.stage]: action.state } };
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
        commands: [
          ...p.commands,
          {
            runId: action.runId,
            stage: action.stage,
            probe: action.probe,
            commandLine: withoutSudoWrapper(action.commandLine),
            sudo: action.sudo,
            running: true,
            ...(action.reusedFrom !== undefined ? { reusedFrom: action.reusedFrom } : {}),
          },
        ],
      }));
    case 'cmd.output':
      return updatePane(state, action.host, (p) => appendOutput(p, [action], 0));
    case 'pane.output':
      return updatePane(state, action.host, (p) => appendOutput(p, action.batches, action.omitted));
    case 'cmd.exit':
      return updatePane(state, action.host, (p) =>
        updateCommand(p, action.runId, (c) => ({
          ...c,
          running: false,
          exitCode: action.exitCode,
          durationMs: action.durationMs,
          timedOut: action.timedOut,
          cancelled: action.cancelled,
        })),
      );
    case 'check.result': {
      const stage = action.result.stage;
      return { ...state, checks: { ...state.checks, [stage]: [...state.checks[stage], action.result] } };
    }
    case 'step.start':
      return appendLines(state, [action.host], action.stage, [`▶ ${action.step} (${action.danger})`], action.step);
    case 'step.note':
      return appendLines(
        state,
        action.host === null ? state.hostOrder : [action.host],
        action.stage,
        [action.line],
        action.step,
      );
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
      const fresh = initialState(action.hosts);
      // Diagnoses were of the old hosts: the catalog stays, the verdicts go.
      return {
        ...fresh,
        monitor: { ...fresh.monitor, timebase: state.monitor.timebase },
        troubleshoot: { ...fresh.troubleshoot, symptoms: state.troubleshoot.symptoms },
      };
    }
    case 'monitor.frame':
      return { ...state, monitor: { ...state.monitor, frame: action.frame } };
    case 'monitor.timebase': {
      const next =
        action.timebase ?? TIMEBASES[(TIMEBASES.indexOf(state.monitor.timebase) + 1) % TIMEBASES.length] ?? '1m';
      return { ...state, monitor: { ...state.monitor, timebase: next } };
    }
    case 'troubleshoot.open':
      return action.symptoms ? { ...state, troubleshoot: { ...state.troubleshoot, symptoms: action.symptoms } } : state;
    case 'troubleshoot.running':
      return { ...state, troubleshoot: { ...state.troubleshoot, running: action.symptom } };
    case 'troubleshoot.diagnosis': {
      const t = state.troubleshoot;
      return {
        ...state,
        troubleshoot: { ...t, diagnoses: { ...t.diagnoses, [action.diagnosis.symptom]: action.diagnosis } },
      };
    }
    case 'troubleshoot.fixing':
      return { ...state, troubleshoot: { ...state.troubleshoot, fixing: action.fixing } };
    // The session's words to the operator and where it leads them: the screens' state, not the engine's.
    case 'prompt.open':
    case 'prompt.close':
    case 'session.notice':
    case 'session.apply':
    case 'session.showStage':
    case 'monitor.open':
    case 'monitor.close':
      return state;
    default: {
      const unreachable: never = action;
      throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
    }
  }
}

/** A state held behind a reducer, for useSyncExternalStore: dispatch, getState, subscribe. */
export class ReducerStore<S, A> {
  private state: S;
  private readonly listeners = new Set<() => void>();

  constructor(
    initial: S,
    private readonly reducer: (state: S, action: A) => S,
  ) {
    this.state = initial;
  }

  getState = (): S => this.state;

  dispatch = (action: A): void => {
    const next = this.reducer(this.state, action);
    if (next === this.state) return;
    this.state = next;
    for (const l of this.listeners) l();
  };

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };
}

/** The engine's state alone (the CLI-free session in tests); the TUI's store is screens/state/app-store.ts. */
export class Store extends ReducerStore<EngineState, EngineAction> implements EngineStore {
  constructor(initial: EngineState) {
    super(initial, reduce);
  }
}

/** A stage's verdicts worst first (error, fail, warn, skip, pass), then hosts in inventory order. */
export function checksWorstFirst(state: Pick<EngineState, 'checks' | 'hostOrder'>, stage: StageId): CheckResult[] {
  const rank = { error: 0, fail: 1, warn: 2, skip: 3, pass: 4 } as const;
  const hostIndex = (h: string | null) => (h === null ? state.hostOrder.length : state.hostOrder.indexOf(h));
  return [...state.checks[stage]].sort(
    (a, b) => rank[a.status] - rank[b.status] || hostIndex(a.host) - hostIndex(b.host),
  );
}

/** Roll-up of one stage on one host (or the cluster row when host is null). */
export function stageStatusFor(
  state: Pick<EngineState, 'stages' | 'checks'>,
  stage: StageId,
  host: string | null,
): StageStatus {
  const overall = state.stages[stage];
  const results = state.checks[stage].filter((c) => c.host === host);
  if (results.length === 0) return overall === 'running' ? 'running' : 'pending';
  return overall === 'running' ? 'running' : worstStatus(results.map((r) => r.status));
}
