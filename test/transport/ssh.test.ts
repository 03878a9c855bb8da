import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintSha256, verifyHostKey } from '../../src/transport/known-hosts.js';
import { quoteArgv, SUDO_WRAPPER_ARGV } from '../../src/transport/quote.js';
import { SshHost } from '../../src/transport/ssh.js';
import type { SshHostOptions, UnknownHostKeyInfo } from '../../src/transport/ssh-options.js';
import {
  CommandFailedError,
  HostKeyError,
  TransportError,
  type HostConnectionState,
} from '../../src/transport/types.js';
import { generateEd25519, startTestServer, waitFor, type TestServer } from './helpers/ssh-server.js';
import { processRunning } from '../../src/util/process-running.js';

let dir: string;
let server: TestServer;
let knownHosts: string;
const hosts: SshHost[] = [];

function knownLine(port: number, blob: Buffer): string {
  return `[127.0.0.1]:${port} ssh-ed25519 ${blob.toString('base64')}\n`;
}

function makeHost(srv: TestServer, extra: Partial<SshHostOptions> = {}): SshHost {
  const host = new SshHost({
    name: 'node-a',
    host: '127.0.0.1',
    port: srv.port,
    user: 'tester',
    privateKey: srv.clientPrivateKey,
    knownHostsFiles: [knownHosts],
    reconnectBackoffMs: 50,
    ...extra,
  });
  hosts.push(host);
  return host;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'l20-ssh-test-'));
  server = await startTestServer();
  knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, knownLine(server.port, server.hostKeyBlob), { mode: 0o600 });
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SshHost: commands', () => {
  it('runs argv commands and reports exit codes, stderr and the command line', async () => {
    const host = makeHost(server);
    const states: HostConnectionState[] = [];
    host.onStateChange((s) => states.push(s));
    await host.connect();
    expect(states).toEqual(['connecting', 'connected']);

    const ok = await host.run({ argv: ['echo', 'hello world'] });
    expect(ok).toMatchObject({
      exitCode: 0,
      signal: null,
      stdout: 'hello world\n',
      stderr: '',
      timedOut: false,
      cancelled: false,
      truncated: false,
    });
    expect(ok.commandLine).toBe("LC_ALL=C echo 'hello world'");

    const bad = await host.run({ argv: ['sh', '-c', 'echo oops >&2; exit 3'] });
    expect(bad.exitCode).toBe(3);
    expect(bad.stderr).toBe('oops\n');

    const env = await host.run({ argv: ['sh', '-c', 'echo "$GREETING:$LC_ALL"'] }, { env: { GREETING: "it's here" } });
    expect(env.stdout).toBe("it's here:C\n");

    const stdin = await host.run({ argv: ['wc', '-c'] }, { stdin: 'twelve bytes' });
    expect(stdin.stdout.trim()).toBe('12');

    const script = await host.run({ script: 'echo "args: $1 $2"; exit 4', args: ['a b', 'c'] });
    expect(script.stdout).toBe('args: a b c\n');
    expect(script.exitCode).toBe(4);

    await host.close();
    expect(states).toEqual(['connecting', 'connected', 'closed']); // closed once (`check --verbose` printed it twice)
  });

  it('streams 10 MB of multi-byte output intact (sha256) and keeps only the tail when asked', async () => {
    const host = makeHost(server);
    const unit = 'l20 ✓ naïve € 😀 RoCE\n';
    const target = 10 * 1024 * 1024;
    const text = unit.repeat(Math.ceil(target / Buffer.byteLength(unit)));
    const file = join(dir, 'big.txt');
    writeFileSync(file, text);
    const want = createHash('sha256').update(text).digest('hex');

    const chunks: string[] = [];
    const result = await host.run({ argv: ['cat', '--', file] }, { onStdout: (c) => chunks.push(c) });
    expect(result.exitCode).toBe(0);
    expect(result.truncated).toBe(false);
    expect(createHash('sha256').update(result.stdout).digest('hex')).toBe(want);
    expect(chunks.length).toBeGreaterThan(10);
    expect(createHash('sha256').update(chunks.join('')).digest('hex')).toBe(want);

    const tail = await host.run({ argv: ['cat', '--', file] }, { maxBufferBytes: 1000 });
    expect(tail.truncated).toBe(true);
    expect(Buffer.byteLength(tail.stdout)).toBeLessThanOrEqual(1000);
    expect(text.endsWith(tail.stdout)).toBe(true);
    expect(tail.stdout).not.toContain('\ufffd');
  });

  it('runs 50 concurrent commands without ever opening more than 10 sessions', async () => {
    const host = makeHost(server);
    await host.connect();
    const before = server.stats.maxSessionsOpen;
    server.stats.maxSessionsOpen = 0;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => host.run({ argv: ['sh', '-c', 'sleep 0.05; echo "$1"', 'sh', String(i)] })),
    );
    results.forEach((r, i) => {
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`${i}\n`);
    });
    expect(server.stats.maxSessionsOpen).toBeLessThanOrEqual(10);
    expect(server.stats.maxSessionsOpen).toBeGreaterThan(1);
    server.stats.maxSessionsOpen = Math.max(before, server.stats.maxSessionsOpen);
  });

  it('waits and retries when the server refuses a channel ("open failed") instead of failing', async () => {
    const strict = await startTestServer({ maxSessions: 10 });
    try {
      writeFileSync(join(dir, 'kh-strict'), knownLine(strict.port, strict.hostKeyBlob));
      const host = makeHost(strict, { maxSessions: 25, knownHostsFiles: [join(dir, 'kh-strict')] });
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          host.run({ argv: ['sh', '-c', 'sleep 0.05; echo "$1"', 'sh', String(i)] }),
        ),
      );
      expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 50 }, (_, i) => `${i}\n`));
      expect(results.every((r) => r.exitCode === 0)).toBe(true);
      expect(strict.stats.sessionsRefused).toBeGreaterThan(0);
      expect(strict.stats.maxSessionsOpen).toBeLessThanOrEqual(10);
      expect(strict.stats.execRequests.length).toBe(50);
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await strict.close();
    }
  });

  it('times out: TERM to the remote process group, the channel closes, the run resolves', async () => {
    const sent: string[] = [];
    const host = makeHost(server, { debug: (m) => (m.includes('signal') ? sent.push(m) : undefined) });
    const pidFile = join(dir, 'timeout.pid');
    const result = await host.run(
      { argv: ['sh', '-c', 'echo $$ > "$1"; exec sleep 30', 'sh', pidFile] },
      { timeoutMs: 300 },
    );
    expect(result.timedOut).toBe(true);
    expect(result.cancelled).toBe(false);
    expect(result.exitCode).toBeNull();
    expect(result.durationMs).toBeLessThan(5000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !processRunning(pid), 5000, 'the remote process to exit');
    // The client sent the signal request (after its stdin EOF). ssh2's Server drops channel requests that
    // arrive after EOF, so this test server kills the group when the channel closes; OpenSSH honours it.
    expect(sent.some((m) => /CHANNEL_REQUEST \(r:\d+, signal: TERM\)/.test(m))).toBe(true);
  });

  it('cancels through an AbortSignal and the remote process is gone afterwards', async () => {
    const host = makeHost(server);
    const pidFile = join(dir, 'cancel.pid');
    const controller = new AbortController();
    const result = await host.run(
      { argv: ['sh', '-c', 'echo $$ > "$1"; echo started; exec sleep 30', 'sh', pidFile] },
      { signal: controller.signal, onStdout: (c) => (c.includes('started') ? controller.abort() : undefined) },
    );
    expect(result.cancelled).toBe(true);
    expect(result.timedOut).toBe(false);
    expect(result.stdout).toBe('started\n');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !processRunning(pid), 5000, 'the remote process to exit');

    // Already aborted: nothing is sent.
    const sent = server.stats.execRequests.length;
    const pre = await host.run({ argv: ['true'] }, { signal: AbortSignal.abort() });
    expect(pre.cancelled).toBe(true);
    expect(server.stats.execRequests.length).toBe(sent);
  });

  it('never lets an argv word change the command (canary)', async () => {
    const host = makeHost(server);
    const canary = join(dir, 'canary');
    const evil = [
      `'; touch ${canary}; echo '`,
      `$(touch ${canary})`,
      `\`touch ${canary}\``,
      `a"b'c\\d; touch ${canary}`,
      `\n touch ${canary}`,
    ];
    for (const word of evil) {
      const r = await host.run({ argv: ['printf', '%s', word] }, { env: { X: word } });
      expect(r.stdout).toBe(word);
      const s = await host.run({ script: 'printf %s "$1"', args: [word] });
      expect(s.stdout).toBe(word);
    }
    await expect(host.readFile(`/nonexistent/'; touch ${canary}; echo '`)).rejects.toBeInstanceOf(CommandFailedError);
    expect(existsSync(canary)).toBe(false);
  });
});

