/**
 * A quick command's exit status is never lost (found by the sshd fuzz): ssh2 parses every packet of one TCP
 * read at once, so the exec reply, the output, `exit-status` and the close of a fast command can arrive
 * together, before the run has attached its listeners. 400 quick commands, 10 at a time, must all report
 * exit 0 (or their own code).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';

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

describe('real sshd: quick commands', () => {
  it('400 quick commands each report their own exit code', async () => {
    const codes: Array<number | null> = [];
    for (let wave = 0; wave < 40; wave++) {
      const runs = Array.from({ length: 10 }, (_, i) =>
        host.run({ argv: ['sh', '-c', `printf %s ${'x'.repeat(4000)}; exit ${(wave * 10 + i) % 3}`] }),
      );
      for (const r of await Promise.all(runs)) codes.push(r.exitCode);
    }
    expect(codes.map((c, i) => (c === i % 3 ? 'ok' : `#${i}: ${c}`)).filter((x) => x !== 'ok')).toEqual([]);
  }, 120_000);
});
