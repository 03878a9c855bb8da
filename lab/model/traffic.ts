/**
 * Traffic in flight: counters that move while a flow runs, not in one lump when it ends.
 *
 * A flow is what it will have added to the ethtool and RDMA hw counters of its ends by its end time
 * (`CounterDelta` totals, computed once when it starts — model/perftest.ts `flowCounters`), spread
 * linearly over [start, end]. Every reader of those counters (ethtool -S, sysfs counters/hw_counters,
 * /sys/class/net/<if>/statistics) calls `settleTraffic(machine)` first, which adds what accrued up to
 * the clock's now; a reader sampling every second therefore sees a steady rate while an
 * `ib_write_bw` or an NCCL job runs, and the totals at the end are exactly the flow's totals. A flow
 * cut short (the client was killed) keeps what accrued until then and drops the rest.
 *
 * Flows are kept per machine (a flow is listed at both of its ends); settling is by time, so whichever
 * end is read first settles both.
 */
import { addEthtoolCounter, addHwCounter } from './rdma.js';
import type { Machine } from './types.js';

export interface CounterDelta {
  machine: Machine;
  /** `ethtool`: an `ethtool -S` counter of netdev `key`; `hw`: a hw_counter of RDMA device `key`. */
  kind: 'ethtool' | 'hw';
  key: string;
  name: string;
  total: number;
}

interface ActiveFlow {
  start: number;
  end: number;
  deltas: CounterDelta[];
  /** What each delta has added so far. */
  applied: number[];
  machines: Set<Machine>;
}

export interface TrafficHandle {
  /** Settles everything due by the end time (a flow that ran its course). */
  finish(): void;
  /** Ends the flow now: what accrued stays, the rest never happens. */
  stop(): void;
}

const active = new WeakMap<Machine, Set<ActiveFlow>>();

function flowsOf(m: Machine): Set<ActiveFlow> {
  let s = active.get(m);
  if (!s) active.set(m, (s = new Set()));
  return s;
}

function apply(f: ActiveFlow, fraction: number): void {
  const touched = new Set<Machine>();
  f.deltas.forEach((d, i) => {
    const want = Math.round(d.total * fraction);
    const add = want - (f.applied[i] ?? 0);
    if (add === 0) return;
    if (d.kind === 'ethtool') addEthtoolCounter(d.machine, d.key, d.name, add);
    else addHwCounter(d.machine, d.key, d.name, add);
    f.applied[i] = want;
    touched.add(d.machine);
  });
  for (const m of touched) m.revision++;
}

function retire(f: ActiveFlow): void {
  for (const m of f.machines) active.get(m)?.delete(f);
}

function settleFlow(f: ActiveFlow, now: number): void {
  const fraction =
    f.end <= f.start ? (now >= f.end ? 1 : 0) : Math.min(1, Math.max(0, (now - f.start) / (f.end - f.start)));
  apply(f, fraction);
  if (fraction >= 1) retire(f);
}

/**
 * Starts a flow that adds `deltas` over [start, end] (simulated ms). Totals are rounded as
 * addEthtoolCounter rounds them, so a flow run to its end leaves exactly what recording it at once would.
 */
export function startTraffic(deltas: readonly CounterDelta[], start: number, end: number): TrafficHandle {
  const f: ActiveFlow = {
    start,
    end,
    deltas: deltas.map((d) => ({ ...d, total: Math.round(d.total) })),
    applied: deltas.map(() => 0),
    machines: new Set(deltas.map((d) => d.machine)),
  };
  for (const m of f.machines) flowsOf(m).add(f);
  const clock = deltas[0]?.machine.clock;
  return {
    finish: () => {
      apply(f, 1);
      retire(f);
    },
    stop: () => {
      if (clock) settleFlow(f, Math.min(clock.now(), f.end));
      retire(f);
    },
  };
}

/** Adds what every flow touching `m` accrued up to now (call before reading a traffic counter). */
export function settleTraffic(m: Machine, now = m.clock.now()): void {
  const flows = active.get(m);
  if (!flows || flows.size === 0) return;
  for (const f of [...flows]) settleFlow(f, now);
}

/** Flows in flight at `m` (tests, the monitor's view of "is anything running"). */
export function activeFlows(m: Machine): number {
  return active.get(m)?.size ?? 0;
}
