/**
 * Real OpenSSH: the server cuts the connection (its session process for our user is killed) while a command
 * runs → that run rejects with TransportError; the next run reconnects and works (issue 7).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { TransportError, type HostConnectionState } from '../../src/transport/types.js';
import { listProcesses, processTree, startSshd, uidOf, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let host: SshHost;
let uid: number;
const leftovers: number[] = [];

beforeAll(async () => {
  sshd = await startSshd();
  host = new SshHost(sshd.hostOptions(sshd.users.nopw));
  uid = uidOf(sshd.users.nopw);
});

afterAll(async () => {
  await host?.close();
  // The command outlives its cut connection (nothing signals it); end exactly the one we started.
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await sshd?.stop();
});

describe('real sshd: a connection the server cuts', () => {
  it('rejects the running command with TransportError, then reconnects for the next one', async () => {
    const states: HostConnectionState[] = [];
    host.onStateChange((s) => states.push(s));
    await host.connect();
    const run = host.run({ argv: ['sleep', '310'] });
    run.catch(() => undefined); // awaited below; the rejection must not count as unhandled meanwhile
    await waitFor(
      () => listProcesses().some((p) => p.uid === uid && p.args === 'sleep 310'),
      'sleep 310 to run on the server',
    );
    leftovers.push(
      ...listProcesses()
        .filter((p) => p.uid === uid && p.args === 'sleep 310')
        .map((p) => p.pid),
    );

    // Our user's sshd process of this server (not of another test file's sshd): "sshd: l20t-nopw@notty".
    const session = processTree(sshd.pid).filter((p) => p.uid === uid && p.args.startsWith('sshd'));
    expect(session).toHaveLength(1);
    process.kill(session[0]!.pid, 'SIGKILL');

    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toMatch(/connection to 127\.0\.0\.1:\d+ lost.* while running `LC_ALL=C sleep 310`/);
    expect(states).toContain('lost');

    const next = await host.run({ argv: ['id', '-un'] });
    expect(next).toMatchObject({ exitCode: 0, stdout: `${sshd.users.nopw}\n` });
    expect(states.slice(-2)).toEqual(['connecting', 'connected']);
    // Two logins in sshd's log: the first connection and the reconnect.
    expect(sshd.readLog().match(/^Accepted publickey for l20t-nopw /gm)).toHaveLength(2);
  });
});
