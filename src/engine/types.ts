/**
 * Stages and checks as data (checks/ defines them), and the results the engine produces.
 * Nothing here knows about SSH or the UI.
 */
import type { Command, RunResult } from '../transport/types.js';

export const STAGE_IDS = [
  'inventory', 'os', 'nic-stack', 'network', 'qos', 'rdma-link',
  'gpu-driver', 'gpudirect', 'nccl', 'ray', 'vllm',
] as const;
export type StageId = (typeof STAGE_IDS)[number];

export type CheckStatus = 'pass' | 'warn' | 'fail' | 'error' | 'skip';

/** A read-only command every host runs for a stage. */
export interface ProbeDef {
  id: string;
  command: Command;
  /** Run through `sudo -n` ([root] in STAGES.md). */
  sudo?: boolean;
  timeoutMs?: number;
}

export interface Verdict {
  status: CheckStatus;
  /** One line the operator reads first. */
  summary: string;
  /** The exact lines or values the verdict rests on. */
  evidence: string;
  fix?: string;
  rule?: string;
}

/** What a host looks like to a check: its name and the results of the stage's probes. */
export interface ProbeOutputs {
  host: string;
  results: Readonly<Record<string, RunResult>>;
}

export interface HostCheckDef<F> {
  id: string;
  title: string;
  scope: 'host';
  evaluate(facts: F, host: string): Verdict;
}

export interface PairCheckDef<F> {
  id: string;
  title: string;
  scope: 'pair';
  /** Facts of every host, in inventory order. */
  evaluate(facts: ReadonlyArray<{ host: string; facts: F }>): Verdict;
}

export type CheckDef<F> = HostCheckDef<F> | PairCheckDef<F>;

export interface StageDef<F = unknown> {
  id: StageId;
  title: string;
  /** What the stage is for, shown in the stage view. */
  purpose: string;
  probes: readonly ProbeDef[];
  /** Parse the probes' outputs into facts. Must not throw on odd output; record problems in the facts. */
  collect(outputs: ProbeOutputs): F;
  checks: readonly CheckDef<F>[];
}

export interface CheckResult {
  id: string;
  stage: StageId;
  /** null for cluster (pair) checks. */
  host: string | null;
  status: CheckStatus;
  summary: string;
  evidence: string;
  fix?: string;
  rule?: string;
}

export type StageStatus = 'pending' | 'running' | CheckStatus;

/** Worst-first ordering used for roll-ups. */
export const STATUS_RANK: Record<CheckStatus, number> = { error: 4, fail: 3, warn: 2, skip: 1, pass: 0 };

export function worstStatus(statuses: Iterable<CheckStatus>): CheckStatus {
  let worst: CheckStatus = 'pass';
  let any = false;
  for (const s of statuses) {
    any = true;
    if (STATUS_RANK[s] > STATUS_RANK[worst]) worst = s;
  }
  return any ? worst : 'skip';
}
