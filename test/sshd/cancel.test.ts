/**
 * Real OpenSSH: cancelling a run ("Ctrl-C") or its timeout ends the whole remote process group, checked on
 * the server: the command's processes are gone from /proc (issue 7). Under sudo too, where sshd's TERM
 * (sent as the login user) reaches only sudo, which passes it to its direct child: the root processes
 * below it must go as well (the transport's sudo wrapper, src/transport/quote.ts). With the password user
 * (sudo -S) in test/sshd/sudo.test.ts, the one file that may set its password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import type { Command } from '../../src/transport/types.js';
import { isAlive, pidsOf } from '../helpers/processes.js';
import { listProcesses, processTree, startSshd, uidOf, waitFor, type ProcessInfo, type Sshd } from '../helpers/sshd.js';

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
    await waitFor(
      () => listProcesses().every((p) => ![...pids, ...bash.map((b) => b.pid)].includes(p.pid)),
      'the sleeps and their bash to exit',
      10_000,
    );
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

/** What the session runs on the server: every process under sshd but sshd's own (listener and per-connection). */
function sessionProcesses(): ProcessInfo[] {
  return processTree(sshd.pid).filter((p) => p.pid !== sshd.pid && !p.args.startsWith('sshd'));
}

describe('real sshd: cancelling a sudo command ends its root processes too', () => {
  const commands: Array<{ what: string; command: (a: number, b: number) => Command }> = [
    {
      what: "sudo bash -c 'sleep A & sleep B; wait'",
      command: (a, b) => ({ argv: ['bash', '-c', `sleep ${a} & sleep ${b}; wait`] }),
    },
    {
      what: 'a sudo bash -s script that starts a background sleep',
      command: (a, b) => ({ script: `sleep ${a} &\necho "started $!"\nsleep ${b}\n` }),
    },
  ];
  let next = 320;
  for (const stop of ['abort', 'timeout'] as const) {
    for (const c of commands) {
      const [a, b] = [next++, next++];
      it(`${stop}: ${c.what} leaves no process of either user behind`, async () => {
        const sleeps = [`sleep ${a}`, `sleep ${b}`];
        const ac = new AbortController();
        const run = host.run(
          c.command(a, b),
          stop === 'abort' ? { sudo: true, signal: ac.signal } : { sudo: true, timeoutMs: 2000 },
        );
        try {
          await waitFor(() => pidsOf(0, sleeps).length === 2, 'both root sleeps to run on the server');
          // Everything the command runs, by pid: a process that escapes is reparented to init, out of sshd's tree.
          const running = sessionProcesses();
          expect(running.filter((p) => p.uid === uid).map((p) => p.args)).toEqual([
            expect.stringMatching(/^sudo -n -- /),
          ]);
          expect(running.filter((p) => p.uid === 0 && sleeps.includes(p.args))).toHaveLength(2);

          if (stop === 'abort') ac.abort();
          const r = await run;
          expect(r).toMatchObject(
            stop === 'abort' ? { cancelled: true, timedOut: false } : { timedOut: true, cancelled: false },
          );
          await waitFor(
            () => running.every((p) => !isAlive(p.pid)),
            `${running.map((p) => `${p.pid} (${p.args})`).join(', ')} to exit`,
            10_000,
          );
          expect(listProcesses().filter((p) => sleeps.includes(p.args))).toEqual([]);
          expect(sessionProcesses()).toEqual([]);
        } finally {
          // A failing run must not leave 5-minute root sleeps behind.
          for (const p of listProcesses().filter((x) => sleeps.includes(x.args))) process.kill(p.pid, 'SIGKILL');
        }
        expect((await host.run({ argv: ['id', '-u'] }, { sudo: true })).stdout).toBe('0\n');
      });
    }
  }
});
