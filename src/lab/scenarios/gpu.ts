/**
 * Scenario parts for the gpu-driver and gpudirect stage (STAGES.md §4.4): `ready` puts this stage's end state (design A)
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

/** `no-peermem`: DOCA-OFED with the proprietary driver flavour, nvidia-peermem neither loaded nor in modules-load.d: no GDR path. */
export function noPeermem(_cluster: Cluster): void {
  // not modelled yet
}

/** `acs-enabled`: node 1's downstream ports above GPUs and NIC 1 have `ACSCtl: SrcValid+`. */
export function acsEnabled(_cluster: Cluster): void {
  // not modelled yet
}

/** `driver-mismatch`: node 2 runs a 570.x open driver, node 1 580.x. */
export function driverMismatch(_cluster: Cluster): void {
  // not modelled yet
}
