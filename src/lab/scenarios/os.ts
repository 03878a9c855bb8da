/**
 * Scenario parts for the os stage (STAGES.md §4.4): `ready` puts this stage's end state (design A)
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
