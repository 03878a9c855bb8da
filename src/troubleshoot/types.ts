/**
 * Troubleshooting as data (issue 6): a symptom the operator sees, the read-only probes that tell its
 * causes apart (the stages' own checks, run on every host), the reasoning from failing checks to a
 * cause with its rule ids, and the fix — the stages whose plan/apply/verify path repairs it.
 * The JSON of `troubleshoot --json` is `TroubleshootReport` (docs/DESIGN.md shape plus status, checks and the
 * side-by-side comparisons the screen draws).
 */
import type { CheckResult, StageId } from '../engine/types.js';

/** One possible cause of a symptom, recognised from the failing checks of its stages. */
export interface CauseDef {
  id: string;
  /**
   * The cause shows when a check whose id starts with one of `checks` (or carries one of `rules`) is not passing.
   * Given both, a check must match both (qos.pair with R26 is PFC, with R08 trust); statuses default to fail and warn.
   */
  when: { checks?: readonly string[]; rules?: readonly string[]; statuses?: ReadonlyArray<'fail' | 'warn' | 'error'> };
  /** What is wrong, for the operator (one sentence). */
  cause: string;
  rules: readonly string[];
  /** What fixes it, in words; the fix itself is the symptom's fixStages. */
  fix: string;
  /** This cause's repair when it is not the symptom's fixStages (a GID missing for want of an address: network). */
  fixStages?: readonly StageId[];
}

/** Raw outputs to compare host by host (a stage probe's stdout), with the differing lines marked. */
export interface CompareDef {
  stage: StageId;
  probe: string;
  label: string;
  /** Keep only lines matching this regular expression (source text): the ACS lines of a long `lspci -vv`. */
  match?: string;
}

export interface SymptomDef {
  id: string;
  title: string;
  /** How the operator meets it ("all_reduce runs at 1 GB/s; the log says NET/Socket"). */
  observed: string;
  /** Stages whose read-only checks are the probes (run on every host, cluster runs included where `benchmarks`). */
  stages: readonly StageId[];
  /** Run the stages' cluster runs (ib_write_bw, the NCCL all-reduce …) too: slower, but some causes only show there. */
  benchmarks?: boolean;
  /** First match wins: order from the root cause to its consequences. */
  causes: readonly CauseDef[];
  fixStages: readonly StageId[];
  compare?: readonly CompareDef[];
}

export interface Comparison {
  label: string;
  /** Host → the lines it printed. */
  byHost: Record<string, string[]>;
  /** Indexes of lines that are not the same on every host. */
  differing: number[];
  /** Per host, indexes of its lines that another host does not print anywhere (marks by content when line counts differ). */
  differingByHost?: Record<string, number[]>;
}

export interface Diagnosis {
  symptom: string;
  title: string;
  /** found: a cause shows; clear: every probe passes; inconclusive: something fails that no cause explains, or probes errored. */
  status: 'found' | 'clear' | 'inconclusive';
  cause: string | null;
  causeId: string | null;
  rules: string[];
  /** Hosts where it shows (empty for a cluster-wide check). */
  hosts: string[];
  evidence: string;
  fix: string;
  fixStages: StageId[];
  /** The not-passing checks the diagnosis rests on. */
  checks: CheckResult[];
  comparisons: Comparison[];
}

export interface TroubleshootReport {
  version: 1;
  diagnoses: Diagnosis[];
}