describe('SshHost: files', () => {
  it('readFile returns content; a missing file is a CommandFailedError with exit code and stderr lines', async () => {
    const host = makeHost(server);
    const file = join(dir, 'read me.txt');
    writeFileSync(file, 'line 1\nline 2\n');
    expect(await host.readFile(file)).toBe('line 1\nline 2\n');
    const err = await host.readFile(join(dir, 'missing')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    const e = err as CommandFailedError;
    expect(e.exitCode).toBe(1);
    expect(e.host).toBe('node-a');
    expect(e.commandLine).toContain('cat --');
    expect(e.stderrLines.join('\n')).toMatch(/No such file/);
  });

  it('writeFileAtomic: creates, backs up the original, and reports unchanged on a second write', async () => {
    const host = makeHost(server);
    const work = mkdtempSync(join(dir, 'write-'));
    const backupDir = join(work, 'backup');
    const file = join(work, `it's a "file".conf`);

    const first = await host.writeFileAtomic(file, 'v1\n', { mode: 0o640, backupDir });
    expect(first).toEqual({ changed: true });
    expect(readFileSync(file, 'utf8')).toBe('v1\n');
    expect(statSync(file).mode & 0o777).toBe(0o640);

    const same = await host.writeFileAtomic(file, 'v1\n', { mode: 0o640, backupDir });
    expect(same).toEqual({ changed: false });

    const second = await host.writeFileAtomic(file, 'v2 ✓\n', { backupDir });
    expect(second.changed).toBe(true);
    expect(second.backupPath).toBe(join(backupDir, file));
    expect(readFileSync(second.backupPath as string, 'utf8')).toBe('v1\n');
    expect(readFileSync(file, 'utf8')).toBe('v2 ✓\n');
    expect(statSync(file).mode & 0o777).toBe(0o640); // mode kept when not given

    expect(await host.writeFileAtomic(file, 'v2 ✓\n', { backupDir })).toEqual({ changed: false });
    const modeOnly = await host.writeFileAtomic(file, 'v2 ✓\n', { backupDir, mode: 0o600 });
    expect(modeOnly.changed).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    expect(readdirSync(work).filter((n) => n.includes('.l20tmp.'))).toEqual([]);
  });

  it('writeFileAtomic follows a symlink and keeps the link', async () => {
    const host = makeHost(server);
    const work = mkdtempSync(join(dir, 'link-'));
    const real = join(work, 'real.conf');
    const link = join(work, 'link.conf');
    writeFileSync(real, 'old\n');
    symlinkSync(real, link);
    const r = await host.writeFileAtomic(link, 'new\n', { backupDir: join(work, 'bk') });
    expect(r.changed).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe('new\n');
    expect(statSync(link).isFile()).toBe(true);
    expect(readdirSync(work).sort()).toEqual(['bk', 'link.conf', 'real.conf']);
  });
});

describe('SshHost: host keys', () => {
  it('unknown key: asks with the right SHA256 fingerprint; refusal sends nothing', async () => {
    const srv = await startTestServer();
    try {
      const kh = join(dir, 'kh-unknown');
      const asked: UnknownHostKeyInfo[] = [];
      const host = makeHost(srv, {
        knownHostsFiles: [kh],
        onUnknownHostKey: async (info) => {
          asked.push(info);
          return false;
        },
      });
      const err = await host.connect().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HostKeyError);
      expect((err as HostKeyError).kind).toBe('unknown');
      expect(asked).toHaveLength(1);
      // The fingerprint ssh-keygen prints for the server's public key.
      const pub = join(dir, 'srv-unknown.pub');
      writeFileSync(pub, `ssh-ed25519 ${srv.hostKeyBlob.toString('base64')} test\n`);
      const keygen = execFileSync('ssh-keygen', ['-lf', pub], { encoding: 'utf8' }).split(' ')[1];
      expect(asked[0]).toEqual({
        host: '127.0.0.1',
        port: srv.port,
        fingerprint: keygen,
        keyType: 'ssh-ed25519',
        recordIn: kh,
      });
      expect(existsSync(kh)).toBe(false);

      await expect(host.run({ argv: ['touch', join(dir, 'must-not-exist')] })).rejects.toBeInstanceOf(HostKeyError);
      expect(srv.stats.execRequests).toEqual([]);
      expect(srv.stats.sessionsOpened).toBe(0);

      // No callback at all: refused too.
      const silent = makeHost(srv, { knownHostsFiles: [kh] });
      await expect(silent.connect()).rejects.toMatchObject({ name: 'HostKeyError', kind: 'unknown' });
      expect(srv.stats.execRequests).toEqual([]);
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await srv.close();
    }
  });

  it('unknown key trusted: recorded in the first known_hosts file (0600) and known next time', async () => {
    const srv = await startTestServer();
    try {
      const sshDir = join(dir, 'home', '.ssh');
      const kh = join(sshDir, 'known_hosts');
      let asked = 0;
      let recordIn: string | undefined;
      const host = makeHost(srv, {
        knownHostsFiles: [kh, join(dir, 'nonexistent-global')],
        onUnknownHostKey: async (info) => {
          asked++;
          recordIn = info.recordIn;
          return true;
        },
      });
      await host.connect();
      // The question names the file the answer writes (the TUI's prompt shows it).
      expect(recordIn).toBe(kh);
      expect((await host.run({ argv: ['echo', 'ok'] })).stdout).toBe('ok\n');
      expect(asked).toBe(1);
      expect(statSync(sshDir).mode & 0o777).toBe(0o700);
      expect(statSync(kh).mode & 0o777).toBe(0o600);
      expect(verifyHostKey([kh], '127.0.0.1', srv.port, srv.hostKeyBlob)).toEqual({ status: 'known' });
      // OpenSSH finds the entry we wrote.
      const found = execFileSync('ssh-keygen', ['-F', `[127.0.0.1]:${srv.port}`, '-f', kh], { encoding: 'utf8' });
      expect(found).toContain(srv.hostKeyBlob.toString('base64'));

      const again = makeHost(srv, {
        knownHostsFiles: [kh],
        onUnknownHostKey: async () => {
          asked++;
          return true;
        },
      });
      await again.connect();
      expect(asked).toBe(1);
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await srv.close();
    }
  });

  it('changed key: HostKeyError naming both fingerprints, nothing sent, later runs refused too', async () => {
    const srv = await startTestServer();
    try {
      const other = generateEd25519();
      const kh = join(dir, 'kh-changed');
      writeFileSync(kh, `# old key\n[127.0.0.1]:${srv.port} ssh-ed25519 ${other.blob.toString('base64')}\n`);
      let asked = 0;
      const host = makeHost(srv, {
        knownHostsFiles: [kh],
        onUnknownHostKey: async () => {
          asked++;
          return true;
        },
      });
      const err = (await host.connect().catch((e: unknown) => e)) as HostKeyError;
      expect(err).toBeInstanceOf(HostKeyError);
      expect(err.kind).toBe('changed');
      expect(err.presentedFingerprint).toBe(fingerprintSha256(srv.hostKeyBlob));
      expect(err.knownFingerprint).toBe(fingerprintSha256(other.blob));
      expect(err.message).toContain(fingerprintSha256(srv.hostKeyBlob));
      expect(err.message).toContain(fingerprintSha256(other.blob));
      expect(err.message).toContain(`${kh}:2`);
      expect(asked).toBe(0);

      await expect(host.run({ argv: ['touch', join(dir, 'must-not-exist')] })).rejects.toBeInstanceOf(HostKeyError);
      expect(srv.stats.execRequests).toEqual([]);
      expect(srv.stats.sessionsOpened).toBe(0);
      expect(existsSync(join(dir, 'must-not-exist'))).toBe(false);
      expect(readFileSync(kh, 'utf8')).not.toContain(srv.hostKeyBlob.toString('base64'));
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await srv.close();
    }
  });
});

