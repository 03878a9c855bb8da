/**
 * Reboot a host and wait for it (docs/STAGES.md §1): read the boot id, ask systemd to reboot, then poll with
 * new connections (soon at first, then every `pollMs`) until SSH answers with a different
 * `/proc/sys/kernel/random/boot_id` (limit 15 min).
 * The reboot command itself usually loses its connection; that is expected, not a failure. But a connection
 * lost before the command reached the host looks the same, so while the host still answers with the old boot
 * id the request is sent again every `reissueMs` (a second request during a shutdown changes nothing).
 */
import type { Host } from '../transport/types.js';
import type { HostRunner } from './types.js';

/** The first poll's delay after the reboot request; each later one doubles, up to `pollMs`. */
const FIRST_POLL_MS = 100;

const BOOT_ID = { argv: ['cat', '/proc/sys/kernel/random/boot_id'] } as const;

export async function rebootAndWait(
  host: Host,
  run: HostRunner,
  options: { timeoutMs: number; pollMs?: number; reissueMs?: number },
): Promise<{ ok: boolean; detail: string }> {
  const before = await run(host.name, 'boot-id', BOOT_ID);
  const oldId = before.stdout.trim();
  if (before.exitCode !== 0 || oldId === '')
    return { ok: false, detail: `could not read the boot id before rebooting (exit ${before.exitCode})` };
  const requestReboot = async (): Promise<void> => {
    try {
      await run(host.name, 'reboot', { argv: ['systemctl', 'reboot'] }, { sudo: true, timeoutMs: 30_000 });
    } catch {
      // the connection dropping under the command is how a reboot looks from here
    }
  };
  await requestReboot();
  const started = Date.now();
  const pollMs = options.pollMs ?? 2000;
  const reissueMs = options.reissueMs ?? 30_000;
  let requestedAt = started;
  let requests = 1;
  let last = 'no answer yet';
  // The first polls come quickly and back off to pollMs: a host that reboots fast (a VM, the lab) is seen back at
  // once, and a slow one is asked no more often than every pollMs.
  for (let delay = Math.min(FIRST_POLL_MS, pollMs); Date.now() - started < options.timeoutMs;) {
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, pollMs);
    try {
      await host.connect();
      const now = await host.run(BOOT_ID, { timeoutMs: 10_000 });
      const id = now.stdout.trim();
      if (now.exitCode === 0 && id !== '' && id !== oldId)
        return { ok: true, detail: `back after ${Math.round((Date.now() - started) / 1000)} s with boot id ${id}` };
      if (id === oldId && Date.now() - requestedAt >= reissueMs) {
        requests += 1;
        requestedAt = Date.now();
        await requestReboot();
      }
      last =
        id === oldId
          ? `still the old boot id after ${requests} reboot request(s)`
          : `boot id read failed (exit ${now.exitCode})`;
    } catch (err) {
      last = (err as Error).message;
    }
  }
  return { ok: false, detail: `${host.name} did not come back within ${formatLimit(options.timeoutMs)}: ${last}` };
}

function formatLimit(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}
