/**
 * From a check the operator is looking at to the symptom that explains it: the TUI's `T` key on a
 * check opens the troubleshoot screen on that symptom. Matching is the diagnosis's own (match.ts: a
 * cause names its checks by id, and by rule where both are given), so `T` on qos.pair failing with
 * R26 lands on the PFC symptom, and on rdma-link.bw failing with R24 on the MTU one.
 */
import type { CheckResult } from '../engine/types.js';
import { SYMPTOMS } from '../../checks/troubleshoot/symptoms.js';
import { looksAt, matchesCause } from './match.js';
import type { SymptomDef } from './types.js';

/**
 * The symptom whose causes read this check: one a cause would report with the check's status first,
 * else one that merely looks at the check; catalog order breaks ties. Undefined when none reads it.
 */
export function symptomForCheck(
  check: CheckResult,
  symptoms: readonly SymptomDef[] = SYMPTOMS,
): SymptomDef | undefined {
  return (
    symptoms.find((s) => s.causes.some((c) => matchesCause(c, check))) ??
    symptoms.find((s) => s.causes.some((c) => looksAt(c, check)))
  );
}

export function symptomIdForCheck(check: CheckResult): string | undefined {
  return symptomForCheck(check)?.id;
}
