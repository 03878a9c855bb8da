/**
 * Per-host roll-ups of a stage for views of many hosts (the stage view's host grid, the pipeline's
 * compact matrix), and their worst-first order (the grid's cursor moves in it, so the reducer needs
 * it too).
 *
 * Memoized on the store's slices: an output line of one host replaces `panes` and that host's pane,
 * but neither `checks` nor any host's `commands`, so at 64 hosts such a tick costs a few lookups per
 * host here, and a selector built with `hostEntriesSelector` hands back the same array, which makes
 * the views that use it skip the render.
 */
import type { HostConnectionState } from '../transport/types.js';
import { worstStatus, type CheckResult, type CheckStatus, type StageId, type StageStatus } from './types.js';
import type { CommandView, EngineState } from './store-types.js';

/** One host as the grid shows it for one stage. */
export interface HostEntry {
  host: string;
  /** Index in hostOrder (the panes' leftHost/rightHost speak these). */
  index: number;
  status: StageStatus;
  /** The connection is lost or could not be made: nothing this host says now is fresh. */
  trouble: boolean;
  connection: HostConnectionState;
}

type Slices = Pick<EngineState, 'checks' | 'stages' | 'panes' | 'hostOrder'>;

// Keyed on the checks array itself: the reducer replaces it on every check.result of its stage and
// keeps it otherwise, so one pass over a stage's results serves every tick until the next verdict.
const worstCache = new WeakMap<readonly CheckResult[], Map<string | null, CheckStatus>>();

/** The worst verdict of each host (null: the cluster checks) among a stage's results. */
export function worstByHost(checks: readonly CheckResult[]): Map<string | null, CheckStatus> {
  let m = worstCache.get(checks);
  if (m) return m;
  const grouped = new Map<string | null, CheckStatus[]>();
  for (const c of checks) {
    const list = grouped.get(c.host);
    if (list) list.push(c.status);
    else grouped.set(c.host, [c.status]);
  }
  m = new Map([...grouped].map(([h, statuses]) => [h, worstStatus(statuses)]));
  worstCache.set(checks, m);
  return m;
}

/**
 * The pipeline's cell: the same answer as store.ts stageStatusFor (running while the stage runs,
 * else the host's worst verdict, pending without one), without filtering every result per cell —
 * at 64 hosts × 11 stages that filter was 700 passes over up to a thousand results per frame.
 */
export function cellStatus(
  state: Pick<EngineState, 'checks' | 'stages'>,
  stage: StageId,
  host: string | null,
): StageStatus {
  const overall = state.stages[stage];
  const worst = worstByHost(state.checks[stage]).get(host);
  if (worst === undefined) return overall === 'running' ? 'running' : 'pending';
  return overall === 'running' ? 'running' : worst;
}

const runningCache = new WeakMap<readonly CommandView[], Map<StageId, boolean>>();

function commandsRunning(commands: readonly CommandView[], stage: StageId): boolean {
  let m = runningCache.get(commands);
  if (!m) {
    m = new Map();
    runningCache.set(commands, m);
  }
  let r = m.get(stage);
  if (r === undefined) {
    r = commands.some((c) => c.running && c.stage === stage);
    m.set(stage, r);
  }
  return r;
}

/**
 * A host's state in one stage, finer than the pipeline's cell: hosts report their verdicts as they
 * finish, so while the stage still runs elsewhere a finished host already shows its worst verdict,
 * and one still running its commands shows running.
 */
export function hostStageStatus(
  state: Pick<EngineState, 'checks' | 'stages' | 'panes'>,
  stage: StageId,
  host: string,
): StageStatus {
  const pane = state.panes[host];
  if (pane && commandsRunning(pane.commands, stage)) return 'running';
  const worst = worstByHost(state.checks[stage]).get(host);
  if (worst !== undefined) return worst;
  return state.stages[stage] === 'running' ? 'running' : 'pending';
}

export function connectionTrouble(connection: HostConnectionState | undefined): boolean {
  return connection === 'lost' || connection === 'failed';
}

/**
 * Worst first, as the details list orders verdicts (checksWorstFirst: error before fail): a host
 * that could not be reached or not be checked is first, because nothing else about it is known;
 * then fail, warn, still running, not run yet, skipped, passed.
 */
const RANK: Record<StageStatus, number> = { error: 0, fail: 1, warn: 2, running: 3, pending: 4, skip: 5, pass: 6 };

export function entryRank(e: Pick<HostEntry, 'status' | 'trouble'>): number {
  return e.trouble ? 0 : RANK[e.status];
}

export function byRank<T extends Pick<HostEntry, 'status' | 'trouble' | 'index'>>(a: T, b: T): number {
  return entryRank(a) - entryRank(b) || a.index - b.index;
}

/** Every host of a stage, worst first, then in inventory order. */
export function hostsWorstFirst(state: Slices, stage: StageId): HostEntry[] {
  return state.hostOrder
    .map((host, index) => {
      const connection = state.panes[host]?.connection ?? 'idle';
      return {
        host,
        index,
        status: hostStageStatus(state, stage, host),
        trouble: connectionTrouble(connection),
        connection,
      };
    })
    .sort(byRank);
}

function sameEntries(a: readonly HostEntry[], b: readonly HostEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.host !== y.host || x.index !== y.index || x.status !== y.status || x.connection !== y.connection)
      return false;
  }
  return true;
}

/**
 * A selector for useSyncExternalStore: a stage's hosts worst first, the same array for as long as no
 * host's status, connection or place changes (output lines change none of them).
 */
export function hostEntriesSelector(): (state: Slices, stage: StageId) => HostEntry[] {
  let last: HostEntry[] = [];
  return (state, stage) => {
    const next = hostsWorstFirst(state, stage);
    if (!sameEntries(last, next)) last = next;
    return last;
  };
}

/** Hosts whose connection is lost or failed, in inventory order: a selector whose answer keeps its identity while that set does not change. */
export function troubleHostsSelector(): (state: Pick<EngineState, 'panes' | 'hostOrder'>) => string[] {
  let last: string[] = [];
  return (state) => {
    const next = state.hostOrder.filter((h) => connectionTrouble(state.panes[h]?.connection));
    if (next.length !== last.length || next.some((h, i) => h !== last[i])) last = next;
    return last;
  };
}

export interface ConnectionEntry {
  host: string;
  address: string;
  connection: HostConnectionState;
  detail?: string;
}

/** Every host's connection, in inventory order: the same array while no connection changes (output lines change none). */
export function connectionsSelector(): (state: Pick<EngineState, 'panes' | 'hostOrder'>) => ConnectionEntry[] {
  let last: ConnectionEntry[] = [];
  return (state) => {
    let changed = last.length !== state.hostOrder.length;
    for (let i = 0; !changed && i < state.hostOrder.length; i++) {
      const p = state.panes[state.hostOrder[i]!];
      const l = last[i]!;
      changed =
        l.host !== state.hostOrder[i] ||
        l.connection !== (p?.connection ?? 'idle') ||
        l.detail !== p?.connectionDetail ||
        l.address !== (p?.address ?? '');
    }
    if (changed) {
      last = state.hostOrder.map((host) => {
        const p = state.panes[host];
        return {
          host,
          address: p?.address ?? '',
          connection: p?.connection ?? 'idle',
          ...(p?.connectionDetail !== undefined ? { detail: p.connectionDetail } : {}),
        };
      });
    }
    return last;
  };
}
