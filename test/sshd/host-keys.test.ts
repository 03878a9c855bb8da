/**
 * Real OpenSSH: host key trust on first use, and refusal of a changed key before anything is sent (issue 7).
 * "Nothing sent" is checked on the server: sshd logs every authentication attempt (LogLevel VERBOSE), and a
 * canary `touch` must not have run.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha256 } from '../../src/transport/known-hosts.js';
import { SshHost } from '../../src/transport/ssh.js';
import type { UnknownHostKeyInfo } from '../../src/transport/ssh-options.js';
import { HostKeyError } from '../../src/transport/types.js';
import { startSshd, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let dir: string;
let knownHosts: string;
const hosts: SshHost[] = [];

beforeAll(async () => {
  sshd = await startSshd();
  dir = mkdtempSync(join(tmpdir(), 'l20-hostkeys-'));
  chmodSync(dir, 0o1777); // the canaries are touched by the remote user
  knownHosts = join(dir, 'known_hosts'); // starts absent: the server is unknown
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function makeHost(onUnknownHostKey: (info: UnknownHostKeyInfo) => Promise<boolean>): SshHost {
  const host = new SshHost(sshd.hostOptions(sshd.users.nopw, { knownHostsFiles: [knownHosts], onUnknownHostKey }));
  hosts.push(host);
  return host;
}

/**
 * sshd's view of the connections since `offset` characters of its log: our client reached it and went away
 * during the key exchange ("[preauth]": before any user was authenticated), and no client tried a key or
 * started a session.
 */
async function expectEndedBeforeAuth(offset: number, connections: number): Promise<void> {
  const since = () => sshd.readLog().slice(offset);
  const ended = () => since().match(/^Disconnected from 127\.0\.0\.1 port \d+ \[preauth\]$/gm)?.length ?? 0;
  await waitFor(() => ended() >= connections, `sshd to log ${connections} refused connection(s) ending`);
  expect(ended()).toBe(connections);
  expect(
    since()
      .split('\n')
      .filter((l) => /publickey|Accepted|Starting session|for l20t-/.test(l)),
  ).toEqual([]);
}

describe('real sshd: host keys', () => {
  let oldFingerprint: string;
  let trustingHost: SshHost;

  it('asks about an unknown key with the fingerprint ssh-keygen prints; refusing sends nothing', async () => {
    const asked: UnknownHostKeyInfo[] = [];
    const host = makeHost(async (info) => {
      asked.push(info);
      return false;
    });
    const canary = join(dir, 'canary-refused');
    const offset = sshd.readLog().length;
    const err = await host.run({ argv: ['touch', canary] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err).toMatchObject({ kind: 'unknown', presentedFingerprint: sshd.hostKeyFingerprint });
    // recordIn: the file a yes would write (the TUI's prompt names it).
    expect(asked).toEqual([
      {
        host: '127.0.0.1',
        port: sshd.port,
        fingerprint: sshd.hostKeyFingerprint,
        keyType: 'ssh-ed25519',
        recordIn: knownHosts,
      },
    ]);
    await expectEndedBeforeAuth(offset, 1);
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(knownHosts)).toBe(false);
  });

  it('records a trusted key in known_hosts (0600) and does not ask again on the next connection', async () => {
    oldFingerprint = sshd.hostKeyFingerprint;
    let asked = 0;
    trustingHost = makeHost(async () => {
      asked++;
      return true;
    });
    const canary = join(dir, 'canary-trusted');
    const r = await trustingHost.run({ argv: ['touch', canary] });
    expect(r.exitCode).toBe(0);
    expect(existsSync(canary)).toBe(true); // the canary is real evidence: trusted, it runs
    expect(asked).toBe(1);
    const [keyType, keyBlob] = sshd.hostPublicKeyLine.split(/\s+/);
    expect(readFileSync(knownHosts, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${keyType} ${keyBlob}\n`);
    expect(statSync(knownHosts).mode & 0o777).toBe(0o600);

    const next = makeHost(async () => {
      throw new Error('must not be asked about a recorded key');
    });
    expect((await next.run({ argv: ['id', '-un'] })).stdout).toBe(`${sshd.users.nopw}\n`);
  });

  it('refuses a changed key with both fingerprints named, before authenticating', async () => {
    await sshd.rotateHostKey();
    expect(sshd.hostKeyFingerprint).not.toBe(oldFingerprint);
    const offset = sshd.readLog().length;
    let asked = 0;
    const host = makeHost(async () => {
      asked++;
      return true; // even an operator who would say yes is not asked: a changed key is never a question
    });
    const canary = join(dir, 'canary-changed');

    const err = await host.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err).toMatchObject({
      kind: 'changed',
      presentedFingerprint: sshd.hostKeyFingerprint,
      knownFingerprint: oldFingerprint,
    });
    const message = (err as Error).message;
    expect(message).toContain(sshd.hostKeyFingerprint);
    expect(message).toContain(oldFingerprint);
    expect(message).toContain(`ssh-keygen -R '[127.0.0.1]:${sshd.port}'`);
    // Later runs fail the same way without another attempt.
    await expect(host.run({ argv: ['touch', canary] })).rejects.toBe(err);

    // The host that trusted the old key lost its connection in the restart; reconnecting meets the new key.
    await expect(trustingHost.run({ argv: ['touch', canary] })).rejects.toMatchObject({
      name: 'HostKeyError',
      kind: 'changed',
    });

    expect(asked).toBe(0);
    await expectEndedBeforeAuth(offset, 2);
    expect(existsSync(canary)).toBe(false);
    // known_hosts still holds only the old key: nothing was overwritten.
    expect(readFileSync(knownHosts, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('refuses an ed25519 key when only an RSA key is recorded (a key-type change), never asking', async () => {
    const rsaKey = join(dir, 'recorded_rsa');
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-N', '', '-f', rsaKey]);
    const [rsaType, rsaB64] = readFileSync(`${rsaKey}.pub`, 'utf8').trim().split(/\s+/);
    const rsaFingerprint = fingerprintSha256(Buffer.from(rsaB64 ?? '', 'base64'));
    const rsaOnly = join(dir, 'known_hosts_rsa_only');
    const recorded = `[127.0.0.1]:${sshd.port} ${rsaType} ${rsaB64}`;
    writeFileSync(rsaOnly, `# recorded before the server was reinstalled\n${recorded}\n`);
    const offset = sshd.readLog().length;
    let asked = 0;
    const host = new SshHost(
      sshd.hostOptions(sshd.users.nopw, {
        knownHostsFiles: [rsaOnly],
        onUnknownHostKey: async () => {
          asked++;
          return true; // an operator who would say yes, or StrictHostKeyChecking accept-new
        },
      }),
    );
    hosts.push(host);
    const canary = join(dir, 'canary-type-change');

    const err = await host.run({ argv: ['touch', canary] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err).toMatchObject({
      kind: 'changed',
      presentedFingerprint: sshd.hostKeyFingerprint,
      knownFingerprint: rsaFingerprint,
    });
    const message = (err as Error).message;
    expect(message).toContain(`ssh-ed25519 ${sshd.hostKeyFingerprint}`);
    expect(message).toContain(`ssh-rsa ${rsaFingerprint} (${rsaOnly}:2)`);
    expect(asked).toBe(0);
    await expectEndedBeforeAuth(offset, 1);
    expect(existsSync(canary)).toBe(false);
    expect(readFileSync(rsaOnly, 'utf8').trim().split('\n')).toHaveLength(2); // nothing appended
  });
});