describe('SshHost: connection loss', () => {
  it('rejects the running command with TransportError, goes lost, and reconnects for the next run', async () => {
    const srv = await startTestServer();
    try {
      const kh = join(dir, 'kh-drop');
      writeFileSync(kh, knownLine(srv.port, srv.hostKeyBlob));
      const host = makeHost(srv, { knownHostsFiles: [kh] });
      const states: Array<[HostConnectionState, string | undefined]> = [];
      host.onStateChange((s, d) => states.push([s, d]));
      await host.connect();

      const running = host.run({ argv: ['sleep', '30'] });
      const outcome = running.catch((e: unknown) => e);
      await waitFor(() => srv.stats.execRequests.some((c) => c.endsWith('sleep 30')), 5000, 'the exec request');
      srv.dropConnections();
      const err = (await outcome) as TransportError;
      expect(err).toBeInstanceOf(TransportError);
      expect(err.host).toBe('node-a');
      expect(err.commandLine).toBe('LC_ALL=C sleep 30');
      expect(err.message).toContain('LC_ALL=C sleep 30');
      expect(states.map((s) => s[0])).toContain('lost');

      const next = await host.run({ argv: ['echo', 'back'] });
      expect(next.stdout).toBe('back\n');
      expect(srv.stats.connections).toBe(2);
      expect(states.map((s) => s[0]).slice(-3)).toEqual(['lost', 'connecting', 'connected']);
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await srv.close();
    }
  });

  it('detects a silent peer through keepalives', async () => {
    const srv = await startTestServer();
    try {
      const kh = join(dir, 'kh-freeze');
      writeFileSync(kh, knownLine(srv.port, srv.hostKeyBlob));
      const host = makeHost(srv, { knownHostsFiles: [kh], keepaliveIntervalMs: 100, keepaliveCountMax: 2 });
      const states: Array<[HostConnectionState, string | undefined]> = [];
      host.onStateChange((s, d) => states.push([s, d]));
      await host.connect();
      const running = host.run({ argv: ['sleep', '30'] }).catch((e: unknown) => e);
      await waitFor(() => srv.stats.execRequests.length === 1, 5000, 'the exec request');
      srv.freezeConnections();
      const err = await running;
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).commandLine).toBe('LC_ALL=C sleep 30');
      const lost = states.find((s) => s[0] === 'lost');
      expect(lost?.[1]).toMatch(/keepalive/i);
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await srv.close();
    }
  });

  it('fails with TransportError (no hang) when the server is unreachable', async () => {
    const srv = await startTestServer();
    const port = srv.port;
    await srv.close();
    const host = makeHost(srv, { port, readyTimeoutMs: 2000 });
    const states: HostConnectionState[] = [];
    host.onStateChange((s) => states.push(s));
    await expect(host.connect()).rejects.toBeInstanceOf(TransportError);
    expect(states).toEqual(['connecting', 'failed']);
  });

  it('close() ends the connection and reports closed', async () => {
    const host = makeHost(server);
    const states: HostConnectionState[] = [];
    host.onStateChange((s) => states.push(s));
    await host.run({ argv: ['true'] });
    await host.close();
    expect(states.at(-1)).toBe('closed');
    await expect(host.run({ argv: ['true'] })).rejects.toBeInstanceOf(TransportError);
  });
});

