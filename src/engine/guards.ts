/** Which of a step's guard checks keep it from being skipped on a host. */
import type { CheckResult, StepDef } from './types.js';

/** Guard checks that do not pass on this host (a failing pair check counts for every host). */
export function failingGuards(step: StepDef<unknown>, results: readonly CheckResult[], host: string): CheckResult[] {
  return results.filter(
    (r) =>
      step.guards.includes(r.id) && (r.host === host || r.host === null) && r.status !== 'pass' && r.status !== 'skip',
  );
}
