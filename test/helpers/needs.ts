/**
 * What the engine says for a check before evaluating it: the "cannot tell" verdict when a probe the check
 * needs could not be read on the host (tool missing, sudo refused, no unit manager), else undefined.
 */
import { cannotTellVerdict, unreadableNeeds } from '../../src/engine/probe-health.js';
import type { Verdict, AnyStageDef } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';

export function unreadableVerdict(
  stage: AnyStageDef,
  checkId: string,
  outputs: Readonly<Record<string, RunResult>>,
  host = 'l20-n1',
): Verdict | undefined {
  const check = stage.checks.find((c) => c.id === checkId);
  if (!check) throw new Error(`${stage.id} has no check ${checkId}`);
  const problems = unreadableNeeds(stage.probes, check.needs, outputs);
  return problems.length > 0 ? cannotTellVerdict(problems, host) : undefined;
}

/** What bash prints for a program that is not on the PATH. */
export const notFoundText = (tool: string): string => `bash: line 1: ${tool}: command not found\n`;

/** A probe whose program is not installed: bash's message, exit 127 (0 when a script carried on). */
export function notFound(tool: string, exitCode = 127, stdout = ''): RunResult {
  return {
    commandLine: tool,
    exitCode,
    signal: null,
    stdout,
    stderr: notFoundText(tool),
    durationMs: 1,
    timedOut: false,
    cancelled: false,
    truncated: false,
  };
}

/** What systemctl prints in a container whose PID 1 is not systemd. */
export const NO_SYSTEMD =
  "System has not been booted with systemd as init system (PID 1). Can't operate.\n" +
  'Failed to connect to bus: Host is down\n';
