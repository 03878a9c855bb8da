/** Real OpenSSH: SshHost logs in with a key file and through ssh-agent (issue 7). */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { TransportError } from '../../src/transport/types.js';
import { startSshd, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
const hosts: SshHost[] = [];

beforeAll(async () => {
  sshd = await startSshd();
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
});

function acceptedLines(log: string, user: string): string[] {
  return log.split('\n').filter((l) => l.startsWith(`Accepted publickey for ${user} from 127.0.0.1`));
}

describe('real sshd: authentication', () => {
  it('logs in with an identity file and runs commands as that user', async () => {
    const host = new SshHost(sshd.hostOptions(sshd.users.nopw));
    hosts.push(host);
    await host.connect();
    const r = await host.run({ argv: ['id', '-un'] });
    expect(r).toMatchObject({ exitCode: 0, stdout: `${sshd.users.nopw}\n`, stderr: '' });
    expect(r.commandLine).toBe('LC_ALL=C id -un');
    // sshd says which key it accepted: the harness's client key, by its fingerprint.
    const clientFp = execFileSync('ssh-keygen', ['-lf', `${sshd.clientKeyPath}.pub`], { encoding: 'utf8' }).split(
      /\s+/,
    )[1];
    expect(acceptedLines(sshd.readLog(), sshd.users.nopw)).toEqual([
      expect.stringContaining(` ssh2: ED25519 ${clientFp}`),
    ]);
  });

  describe('through ssh-agent', () => {
    let agentDir: string;
    let agent: ChildProcess;
    let sock: string;

    beforeAll(async () => {
      agentDir = mkdtempSync(join(tmpdir(), 'l20-agent-'));
      sock = join(agentDir, 'agent.sock');
      // -D: stay in the foreground as our child, so we end exactly this agent afterwards.
      agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
      await waitFor(() => existsSync(sock), 'ssh-agent to create its socket');
      execFileSync('ssh-add', [sshd.clientKeyPath], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'pipe' });
    });

    afterAll(async () => {
      if (agent.pid !== undefined && agent.exitCode === null) {
        const exited = new Promise((r) => agent.once('exit', r));
        agent.kill('SIGTERM');
        await exited;
      }
      rmSync(agentDir, { recursive: true, force: true });
    });

    it('logs in with the key the agent holds, no key file given', async () => {
      const listed = execFileSync('ssh-add', ['-l'], {
        env: { ...process.env, SSH_AUTH_SOCK: sock },
        encoding: 'utf8',
      });
      expect(listed).toContain('l20t-sshd-client');
      const before = acceptedLines(sshd.readLog(), sshd.users.pw).length;
      const host = new SshHost(sshd.hostOptions(sshd.users.pw, { identityFiles: [], agent: sock }));
      hosts.push(host);
      const r = await host.run({ argv: ['id', '-un'] });
      expect(r).toMatchObject({ exitCode: 0, stdout: `${sshd.users.pw}\n` });
      expect(acceptedLines(sshd.readLog(), sshd.users.pw).length).toBe(before + 1);
    });

    it('fails with a clear TransportError when neither the agent nor a file has an accepted key', async () => {
      execFileSync('ssh-add', ['-D'], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'pipe' });
      const host = new SshHost(
        sshd.hostOptions(sshd.users.nopw, { identityFiles: [], agent: sock, readyTimeoutMs: 15_000 }),
      );
      hosts.push(host);
      const err = await host.connect().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as Error).message).toMatch(
        /cannot connect to l20t-nopw@127\.0\.0\.1:\d+: .*authentication methods failed/,
      );
    });
  });
});
