/**
 * rebootAndWait: a reboot request whose connection is lost before it reached the host looks like a reboot
 * from here. The host answering with its old boot id after `reissueMs` gets the request again.
 */
import { describe, expect, it } from 'vitest';
import { rebootAndWait } from '../../src/engine/reboot.js';
import type { HostRunner } from '../../src/engine/types.js';
import type { Command, Host, RunResult } from '../../src/transport/types.js';

const result = (stdout: string, exitCode: number | null): RunResult =>
  ({ stdout, stderr: '', exitCode, signal: null, durationMs: 1, timedOut: false, cancelled: false }) as RunResult;

/** A host that reboots on the `lostRequests + 1`-th request; the first ones are lost before they run. */
function machine(lostRequests: number) {
  let bootId = 'boot-1';
  let requests = 0;
  const answer = (c: Command): RunResult => {
    const argv = 'argv' in c ? c.argv : [];
    if (argv.join(' ') === 'cat /proc/sys/kernel/random/boot_id') return result(`${bootId}\n`, 0);
    if (argv.join(' ') === 'systemctl reboot') {
      requests += 1;
      if (requests > lostRequests) bootId = `boot-${requests + 1}`;
      return result('', null);
    }
    return result('', 127);
  };
  const host = {
    name: 'n1',
    connect: async () => undefined,
    run: async (c: Command) => answer(c),
  } as unknown as Host;
  const run: HostRunner = async (_h, _label, c) => answer(c);
  return { host, run, requests: () => requests };
}

describe('rebootAndWait', () => {
  it('sends the reboot again while the host still answers with its old boot id, then sees the new one', async () => {
    const m = machine(1);
    const r = await rebootAndWait(m.host, m.run, { timeoutMs: 5_000, pollMs: 10, reissueMs: 50 });
    expect(r.ok, r.detail).toBe(true);
    expect(r.detail).toMatch(/back after \d+ s with boot id boot-3/);
    expect(m.requests()).toBe(2);
  });

  it('one request is enough when the host reboots on it', async () => {
    const m = machine(0);
    const r = await rebootAndWait(m.host, m.run, { timeoutMs: 5_000, pollMs: 10, reissueMs: 50 });
    expect(r.ok, r.detail).toBe(true);
    expect(m.requests()).toBe(1);
  });

  it('a host that never reboots is reported with the requests it ignored, within the limit', async () => {
    const m = machine(1_000);
    const r = await rebootAndWait(m.host, m.run, { timeoutMs: 1_000, pollMs: 10, reissueMs: 50 });
    expect(r.ok).toBe(false);
    expect(m.requests()).toBeGreaterThan(2);
    expect(r.detail).toBe(
      `n1 did not come back within 1 s: still the old boot id after ${m.requests()} reboot request(s)`,
    );
  });
});
