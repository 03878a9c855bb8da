/** The SSH transport against the lab's real SSH servers. */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { HostKeyError } from '../../src/transport/types.js';
import { fingerprintSha256 } from '../../src/transport/known-hosts.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { hostFromConfig } from '../../src/target.js';
import { generateEd25519 } from '../../src/util/ssh-keys.js';

describe('SSH transport against the lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh', maxSessions: 10 });
  });
  afterAll(async () => {
    await t.close();
  });

  const n1 = () => t.hosts[0]!;
  const labHost = () => t.lab.hosts[0]!;

  it('returns exit codes, stdout and stderr separately', async () => {
    const r = await n1().run({ script: 'echo out; echo err >&2; exit 3\n' });
    expect(r).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n', timedOut: false, cancelled: false });
    const missing = await n1().run({ argv: ['no-such-tool'] });
    expect(missing.exitCode).toBe(127);
    expect(missing.stderr).toContain('no-such-tool');
  });

  it('carries 10 MB of output intact', async () => {
    let streamed = 0;
    const r = await n1().run(
      { script: 'head -c 10485760 /dev/zero | tr "\\0" a\n' },
      { onStdout: (c) => (streamed += c.length) },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(10 * 1024 * 1024);
    expect(streamed).toBe(10 * 1024 * 1024);
    const expected = createHash('sha256')
      .update('a'.repeat(10 * 1024 * 1024))
      .digest('hex');
    expect(createHash('sha256').update(r.stdout).digest('hex')).toBe(expected);
  });

  it('runs 50 concurrent commands under a 10-session limit, all succeeding', async () => {
    const before = labHost().stats();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => n1().run({ argv: ['echo', `n${i}`] })));
    expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 50 }, (_, i) => `n${i}`));
    const after = labHost().stats();
    expect(after.maxConcurrentSessions).toBeLessThanOrEqual(10);
    expect(after.execs - before.execs).toBeGreaterThanOrEqual(50);
  });

  it('times out a hung command and cancels on request', async () => {
    const started = Date.now();
    const r = await n1().run({ argv: ['sleep', '30'] }, { timeoutMs: 300 });
    expect(r.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    const ac = new AbortController();
    const running = n1().run({ argv: ['sleep', '30'] }, { signal: ac.signal, onStart: () => ac.abort() });
    const c = await running;
    expect(c.cancelled).toBe(true);
    // The connection stays usable.
    expect((await n1().run({ argv: ['true'] })).exitCode).toBe(0);
  });

  it('asks about an unknown host key with its SHA256 fingerprint, and sends nothing when refused', async () => {
    const empty = join(t.dir, 'empty_known_hosts');
    writeFileSync(empty, '');
    const asked: string[] = [];
    const before = labHost().stats().execs;
    const host = new SshHost({
      name: 'l20-n1',
      host: '127.0.0.1',
      port: labHost().port,
      user: 'l20',
      identityFiles: [t.identityFile],
      knownHostsFiles: [empty],
      onUnknownHostKey: async (info) => {
        asked.push(info.fingerprint);
        return false;
      },
    });
    await expect(host.connect()).rejects.toThrow();
    await host.close();
    expect(asked).toEqual([labHost().hostKeyFingerprint]);
    expect(labHost().stats().execs).toBe(before);
  });

  it('trusting an unknown key records it, and the next connection is known', async () => {
    const kh = join(t.dir, 'tofu_known_hosts');
    writeFileSync(kh, '');
    const opts = {
      name: 'l20-n1',
      host: '127.0.0.1',
      port: labHost().port,
      user: 'l20',
      identityFiles: [t.identityFile],
      knownHostsFiles: [kh],
    };
    const first = new SshHost({ ...opts, onUnknownHostKey: async () => true });
    expect((await first.run({ argv: ['hostname'] })).stdout.trim()).toBe('l20-n1');
    await first.close();
    const second = new SshHost({
      ...opts,
      onUnknownHostKey: async () => {
        throw new Error('must not ask again');
      },
    });
    expect((await second.run({ argv: ['true'] })).exitCode).toBe(0);
    await second.close();
  });

  it('reaches a host through a ~/.ssh/config alias, as OpenSSH would', async () => {
    const home = join(t.dir, 'home');
    mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(home, '.ssh', 'config'),
      `Host gpu-*\n  User l20\n  IdentityFile ${t.identityFile}\n  UserKnownHostsFile ${t.knownHostsFile}\n\nHost gpu-b\n  HostName 127.0.0.1\n  Port ${t.lab.hosts[1]!.port}\n`,
    );
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const host = hostFromConfig({ name: 'b', address: 'gpu-b', role: 'worker' });
      expect(host.address).toBe(`127.0.0.1:${t.lab.hosts[1]!.port}`);
      expect((await host.run({ argv: ['hostname'] })).stdout.trim()).toBe('l20-n2');
      await host.close();
    } finally {
      process.env.HOME = saved;
    }
  });

  it('refuses a changed host key, naming both fingerprints, and sends nothing', async () => {
    const other = generateEd25519();
    const blob = Buffer.from(other.public.split(' ')[1]!, 'base64');
    const kh = join(t.dir, 'changed_known_hosts');
    writeFileSync(kh, `[127.0.0.1]:${labHost().port} ssh-ed25519 ${blob.toString('base64')}\n`);
    const before = labHost().stats().execs;
    const host = new SshHost({
      name: 'l20-n1',
      host: '127.0.0.1',
      port: labHost().port,
      user: 'l20',
      identityFiles: [t.identityFile],
      knownHostsFiles: [kh],
      onUnknownHostKey: async () => true,
    });
    const err = await host.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    await host.close();
    expect(err).toBeInstanceOf(HostKeyError);
    const e = err as HostKeyError;
    expect(e.kind).toBe('changed');
    expect(e.message).toContain(labHost().hostKeyFingerprint);
    expect(e.message).toContain(fingerprintSha256(blob));
    expect(labHost().stats().execs).toBe(before);
  });
});
