/**
 * Stage 4, `network` (docs/STAGES.md §2, §3.4): the fabric addressing of the chosen design (A by default),
 * MTU, bonds and their RoCE LAG, netplan hygiene, reachability on every cable and the firewall —
 * written as one netplan file and applied under a timed remote rollback, never with `netplan try`.
 */
import type { ClusterRunContext, StageDef } from '../../src/engine/types.js';
import { networkHostChecks } from './checks-host.js';
import { networkPairChecks } from './checks-pair.js';
import { collectNetwork, type NetworkFacts } from './facts.js';
import { firewallStep } from './firewall.js';
import { networkProbes } from './probes.js';
import { proveReachability, type ReachCluster } from './reach.js';
import { networkSteps } from './steps.js';

export const networkStage: StageDef<NetworkFacts, ReachCluster> = {
  id: 'network',
  title: 'fabric addressing, MTU, bonds, firewall',
  purpose:
    "Writes the chosen design (A: one /24 per cable, MTU 9000) as /etc/netplan/60-l20-fabric.yaml, applies it under a rollback timer armed on every host, and proves every cable both ways with jumbo frames over a new SSH connection. The tutorial's 4-port balance-xor bond forms no RoCE LAG (R16), is refused by `netplan try` (R22) and survives `netplan apply` (R23); disabling the firewall exposes Ray and vLLM (R48).",
  probes: networkProbes,
  collect: collectNetwork,
  cluster: (ctx: ClusterRunContext<NetworkFacts>) => proveReachability(ctx.facts, ctx.run, ctx.config),
  checks: [...networkHostChecks, ...networkPairChecks],
  steps: [...networkSteps, firewallStep],
};
