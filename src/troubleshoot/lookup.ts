/**
 * From a check the operator is looking at to the symptom that explains it: the TUI's `T` key on a
 * failing check opens the troubleshoot screen on that symptom. A cause names the checks it reads by
 * id prefix (or by rule id); the longest prefix wins, so `qos.pair` finds the PFC symptom before a
 * symptom that only names the whole `qos` stage.
 */
import type { CheckResult } from '../engine/types.js';
import type { SymptomDef } from './types.js';

/** How well one cause matches the check: the length of its longest matching check prefix, a rule match just above nothing. */
function score(check: Pick<CheckResult, 'id' | 'rule'>, symptom: SymptomDef): number {
  let best = 0;
  for (const cause of symptom.causes) {
    for (const prefix of cause.when.checks ?? []) {
      if (check.id.startsWith(prefix)) best = Math.max(best, prefix.length + 1);
    }
    // A rule the cause is recognised by counts more than one it merely cites.
    if (check.rule !== undefined && (cause.when.rules ?? []).includes(check.rule)) best = Math.max(best, 1);
    if (check.rule !== undefined && cause.rules.includes(check.rule)) best = Math.max(best, 0.5);
  }
  return best;
}

/** The catalog's symptom whose causes read this check (catalog order breaks ties); undefined when none does. */
export function symptomForCheck(check: Pick<CheckResult, 'id' | 'rule'>, symptoms: readonly SymptomDef[]): SymptomDef | undefined {
  let found: SymptomDef | undefined;
  let best = 0;
  for (const s of symptoms) {
    const n = score(check, s);
    if (n > best) {
      best = n;
      found = s;
    }
  }
  return found;
}
