/**
 * Troubleshooting on live hosts: run the stages the symptoms need once (read-only, every host in
 * parallel, events to the panes as any check run), then diagnose each symptom from the outcomes
 * (match.ts). Cluster runs (ib_write_bw, the all-reduce, pings) run only where a symptom asks for
 * benchmarks, so probing every symptom stays quick; pair checks that compare the hosts' facts
 * (MTU, GID tables, PFC) run either way. The fix is the symptom's stages through the StepExecutor:
 * the same plan/apply/verify path as `apply`.
 */
import type { Engine, StageOutcome } from '../engine/runner.js';
import { StepExecutor, type ApplyOptions } from '../engine/steps.js';
import { STAGE_IDS, type StageId, type AnyStageDef } from '../engine/types.js';
import { stageById } from '../../checks/stages.js';
import { FACT_PAIR_CHECKS } from '../../checks/troubleshoot/symptoms.js';
import { diagnoseSymptom, type StageRun } from './match.js';
import type { Diagnosis, SymptomDef } from './types.js';

export interface DiagnoseOptions {
  /**
   * Cluster runs: true runs them for every stage probed, false for none; by default they run for the
   * stages of symptoms marked `benchmarks`.
   */
  benchmarks?: boolean;
  /** Stops the probes (the engine's cancelAll does too). */
  signal?: AbortSignal;
}

export interface StagePlanEntry {
  stage: StageId;
  cluster: boolean;
}

/** The stages to run for these symptoms, in pipeline order, each once, with or without its cluster run. */
export function stagePlan(symptoms: readonly SymptomDef[], benchmarks?: boolean): StagePlanEntry[] {
  const wanted = new Map<StageId, boolean>();
  for (const s of symptoms) {
    for (const st of s.stages) wanted.set(st, (wanted.get(st) ?? false) || (benchmarks ?? s.benchmarks ?? false));
  }
  return STAGE_IDS.filter((id) => wanted.has(id)).map((stage) => ({ stage, cluster: wanted.get(stage)! }));
}

/** Runs the stages the symptoms need and returns one diagnosis per symptom, in the order given. */
export async function diagnose(
  engine: Engine,
  symptoms: readonly SymptomDef[],
  opts: DiagnoseOptions = {},
): Promise<Diagnosis[]> {
  const runs = await runProbes(engine, stagePlan(symptoms, opts.benchmarks), opts.signal);
  return symptoms.map((s) => diagnoseSymptom(s, runs, engine.context.hosts));
}

/** The probe runs behind a diagnosis (the screen shows their output live through the engine's events). */
export async function runProbes(
  engine: Engine,
  plan: readonly StagePlanEntry[],
  signal?: AbortSignal,
): Promise<StageRun[]> {
  return engine.busyWhile(async (own) => {
    const stop = () => engine.cancelAll();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const runs: StageRun[] = [];
      for (const { stage, cluster } of plan) {
        const def = stageById(stage);
        if (!def) continue;
        if (own.aborted) break;
        const o: StageOutcome = await engine.runStage(def, {
          signal: own,
          skipCluster: !cluster,
          ...(cluster ? {} : { pairChecksWithoutCluster: FACT_PAIR_CHECKS }),
        });
        runs.push({ stage, results: o.results, ...(o.outputs ? { outputs: o.outputs } : {}), cluster });
      }
      return runs;
    } finally {
      signal?.removeEventListener('abort', stop);
    }
  });
}

/** The stage definitions a diagnosis' fix runs, in pipeline order. */
export function fixStageDefs(d: Pick<Diagnosis, 'fixStages'>): AnyStageDef[] {
  return STAGE_IDS.filter((id) => d.fixStages.includes(id))
    .map((id) => stageById(id))
    .filter((s): s is AnyStageDef => s !== undefined);
}

/**
 * Applies a diagnosis' fix (plan only with dryRun: the per-host diffs the screen shows before asking),
 * through the same steps, confirmations, rollback and verification as `apply`.
 */
export function applyFix(
  engine: Engine,
  d: Pick<Diagnosis, 'fixStages'>,
  options: ApplyOptions,
): ReturnType<StepExecutor['applyStages']> {
  return new StepExecutor(engine, options).applyStages(fixStageDefs(d));
}
