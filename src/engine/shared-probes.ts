/**
 * Probe results shared within one pass over the stages (Engine.runStages): stages probe the same things
 * (`ip -j addr`, `rdma link show`, `lspci -d 15b3:` …), and within a pass a command that an earlier stage
 * already ran on a host is not run again. Only a complete answer is shared; anything that may change what
 * the probes read (a stage's cluster run) clears what was shared before it.
 */
import type { RunResult } from '../transport/types.js';
import type { ProbeDef, StageId } from './types.js';

/** A result another stage may reuse, and the `stage/probe` that ran it. */
export interface SharedProbe {
  result: RunResult;
  from: string;
}

/** Same host, same command, same way of running it: the same reading. */
function keyOf(host: string, probe: ProbeDef): string {
  return JSON.stringify([host, probe.command, probe.sudo ?? false, probe.keepOutputBytes ?? null]);
}

/** A timed-out, cancelled or cut result is not an answer: the next stage that needs it runs it again. */
function reusable(r: RunResult): boolean {
  return r.exitCode !== null && !r.timedOut && !r.cancelled && !r.truncated;
}

export class SharedProbes {
  private readonly results = new Map<string, Promise<SharedProbe | undefined>>();

  /** What this command gave on this host earlier in the pass (waiting for it if it is still running). */
  lookup(host: string, probe: ProbeDef): Promise<SharedProbe | undefined> {
    return this.results.get(keyOf(host, probe)) ?? Promise.resolve(undefined);
  }

  /** Offers a run's result to the rest of the pass, once it has ended well. */
  record(host: string, probe: ProbeDef, stage: StageId, run: Promise<RunResult>): void {
    this.results.set(
      keyOf(host, probe),
      run.then(
        (r) => (reusable(r) ? { result: r, from: `${stage}/${probe.id}` } : undefined),
        () => undefined,
      ),
    );
  }

  clear(): void {
    this.results.clear();
  }
}
