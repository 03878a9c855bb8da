/**
 * Scenario parts for the network stage (STAGES.md §4.4): `ready` puts this stage's end state (design A)
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

/** `mtu-mismatch`: node 2 `ens1f1` MTU 1500 (active_mtu 1024). */
export function mtuMismatch(_cluster: Cluster): void {
  // not modelled yet
}

/** `link-down`: cable 4 (`ens2f1 ↔ ens2f1`) unplugged. */
export function linkDown(_cluster: Cluster): void {
  // not modelled yet
}
