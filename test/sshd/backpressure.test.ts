/**
 * Output backpressure against real OpenSSH (issue 8): while whoever takes a command's output is behind (the
 * session log), the run withholds the channel's SSH window, so the remote command blocks writing instead of
 * our memory growing; once released, every byte arrives in order and the command ends normally.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { blockedWriting, written } from '../helpers/processes.js';
import { startSshd, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let host: SshHost;

beforeAll(async () => {
  sshd = await startSshd();
  host = new SshHost(sshd.hostOptions(sshd.users.nopw));
});
afterAll(async () => {
  await host?.close();
  await sshd?.stop();
});

describe('real sshd: output backpressure', () => {
  it('holds a 4,000,000-line stream at the SSH window while its consumer is behind, then delivers every line in order', async () => {
    const total = 4_000_000; // 30.9 MB of output
    let pid = 0;
    let received = 0;
    let next = 1;
    let partial = '';
    let disorder = '';
    let holding = true;
    let asked = 0;
    let release!: () => void;
    const behind = new Promise<void>((r) => (release = r));
    const run = host.run(
      { argv: ['sh', '-c', `echo $$ >&2; exec seq 1 ${total}`] },
      {
        onStderr: (t) => {
          pid ||= Number(t.trim());
        },
        onStdout: (t) => {
          received += t.length;
          const lines = (partial + t).split('\n');
          partial = lines.pop() ?? '';
          for (const l of lines) {
            if (Number(l) !== next && !disorder) disorder = `line ${next} came as ${JSON.stringify(l)}`;
            next++;
          }
        },
        backpressure: () => {
          asked++;
          return holding ? behind : undefined;
        },
        maxBufferBytes: 4096,
        timeoutMs: 120_000,
      },
    );
    // Held: seq stops, asleep writing into sshd's pipe, having written nothing more between two looks.
    let last = -2;
    await waitFor(() => {
      const w = pid > 0 ? written(pid) : -1;
      const stable = w === last && w > 0 && blockedWriting(pid);
      last = w;
      return stable;
    }, 'the remote command to block writing while its output is held back');
    // The window's worth (2 MiB) and what was in flight arrived; the other ~29 MB wait on the server.
    expect(received).toBeLessThan(8 * 1024 * 1024);
    expect(written(pid)).toBeLessThan(16 * 1024 * 1024);
    expect(asked).toBeGreaterThan(0);
    holding = false;
    release();
    const r = await run;
    expect(r).toMatchObject({ exitCode: 0, timedOut: false, cancelled: false });
    expect(disorder).toBe('');
    expect(next - 1).toBe(total);
    expect(r.stdout.endsWith(`${total}\n`)).toBe(true);
  }, 180_000);
});
