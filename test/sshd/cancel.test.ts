/**
 * Real OpenSSH: cancelling a run ("Ctrl-C") or its timeout ends the whole remote process group, checked on
 * the server: the command's processes are gone from /proc (issue 7).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { listProcesses, startSshd, uidOf, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let host: SshHost;
let uid: number;

beforeAll(async () => {
  sshd = await startSshd();
  host = new SshHost(sshd.hostOptions(sshd.users.nopw));
  uid = uidOf(sshd.users.nopw);
});

afterAll(async () => {
  await host?.close();
  await sshd?.stop();
});

/** Pids of processes whose argv is exactly one of `argsList`, run by `owner`. */
function pidsOf(owner: number, argsList: readonly string[]): number[] {
  return listProcesses()
    .filter((p) => p.uid === owner && argsList.includes(p.args))
    .map((p) => p.pid);
}

describe('real sshd: cancellation and timeouts', () => {
  it('abort: resolves cancelled and the command, its child and its background job are gone on the server', async () => {
    const sleeps = ['sleep 300', 'sleep 301'];
    const ac = new AbortController();
    const run = host.run({ argv: ['bash', '-c', 'sleep 300 & sleep 301; wait'] }, { signal: ac.signal });
    await waitFor(() => pidsOf(uid, sleeps).length === 2, 'both sleeps to run on the server');
    const pids = pidsOf(uid, sleeps);
    const bash = listProcesses().filter((p) => p.uid === uid && p.args.startsWith('bash -c sleep 300 &'));
    expect(bash).toHaveLength(1);

    ac.abort();
    const r = await run;
    expect(r).toMatchObject({ cancelled: true, timedOut: false });
    await waitFor(() => listProcesses().every((p) => ![...pids, ...bash.map((b) => b.pid)].includes(p.pid)), 'the sleeps and their bash to exit', 10_000);
    expect(pidsOf(uid, sleeps)).toEqual([]);
    // The connection is still good for the next command.
    expect((await host.run({ argv: ['echo', 'still here'] })).stdout).toBe('still here\n');
  });

  it('timeout: timedOut after ~500 ms and the process is gone on the server', async () => {
    const started = Date.now();
    const run = host.run({ argv: ['bash', '-c', 'sleep 302 & sleep 303; wait'] }, { timeoutMs: 500 });
    await waitFor(() => pidsOf(uid, ['sleep 302', 'sleep 303']).length === 2, 'both sleeps to run on the server');
    const r = await run;
    expect(r).toMatchObject({ timedOut: true, cancelled: false });
    expect(Date.now() - started).toBeLessThan(10_000);
    await waitFor(() => pidsOf(uid, ['sleep 302', 'sleep 303']).length === 0, 'the timed-out sleeps to exit', 10_000);
  });

  it('abort under sudo: sudo passes the TERM on and the root command is gone', async () => {
    const ac = new AbortController();
    const run = host.run({ argv: ['sleep', '304'] }, { sudo: true, signal: ac.signal });
    await waitFor(() => pidsOf(0, ['sleep 304']).length === 1, 'the root sleep to run on the server');
    ac.abort();
    expect(await run).toMatchObject({ cancelled: true });
    await waitFor(() => pidsOf(0, ['sleep 304']).length === 0, 'the root sleep to exit', 10_000);
  });
});
