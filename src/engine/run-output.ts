/**
 * Non-interactive output for the same events the TUI shows: plain lines when stdout is not a TTY,
 * and the version-1 JSON report of docs/DESIGN.md for --json.
 */
import type { EngineEvent } from './events.js';
import type { StageOutcome } from './runner.js';
import { worstStatus, type CheckResult, type CheckStatus } from './types.js';
import { withoutSudoWrapper } from '../transport/quote.js';

export interface Painter {
  status(s: CheckStatus, text: string): string;
  dim(text: string): string;
}

export function painter(color: boolean): Painter {
  const codes: Record<CheckStatus, string> = { pass: '32', warn: '33', fail: '31', error: '35', skip: '90' };
  return {
    status: (s, t) => (color ? `\u001b[${codes[s]}m${t}\u001b[0m` : t),
    dim: (t) => (color ? `\u001b[2m${t}\u001b[0m` : t),
  };
}

/** Plain line reporter: `[host] $ command`, `[host] exit 0 (12ms)`, `[host] PASS id  summary`. */
export function plainReporter(
  write: (line: string) => void,
  paint: Painter,
  verbose: boolean,
): (e: EngineEvent) => void {
  return (e) => {
    switch (e.type) {
      case 'host.state':
        if (e.state === 'failed' || e.state === 'lost')
          write(`[${e.host}] ${e.state}${e.detail ? `: ${e.detail}` : ''}`);
        else if (verbose) write(paint.dim(`[${e.host}] ${e.state}`));
        break;
      case 'stage.state':
        if (e.state === 'running') write(`== stage ${e.stage}`);
        break;
      case 'cmd.start':
        if (verbose)
          write(
            paint.dim(
              `[${e.host}] $ ${withoutSudoWrapper(e.commandLine)}${e.reusedFrom !== undefined ? `   (output of ${e.reusedFrom}, not run again)` : ''}`,
            ),
          );
        break;
      case 'cmd.output':
        if (verbose)
          for (const l of e.lines) write(paint.dim(`[${e.host}] ${e.stream === 'stderr' ? '! ' : '  '}${l}`));
        break;
      case 'cmd.exit':
        if (verbose)
          write(paint.dim(`[${e.host}] exit ${e.exitCode ?? (e.timedOut ? 'timeout' : 'none')} (${e.durationMs}ms)`));
        break;
      case 'check.result': {
        const r = e.result;
        write(
          `[${r.host ?? 'cluster'}] ${paint.status(r.status, r.status.toUpperCase().padEnd(5))} ${r.id}  ${r.summary}${r.rule ? ` (${r.rule})` : ''}`,
        );
        if (r.status !== 'pass' && r.status !== 'skip' && r.fix)
          write(`${' '.repeat((r.host ?? 'cluster').length + 3)}fix: ${r.fix}`);
        break;
      }
      case 'step.start':
        write(`[${e.host}] ▶ ${e.step} (${e.danger})`);
        break;
      case 'step.note':
        write(`[${e.host ?? 'cluster'}] ${e.line}`);
        break;
      case 'step.result': {
        const r = e.result;
        const label = { planned: 'PLAN', applied: 'DONE', skipped: 'SKIP', failed: 'FAIL' }[r.status];
        const paintAs =
          r.status === 'failed' ? 'fail' : r.status === 'applied' ? 'pass' : r.status === 'planned' ? 'warn' : 'skip';
        if (r.status === 'skipped' && !verbose) break;
        write(`[${r.host ?? 'cluster'}] ${paint.status(paintAs, label.padEnd(5))} ${r.id}  ${r.summary}`);
        if (r.status === 'planned') for (const c of r.commands) write(`    ${c.split('\n').join('\n    ')}`);
        if (r.status === 'planned' && r.diff) for (const l of r.diff.split('\n')) if (l !== '') write(`    ${l}`);
        if (r.error) for (const l of r.error.split('\n')) write(`    ${l}`);
        break;
      }
      case 'timer.armed': // for the crash journal; the step's note says it is armed
      case 'engine.idle':
        break;
      default: {
        const never: never = e;
        throw new Error(`unhandled event ${JSON.stringify(never)}`);
      }
    }
  };
}

export interface JsonReport {
  version: 1;
  hosts: Array<{ name: string; address: string }>;
  stages: Array<{
    id: string;
    status: CheckStatus;
    changed: number;
    checks: Array<Omit<CheckResult, 'stage'>>;
    steps: unknown[];
    /** Present when the apply was cancelled: its checks were read before the cancel, not verified. */
    cancelled?: true;
  }>;
  summary: Record<CheckStatus | 'changed', number>;
}

export function jsonReport(hosts: Array<{ name: string; address: string }>, outcomes: StageOutcome[]): JsonReport {
  const summary = { pass: 0, warn: 0, fail: 0, error: 0, skip: 0, changed: 0 };
  const stages = outcomes.map((o) => {
    for (const r of o.results) summary[r.status]++;
    return {
      id: o.stage,
      status: worstStatus(o.results.map((r) => r.status)),
      changed: o.changed ?? 0,
      checks: o.results.map(({ stage: _stage, ...rest }) => ({
        ...rest,
        fix: rest.fix ?? '',
        rule: rest.rule ?? null,
      })) as Array<Omit<CheckResult, 'stage'>>,
      steps: (o.steps ?? []).map(({ stage: _stage, ...rest }) => rest),
      ...(o.cancelled ? { cancelled: true as const } : {}),
    };
  });
  summary.changed = outcomes.reduce((n, o) => n + (o.changed ?? 0), 0);
  return { version: 1, hosts, stages, summary };
}

/**
 * 0 all passed (warn and skip allowed), 1 a check or step failed or the apply was cancelled, 2 a host could
 * not be reached or probed.
 */
export function exitCodeFor(outcomes: StageOutcome[]): number {
  const all = outcomes.flatMap((o) => o.results);
  if (all.some((r) => r.status === 'error')) return 2;
  if (all.some((r) => r.status === 'fail')) return 1;
  if (outcomes.some((o) => o.cancelled || o.steps?.some((s) => s.status === 'failed'))) return 1;
  return 0;
}

/**
 * How an apply's checks stand, for its summary line. After a cancel nothing was verified: the checks shown
 * were read before the steps ran (or skipped by the cancel), so the line says so and claims nothing.
 */
export function verificationText(outcomes: readonly StageOutcome[]): string {
  if (outcomes.some((o) => o.cancelled)) {
    return "cancelled: not verified (apply again: it starts from each host's state)";
  }
  const notPass = outcomes.flatMap((o) => o.results).filter((r) => r.status === 'fail' || r.status === 'error').length;
  return `verification: ${notPass === 0 ? 'every check passes or warns' : `${notPass} check(s) fail`}`;
}
