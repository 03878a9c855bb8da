/**
 * Scenario parts for the rdma-link stage (STAGES.md §4.4): `ready` puts this stage's end state (design A)
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

/** `wrong-gid`: node 2 `ens1f0` got an IPv6 ULA before its IPv4 (v2 IPv4 GID at index 5, not 3) and both /etc/nccl.conf pin NCCL_IB_GID_INDEX=3. */
export function wrongGid(_cluster: Cluster): void {
  // not modelled yet
}
