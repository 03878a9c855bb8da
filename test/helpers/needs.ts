/**
 * What the engine says for a check before evaluating it: the "cannot tell" verdict when a probe the check
 * needs could not be read on the host (tool missing, sudo refused, no unit manager), else undefined.
 */
import { cannotTellVerdict, unreadableNeeds } from '../../src/engine/probe-health.js';
import type { StageDef, Verdict } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';

export function unreadableVerdict(
  stage: StageDef<any, any>, checkId: string, outputs: Readonly<Record<string, RunResult>>, host = 'l20-n1',
): Verdict | undefined {
  const check = stage.checks.find((c) => c.id === checkId);
  if (!check) throw new Error(`${stage.id} has no check ${checkId}`);
  const problems = unreadableNeeds(stage.probes, check.needs, outputs);
  return problems.length > 0 ? cannotTellVerdict(problems, host) : undefined;
}
