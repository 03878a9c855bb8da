/**
 * Scenario parts for the qos stage (STAGES.md §4.4): `ready` puts this stage's end state (design A)
 * into the model exactly as applying the stage would leave it; `tutorial` the recipe's state as written.
 * Fault scenarios of this stage live here too. Filled in by whoever builds the stage's lab support.
 */
import type { Cluster } from '../model/cluster.js';

export function ready(_cluster: Cluster): void {
  // not modelled yet
}

export function tutorial(_cluster: Cluster): void {
  // not modelled yet
}

/** `pfc-mismatch`: node 2 PFC off on all four ports (trust dscp kept). */
export function pfcMismatch(_cluster: Cluster): void {
  // not modelled yet
}