describe('SshHost: sudo password', () => {
  const FAKE_SUDO = `#!/bin/sh
# Fake sudo for tests: mode file says whether a password is needed; -S reads one line from stdin.
mode=$(cat "$FAKE_SUDO_MODE_FILE")
[ "$1" = "-k" ] && shift  # -k: ignore cached credentials (always read the password when one is needed)
case "$1" in
  -n) shift; [ "$1" = "--" ] && shift
      [ "$mode" = nopasswd ] && exec "$@"
      echo "sudo: a password is required" >&2; exit 1 ;;
  -S) shift; [ "$1" = "-p" ] && shift 2; [ "$1" = "--" ] && shift
      [ "$mode" = nopasswd ] && exec "$@"
      IFS= read -r pw
      [ "$pw" = "$FAKE_SUDO_PASSWORD" ] || { echo "sudo: incorrect password" >&2; exit 1; }
      exec "$@" ;;
esac
echo "unexpected sudo call: $*" >&2; exit 2
`;

  for (const mode of ['passwd', 'nopasswd'] as const) {
    it(`sends the password only when sudo asks for one (${mode})`, async () => {
      const bin = mkdtempSync(join(dir, 'bin-'));
      writeFileSync(join(bin, 'sudo'), FAKE_SUDO, { mode: 0o755 });
      const modeFile = join(bin, 'mode');
      writeFileSync(modeFile, mode);
      const password = `s3cr'et pw`;
      const srv = await startTestServer({
        env: {
          PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
          FAKE_SUDO_MODE_FILE: modeFile,
          FAKE_SUDO_PASSWORD: password,
        },
      });
      try {
        const kh = join(dir, `kh-sudo-${mode}`);
        writeFileSync(kh, knownLine(srv.port, srv.hostKeyBlob));
        const host = makeHost(srv, { knownHostsFiles: [kh], sudoPassword: password });
        const r = await host.run({ argv: ['cat'] }, { sudo: true, stdin: 'payload\n' });
        expect(r.stderr).toBe('');
        expect(r.stdout).toBe('payload\n'); // the password never reaches the command
        expect(r.commandLine).not.toContain('s3cr');
        expect(srv.stats.execRequests.every((c) => !c.includes('s3cr'))).toBe(true);
        const wrapper = quoteArgv(SUDO_WRAPPER_ARGV);
        expect(r.commandLine).toBe(
          mode === 'passwd'
            ? `sudo -k -S -p '' -- ${wrapper} env LC_ALL=C cat`
            : `sudo -n -- ${wrapper} env LC_ALL=C cat`,
        );

        const file = join(bin, 'conf');
        expect(await host.writeFileAtomic(file, 'root content\n', { sudo: true, backupDir: join(bin, 'bk') })).toEqual({
          changed: true,
        });
        expect(readFileSync(file, 'utf8')).toBe('root content\n');
        expect(await host.readFile(file, { sudo: true })).toBe('root content\n');
        expect((await host.run({ script: 'echo "in script: $1"', args: ['x'] }, { sudo: true })).stdout).toBe(
          'in script: x\n',
        );
      } finally {
        await Promise.all(hosts.splice(0).map((h) => h.close()));
        await srv.close();
      }
    });
  }
});

