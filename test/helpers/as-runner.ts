/**
 * A host check's verdict as the stage runner gives it: "cannot tell" when a probe the check needs could not
 * be read (a tool missing, sudo refused, no unit manager), else the check's own verdict through the guard.
 */
import { cannotTellVerdict, unreadableNeeds } from '../../src/engine/probe-health.js';
import type { HostCheckDef, ProbeDef, StageContext, Verdict } from '../../src/engine/types.js';
import { groundedVerdict } from '../../src/engine/verdict-guard.js';
import type { RunResult } from '../../src/transport/types.js';

export function hostVerdictAsRun<F>(
  probes: readonly ProbeDef[],
  check: HostCheckDef<F>,
  results: Readonly<Record<string, RunResult>>,
  collect: (results: Readonly<Record<string, RunResult>>) => F,
  host: string,
  ctx: StageContext,
): Verdict {
  const problems = unreadableNeeds(probes, check.needs, results);
  if (problems.length > 0) return cannotTellVerdict(problems, host);
  return groundedVerdict(check.evaluate(collect(results), host, ctx));
}
