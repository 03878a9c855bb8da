/**
 * Stage 11, `vllm` (docs/STAGES.md §3.11): the model on every host, the layout advisor, flags the installed
 * vLLM accepts, the API on the management address with a key, units on both hosts, /health, and a
 * reproducible `vllm bench serve`. The tutorial's nonexistent model, TP 16 over 25GbE, removed flags
 * and open API are what it replaces.
 */
import type { StageDef } from '../../src/engine/types.js';
import { vllmHostChecks } from './checks.js';
import { collectVllm, type VllmFacts } from './facts.js';
import { vllmClusterRun, vllmPairChecks, type VllmCluster } from './pair-checks.js';
import { vllmProbes } from './probes.js';
import { vllmSteps } from './steps.js';

export const vllmStage: StageDef<VllmFacts, VllmCluster> = {
  id: 'vllm',
  title: 'model, layout, serve units, health, benchmark',
  purpose:
    "Serve the configured model with the layout the advisor derives from its size and the L20s' memory: an 8B model fits one GPU, so 16 data-parallel engines (no Ray, no all-reduce over 25GbE), not the tutorial's TP 16 of a model that does not exist. Units on both hosts, the API on the management address behind an API key, then a benchmark with its full workload stated.",
  probes: vllmProbes,
  collect: collectVllm,
  cluster: vllmClusterRun,
  checks: [vllmPairChecks[0], vllmPairChecks[1], ...vllmHostChecks, vllmPairChecks[2], vllmPairChecks[3]],
  steps: vllmSteps,
};
