/**
 * Root commands of the armed network procedures (network.apply, network.mgmt-routes, network.firewall)
 * that survive a lost SSH connection. The procedures read a lost connection as a result (exit null), never
 * an exception; before giving that answer the host is waited for (ctx.awaitHost) and the command's own
 * rule decides what happens next:
 *   - 'repeat': safe to run twice (netplan generate, a snapshot that overwrites, systemctl stop, ufw allow):
 *     it runs again;
 *   - { tookEffect }: not safe to repeat (systemd-run --unit=NAME refuses an existing unit): a check says
 *     whether the first run took effect; if so that counts as success, else it runs again;
 *   - 'report': the change itself (`netplan apply`, detached in its own unit): a lost connection may be
 *     the change cutting the path, which only the procedure's proof (a new connection, the checks) and
 *     the host's rollback timer can settle, so the loss is the answer at once, without waiting.
 */
import type { StepExecContext } from '../../src/engine/types.js';
import { ConnectionLostError, type Command, type RunResult } from '../../src/transport/types.js';

export type AfterLoss = 'repeat' | 'report' | { tookEffect: () => Promise<boolean> };

/** The answers that mean "the connection was lost and the host did not come back" (see isLostResult). */
const lostAnswers = new WeakSet<RunResult>();

/** The answer for a lost connection (also for a command not sent to a host already declared lost). */
export function lostResult(label: string, err: unknown): RunResult {
  const r: RunResult = {
    commandLine: label,
    exitCode: null,
    signal: null,
    stdout: '',
    stderr: (err as Error).message,
    durationMs: 0,
    timedOut: false,
    cancelled: false,
    truncated: false,
  };
  lostAnswers.add(r);
  return r;
}

/** Whether runAcrossLoss answered with a lost connection (not a timeout, a cancel or an exit status). */
export function isLostResult(r: RunResult): boolean {
  return lostAnswers.has(r);
}

export function okResult(label: string, note: string): RunResult {
  return {
    commandLine: label,
    exitCode: 0,
    signal: null,
    stdout: note,
    stderr: '',
    durationMs: 0,
    timedOut: false,
    cancelled: false,
    truncated: false,
  };
}

/** Runs `command` as root on `host` once, and once more after a lost connection when `after` allows it. */
export async function runAcrossLoss(
  ctx: Pick<StepExecContext<unknown>, 'run' | 'awaitHost' | 'note' | 'signal'>,
  host: string,
  label: string,
  command: Command,
  timeoutMs: number,
  after: AfterLoss,
): Promise<RunResult> {
  try {
    return await ctx.run(host, label, command, { sudo: true, timeoutMs });
  } catch (err) {
    if (!(err instanceof ConnectionLostError) || ctx.signal.aborted || after === 'report')
      return lostResult(label, err);
    const back = await ctx.awaitHost(host);
    if (!back.ok) return lostResult(label, err);
    ctx.note(host, `${label}: the connection was lost while it ran; ${host} answers again (${back.detail})`);
    try {
      if (typeof after === 'object' && (await after.tookEffect()))
        return okResult(label, 'took effect before the connection was lost');
      return await ctx.run(host, label, command, { sudo: true, timeoutMs });
    } catch (again) {
      return lostResult(label, again);
    }
  }
}
