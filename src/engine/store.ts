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
  OutputRun,
  PaneLine,
  PaneOutput,
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

const NO_OUTPUT: StageOutput = { runs: [], totalLines: 0 };

/**
 * A stage's output with `added` runs appended: only the newest PANE_LINES lines are kept (older runs dropped, the
 * oldest kept one cut), and `counted` lines go into the total. The one place the pane cap is applied: the store's
 * appends and the TUI's coalescer (withCommandOutput) go through it.
 */
function appendRuns(o: StageOutput, added: readonly OutputRun[], counted: number): StageOutput {
  const runs = [...o.runs, ...added];
  let size = 0;
  for (const r of runs) size += r.lines.length;
  let drop = 0;
  while (size > PANE_LINES) {
    const first = runs[drop] as OutputRun;
    const excess = size - PANE_LINES;
    if (first.lines.length <= excess) {
      drop++;
      size -= first.lines.length;
    } else {
      runs[drop] = { ...first, lines: first.lines.slice(excess) };
      size = PANE_LINES;
    }
  }
  return { runs: drop > 0 ? runs.slice(drop) : runs, totalLines: o.totalLines + counted };
}

/**
 * A pane's output with a command's lines added to the stage the command belongs to (the event says which): the
 * store's reduction of cmd.output, and how the TUI's coalescer gathers a burst.
 */
export function withCommandOutput(
  output: PaneOutput,
  e: { stage: StageId; probe: string; stream: 'stdout' | 'stderr'; lines: readonly string[] },
): PaneOutput {
  const run = { probe: e.probe, stderr: e.stream === 'stderr', lines: e.lines };
  return { ...output, [e.stage]: appendRuns(output[e.stage] ?? NO_OUTPUT, [run], e.lines.length) };
}

/** A pane's output with a coalesced burst added: each stage's runs, and all the lines its burst counted. */
function withBurst(output: PaneOutput, burst: PaneOutput): PaneOutput {
  const next = { ...output };
  for (const [stage, b] of Object.entries(burst) as Array<[StageId, StageOutput]>)
    next[stage] = appendRuns(output[stage] ?? NO_OUTPUT, b.runs, b.totalLines);
  return next;
}

/** The last `n` lines of a stage's output, oldest first, as a view draws them. */
export function lastLines(o: StageOutput | undefined, n: number): PaneLine[] {
  const lines: PaneLine[] = [];
  for (let i = (o?.runs.length ?? 0) - 1; i >= 0 && lines.length < n; i--) {
    const run = (o as StageOutput).runs[i] as OutputRun;
    for (let j = run.lines.length - 1; j >= 0 && lines.length < n; j--)
      lines.push({ text: run.lines[j] as string, stderr: run.stderr, probe: run.probe });
  }
  return lines.reverse();
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
    next = updatePane(next, h, (p) => {
      const o = appendRuns(p.output[stage] ?? NO_OUTPUT, [{ probe, stderr: false, lines: texts }], texts.length);
      return { ...p, output: { ...p.output, [stage]: o } };
    });
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
      return updatePane(state, action.host, (p) => ({ ...p, output: withCommandOutput(p.output, action) }));
    case 'pane.output':
      return updatePane(state, action.host, (p) => ({ ...p, output: withBurst(p.output, action.output) }));
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