describe('SshHost: keys and configuration', () => {
  it('prefers the host key type already in known_hosts (server with ed25519 and ECDSA keys)', async () => {
    const ecdsa = (await import('ssh2')).utils.generateKeyPairSync('ecdsa', { bits: 256 });
    const srv = await startTestServer({ extraHostKeys: [ecdsa.private] });
    try {
      const { utils } = await import('ssh2');
      const parsed = utils.parseKey(ecdsa.public);
      if (parsed instanceof Error) throw parsed;
      const blob = (Array.isArray(parsed) ? parsed[0] : parsed).getPublicSSH();
      const kh = join(dir, 'kh-ecdsa');
      writeFileSync(kh, `[127.0.0.1]:${srv.port} ecdsa-sha2-nistp256 ${blob.toString('base64')}\n`);
      let asked = 0;
      const host = makeHost(srv, {
        knownHostsFiles: [kh],
        onUnknownHostKey: async () => {
          asked++;
          return false;
        },
      });
      await host.connect();
      expect(asked).toBe(0);
    } finally {
      await Promise.all(hosts.splice(0).map((h) => h.close()));
      await srv.close();
    }
  });

  it('authenticates with identity files, skipping missing and unusable ones; explains when none works', async () => {
    const keyDir = mkdtempSync(join(dir, 'keys-'));
    const good = join(keyDir, 'id_good');
    writeFileSync(good, server.clientPrivateKey, { mode: 0o600 });
    const encrypted = join(keyDir, 'id_encrypted');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret', '-f', encrypted]);
    const host = makeHost(server, { privateKey: undefined, identityFiles: [join(keyDir, 'missing'), encrypted, good] });
    expect((await host.run({ argv: ['echo', 'ok'] })).stdout).toBe('ok\n');

    const none = makeHost(server, { privateKey: undefined, identityFiles: [join(keyDir, 'missing'), encrypted] });
    const err = await none.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toMatch(/no usable SSH key/);
    expect((err as Error).message).toContain('id_encrypted');

    const wrong = makeHost(server, { privateKey: generateEd25519().privateKey });
    await expect(wrong.connect()).rejects.toThrow(/authentication/i);
  });

  it('builds SshHost options from a resolved ssh config', async () => {
    const { resolveSshConfig } = await import('../../src/transport/ssh-config.js');
    const { sshHostOptionsFromConfig } = await import('../../src/transport/ssh-options-from-config.js');
    const cfgText = `Host gpu-a\n  HostName 10.0.0.11\n  User ubuntu\n  Port 2222\n  ServerAliveInterval 10\n  ServerAliveCountMax 4\n  StrictHostKeyChecking accept-new\n  ProxyJump bastion\n`;
    const resolved = resolveSshConfig('gpu-a', {
      homeDir: '/home/op',
      localUser: 'op',
      readFile: (p) => (p === '/home/op/.ssh/config' ? cfgText : undefined),
    });
    const { options, unsupported } = sshHostOptionsFromConfig('gpu-a', resolved, {
      env: { SSH_AUTH_SOCK: '/run/agent.sock' },
    });
    expect(options).toMatchObject({
      name: 'gpu-a',
      host: '10.0.0.11',
      port: 2222,
      user: 'ubuntu',
      agent: '/run/agent.sock',
      keepaliveIntervalMs: 10_000,
      keepaliveCountMax: 4,
      knownHostsFiles: [
        '/home/op/.ssh/known_hosts',
        '/home/op/.ssh/known_hosts2',
        '/etc/ssh/ssh_known_hosts',
        '/etc/ssh/ssh_known_hosts2',
      ],
    });
    expect(await options.onUnknownHostKey?.({ host: 'x', port: 1, fingerprint: 'f', keyType: 't' })).toBe(true);
    // ProxyJump is followed now: the caller resolves the hops (ssh-hops.ts); nothing is left unsupported.
    expect(unsupported).toEqual([]);
    expect(options.jump).toBeUndefined();
  });
});

describe('SshHost: pinned fingerprint', () => {
  it('accepts the pinned key without a known_hosts entry and refuses another one as changed', async () => {
    const empty = join(dir, 'kh-empty-pin');
    const ok = makeHost(server, {
      knownHostsFiles: [empty],
      expectedFingerprint: fingerprintSha256(server.hostKeyBlob),
    });
    await ok.connect();
    const other = fingerprintSha256(generateEd25519().blob);
    const sessions = server.stats.sessionsOpened;
    const bad = makeHost(server, {
      knownHostsFiles: [knownHosts],
      expectedFingerprint: other,
      onUnknownHostKey: async () => true,
    });
    await expect(bad.connect()).rejects.toMatchObject({
      name: 'HostKeyError',
      kind: 'changed',
      knownFingerprint: other,
    });
    expect(server.stats.sessionsOpened).toBe(sessions);
  });
});
