/**
 * Root commands of the armed network procedures (network.apply, network.mgmt-routes, network.firewall)
 * that survive a lost SSH connection. The procedures read a lost connection as a result (exit null), never
 * an exception; before giving that answer the host is waited for (ctx.awaitHost) and the command's own
 * rule decides what happens next:
 *   - 'repeat': safe to run twice (netplan generate, a snapshot that overwrites, systemctl stop, ufw allow):
 *     it runs again;
 *   - { tookEffect }: not safe to repeat (systemd-run --unit=NAME refuses an existing unit): a check says
 *     whether the first run took effect; if so that counts as success, else it runs again;
 *   - { settle }: started detached (systemd-run --wait of `netplan apply`): it goes on without the
 *     session, so the procedure waits for it to settle and then proves the result as usual.
 */
import type { StepExecContext } from '../../src/engine/types.js';
import { ConnectionLostError, type Command, type RunResult } from '../../src/transport/types.js';

export type AfterLoss = 'repeat' | { tookEffect: () => Promise<boolean> } | { settle: () => Promise<void> };

function lostResult(label: string, err: unknown): RunResult {
  return { commandLine: label, exitCode: null, signal: null, stdout: '', stderr: (err as Error).message, durationMs: 0, timedOut: false, cancelled: false, truncated: false };
}

export function okResult(label: string, note: string): RunResult {
  return { commandLine: label, exitCode: 0, signal: null, stdout: note, stderr: '', durationMs: 0, timedOut: false, cancelled: false, truncated: false };
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
    if (!(err instanceof ConnectionLostError) || ctx.signal.aborted) return lostResult(label, err);
    const back = await ctx.awaitHost(host);
    if (!back.ok) return lostResult(label, err);
    ctx.note(host, `${label}: the connection was lost while it ran; ${host} answers again (${back.detail})`);
    try {
      if (typeof after === 'object' && 'settle' in after) {
        await after.settle();
        return okResult(label, 'ran detached from the lost session; settled');
      }
      if (typeof after === 'object' && (await after.tookEffect())) return okResult(label, 'took effect before the connection was lost');
      return await ctx.run(host, label, command, { sudo: true, timeoutMs });
    } catch (again) {
      return lostResult(label, again);
    }
  }
}
