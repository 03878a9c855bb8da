/**
 * The OpenSSH transport (issue 17) against a real sshd on loopback: the system `ssh` with a ControlMaster per
 * host. Every ssh child gets `-F` with a config of this test's own, so this machine's ~/.ssh/config is never
 * read (ssh takes ~ from the password database, not $HOME). Checked on this machine's process table: what runs
 * on the server after a cancel, and which ssh processes are left after close() or after the tool was killed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpensshHost, type OpensshHostOptions } from '../../src/transport/openssh.js';
import { SshHost } from '../../src/transport/ssh.js';
import {
  ConnectionLostError,
  HostKeyError,
  type Command,
  type Host,
  type RunOptions,
} from '../../src/transport/types.js';
import { blockedWriting, isAlive, pidsOf, written } from '../helpers/processes.js';
import { listProcesses, startSshd, uidOf, waitFor, type ProcessInfo, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let dir: string;
/** Each host its own control directory, so its ssh processes are found by path. */
const controlDirs = new Map<Host, string>();
let configFile: string;
let uid: number;
const hosts: Host[] = [];

beforeAll(async () => {
  sshd = await startSshd();
  dir = mkdtempSync(join(tmpdir(), 'l20-openssh-'));
  configFile = join(dir, 'ssh_config');
  // Only the key the test names, no agent: nothing of this machine's own ssh setup takes part.
  writeFileSync(configFile, 'IdentitiesOnly yes\nIdentityAgent none\n', { mode: 0o600 });
  uid = uidOf(sshd.users.nopw);
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function options(extra: Partial<OpensshHostOptions> = {}): OpensshHostOptions {
  const user = sshd.users.nopw;
  return {
    ...sshd.hostOptions(user),
    sshAlias: '127.0.0.1',
    inventory: { port: sshd.port, user, identityFiles: [sshd.clientKeyPath] },
    sshConfigFile: configFile,
    controlDir: join(dir, `ssh-${hosts.length}`),
    idleExitS: 2,
    ...extra,
  };
}

function opensshHost(extra: Partial<OpensshHostOptions> = {}): OpensshHost {
  const opts = options(extra);
  const host = new OpensshHost(opts);
  hosts.push(host);
  controlDirs.set(host, opts.controlDir ?? '');
  return host;
}

/** The ssh processes of `host`: masters (`ssh: SOCKET [mux]`), their watches and command clients. */
function sshProcesses(host: Host): ProcessInfo[] {
  const under = `${controlDirs.get(host)}/`;
  return listProcesses().filter((p) => p.args.includes(under));
}

describe('OpenSSH transport: commands', () => {
  it('gives the same exit codes, stdout and stderr as the ssh2 transport, byte for byte', async () => {
    const openssh = opensshHost();
    const ssh2 = new SshHost(sshd.hostOptions(sshd.users.nopw));
    hosts.push(ssh2);
    const cases: Array<[Command, RunOptions]> = [
      [{ argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'] }, {}],
      [{ argv: ['printf', '%s', 'no newline'] }, {}],
      [{ argv: ['cat'] }, { stdin: 'line 1\nline 2\n' }],
      [{ script: 'echo "$1"; echo two >&2; exit 7', args: ['a b'] }, {}],
      [{ argv: ['sh', '-c', 'exit 255'] }, {}],
      [{ argv: ['printf', 'h\\303\\251llo \\342\\202\\254\\n'] }, {}],
      [{ argv: ['sh', '-c', 'echo "$FOO"; echo "$$" | grep -c . >&2'] }, { env: { FOO: "x 'y' $z" } }],
      [{ argv: ['sh', '-c', 'seq 1 400000; echo done >&2'] }, {}],
      [{ argv: ['id', '-u'] }, { sudo: true }],
      [{ argv: ['sh', '-c', 'printf "L20PID%s:1\\n" x >&2; echo L20PID >&2'] }, {}],
    ];
    for (const [command, opts] of cases) {
      const [a, b] = await Promise.all([openssh.run(command, opts), ssh2.run(command, opts)]);
      const what = JSON.stringify(command).slice(0, 80);
      expect({ what, exitCode: a.exitCode, stdout: a.stdout, stderr: a.stderr, line: a.commandLine }).toEqual({
        what,
        exitCode: b.exitCode,
        stdout: b.stdout,
        stderr: b.stderr,
        line: b.commandLine,
      });
    }
    expect((await openssh.run({ argv: ['id', '-u'] }, { sudo: true })).stdout).toBe('0\n');
  });

  it('streams to the callbacks, and runs more commands at once than the server has sessions', async () => {
    const host = opensshHost();
    let seen = '';
    const loop = { argv: ['sh', '-c', 'for i in 1 2 3; do echo $i; done'] };
    const r = await host.run(loop, { onStdout: (t) => (seen += t) });
    expect(seen).toBe('1\n2\n3\n');
    expect(r.stdout).toBe('1\n2\n3\n');
    // MaxSessions 10, one of them the master's watch: the rest queue for a slot instead of failing.
    const runs = Array.from({ length: 14 }, (_, i) => host.run({ argv: ['sh', '-c', `sleep 0.2; echo ${i}`] }));
    const many = await Promise.all(runs);
    expect(many.map((m) => m.stdout)).toEqual(Array.from({ length: 14 }, (_, i) => `${i}\n`));
  });

  it('writes and reads files as SshHost does (writeFileAtomic with sudo, readFile)', async () => {
    const host = opensshHost();
    const path = join(dir, 'written.conf');
    const backupDir = join(dir, 'backup');
    const first = await host.writeFileAtomic(path, 'a = 1\n', { sudo: true, mode: 0o640, backupDir });
    expect(first).toEqual({ changed: true });
    expect(await host.writeFileAtomic(path, 'a = 1\n', { sudo: true, mode: 0o640 })).toEqual({ changed: false });
    expect(readFileSync(path, 'utf8')).toBe('a = 1\n');
    expect(await host.readFile(path, { sudo: true })).toBe('a = 1\n');
    await expect(host.readFile(join(dir, 'absent'), { sudo: true })).rejects.toThrow(/No such file/);
  });

  it('holds the output back while its consumer is behind, then delivers every line', async () => {
    const host = opensshHost();
    const total = 2_000_000;
    let pid = 0;
    let received = 0;
    let holding = true;
    let release!: () => void;
    const behind = new Promise<void>((r) => (release = r));
    const run = host.run(
      { argv: ['seq', '1', String(total)] },
      {
        onStdout: (t) => (received += t.length),
        backpressure: () => (holding ? behind : undefined),
        maxBufferBytes: 4096,
      },
    );
    let last = -2;
    await waitFor(() => {
      pid ||= pidsOf(uid, [`seq 1 ${total}`])[0] ?? 0;
      const w = pid > 0 ? written(pid) : -1;
      const stable = w === last && w > 0 && blockedWriting(pid);
      last = w;
      return stable;
    }, 'the remote command to block writing while its output is held back');
    expect(received).toBeLessThan(8 * 1024 * 1024); // of 14.8 MB
    holding = false;
    release();
    const r = await run;
    expect(r.exitCode).toBe(0);
    expect(r.stdout.endsWith(`${total}\n`)).toBe(true);
  });
});

describe('OpenSSH transport: cancel and timeout end the remote process group', () => {
  it('abort: the command, its child and its background job are gone on the server', async () => {
    const host = opensshHost();
    const sleeps = ['sleep 340', 'sleep 341'];
    const ac = new AbortController();
    const run = host.run({ argv: ['bash', '-c', 'sleep 340 & sleep 341; wait'] }, { signal: ac.signal });
    await waitFor(() => pidsOf(uid, sleeps).length === 2, 'both sleeps to run on the server');
    ac.abort();
    expect(await run).toMatchObject({ cancelled: true, timedOut: false, stderr: '' });
    await waitFor(() => pidsOf(uid, sleeps).length === 0, 'the sleeps to exit', 10_000);
    expect((await host.run({ argv: ['echo', 'still here'] })).stdout).toBe('still here\n');
  });

  it('timeout: timedOut and the process is gone on the server', async () => {
    const host = opensshHost();
    const run = host.run({ argv: ['bash', '-c', 'sleep 342 & sleep 343; wait'] }, { timeoutMs: 500 });
    await waitFor(() => pidsOf(uid, ['sleep 342', 'sleep 343']).length === 2, 'both sleeps to run on the server');
    expect(await run).toMatchObject({ timedOut: true, cancelled: false });
    await waitFor(() => pidsOf(uid, ['sleep 342', 'sleep 343']).length === 0, 'the timed-out sleeps to exit', 10_000);
  });

  it('abort under sudo: the root command is gone', async () => {
    const host = opensshHost();
    const ac = new AbortController();
    const run = host.run({ argv: ['sleep', '344'] }, { sudo: true, signal: ac.signal });
    await waitFor(() => pidsOf(0, ['sleep 344']).length === 1, 'the root sleep to run on the server');
    ac.abort();
    expect(await run).toMatchObject({ cancelled: true });
    await waitFor(() => pidsOf(0, ['sleep 344']).length === 0, 'the root sleep to exit', 10_000);
  });
});

describe('OpenSSH transport: host keys stay our policy', () => {
  it('unknown key: asks, records it in the first known_hosts file, connects; then known without asking', async () => {
    const knownHosts = join(dir, 'kh-unknown');
    const asked: string[] = [];
    const host = opensshHost({
      knownHostsFiles: [knownHosts],
      onUnknownHostKey: async (info) => {
        asked.push(`${info.host}:${info.port} ${info.fingerprint} ${info.recordIn ?? ''}`);
        return true;
      },
    });
    expect((await host.run({ argv: ['echo', 'in'] })).stdout).toBe('in\n');
    expect(asked).toEqual([`127.0.0.1:${sshd.port} ${sshd.hostKeyFingerprint} ${knownHosts}`]);
    const [type, blob] = sshd.hostPublicKeyLine.split(' ');
    expect(readFileSync(knownHosts, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${type} ${blob}\n`);
    const askedAgain = async (): Promise<boolean> => {
      throw new Error('asked again');
    };
    const again = opensshHost({ knownHostsFiles: [knownHosts], onUnknownHostKey: askedAgain });
    expect((await again.run({ argv: ['echo', 'again'] })).stdout).toBe('again\n');
  });

  it('unknown key not trusted, or nobody to ask: refused, nothing recorded', async () => {
    const knownHosts = join(dir, 'kh-refused');
    const host = opensshHost({ knownHostsFiles: [knownHosts], onUnknownHostKey: async () => false });
    const presentedFingerprint = sshd.hostKeyFingerprint;
    await expect(host.connect()).rejects.toMatchObject({ name: 'HostKeyError', kind: 'unknown', presentedFingerprint });
    const silent = opensshHost({ knownHostsFiles: [knownHosts] });
    await expect(silent.run({ argv: ['true'] })).rejects.toBeInstanceOf(HostKeyError);
    expect(() => readFileSync(knownHosts)).toThrow();
  });

  it('changed key: refused naming both fingerprints, never retried, never asked', async () => {
    const knownHosts = join(dir, 'kh-changed');
    const other = join(dir, 'other_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const otherLine = readFileSync(`${other}.pub`, 'utf8').trim().split(' ');
    writeFileSync(knownHosts, `[127.0.0.1]:${sshd.port} ${otherLine[0]} ${otherLine[1]}\n`);
    const otherFp = execFileSync('ssh-keygen', ['-lf', `${other}.pub`], { encoding: 'utf8' }).split(' ')[1];
    let asked = 0;
    const host = opensshHost({ knownHostsFiles: [knownHosts], onUnknownHostKey: async () => ++asked > 0 });
    const err = await host.connect().catch((e: unknown) => e);
    const presentedFingerprint = sshd.hostKeyFingerprint;
    expect(err).toMatchObject({ kind: 'changed', presentedFingerprint, knownFingerprint: otherFp });
    expect((err as Error).message).toContain('CHANGED');
    await expect(host.run({ argv: ['true'] })).rejects.toBe(err);
    expect(asked).toBe(0);
    expect(readFileSync(knownHosts, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('a pinned fingerprint: the right key connects without known_hosts, a wrong pin is refused', async () => {
    const empty = join(dir, 'kh-pinned');
    const pinned = opensshHost({ knownHostsFiles: [empty], expectedFingerprint: sshd.hostKeyFingerprint });
    expect((await pinned.run({ argv: ['echo', 'pinned'] })).stdout).toBe('pinned\n');
    expect(pinned.knownHostKeys()).toEqual([sshd.hostKeyFingerprint]);
    const wrong = opensshHost({ expectedFingerprint: 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    const presentedFingerprint = sshd.hostKeyFingerprint;
    await expect(wrong.connect()).rejects.toMatchObject({ kind: 'changed', presentedFingerprint });
  });
});

describe('OpenSSH transport: the master', () => {
  it('the master killed mid-command: ConnectionLostError, state lost, the next run reconnects', async () => {
    const host = opensshHost();
    const states: string[] = [];
    host.onStateChange((s) => states.push(s));
    await host.connect();
    const run = host.run({ argv: ['sleep', '351'] });
    await waitFor(() => pidsOf(uid, ['sleep 351']).length === 1, 'the sleep to run on the server');
    const masters = sshProcesses(host).filter((p) => p.args.endsWith('[mux]'));
    expect(masters).toHaveLength(1);
    process.kill(masters[0]?.pid ?? -1, 'SIGKILL');
    await expect(run).rejects.toBeInstanceOf(ConnectionLostError);
    await waitFor(() => states.includes('lost'), 'the host to report the connection lost');
    expect((await host.run({ argv: ['echo', 'back'] })).stdout).toBe('back\n');
    expect(states.slice(-2)).toEqual(['connecting', 'connected']);
    for (const pid of pidsOf(uid, ['sleep 351'])) process.kill(pid, 'SIGKILL');
  });

  it('close() leaves no ssh process and no socket', async () => {
    const host = opensshHost();
    await host.run({ argv: ['true'] });
    const mine = sshProcesses(host);
    expect(mine.length).toBeGreaterThanOrEqual(2); // the master and its watch
    await host.close();
    expect(sshProcesses(host)).toEqual([]);
    expect(mine.filter((p) => isAlive(p.pid))).toEqual([]);
    expect(readdirSync(controlDirs.get(host) ?? '')).toEqual([]);
  });

  it('the tool killed with SIGKILL: its master exits by itself within the idle bound', async () => {
    const harness = join(dir, 'harness.mjs');
    await build({
      stdin: {
        contents: [
          `import { OpensshHost } from ${JSON.stringify(resolve('src/transport/openssh.ts'))};`,
          'const host = new OpensshHost(JSON.parse(process.argv[2]));',
          "await host.run({ argv: ['true'] });",
          "process.stdout.write('connected\\n');",
          'setInterval(() => undefined, 1000);',
        ].join('\n'),
        resolveDir: resolve('.'),
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: harness,
      logLevel: 'silent',
    });
    const opts = { ...options(), controlDir: join(dir, 'ssh-killed'), idleExitS: 1 };
    const tool = spawn(process.execPath, [harness, JSON.stringify(opts)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    tool.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await waitFor(() => out.includes('connected'), 'the tool to connect');
    const masters = listProcesses().filter((p) => p.args.startsWith(`ssh: ${opts.controlDir}`));
    expect(masters).toHaveLength(1);
    const killedAt = Date.now();
    tool.kill('SIGKILL');
    await waitFor(() => masters.every((m) => !isAlive(m.pid)), 'the orphaned master to exit', 10_000);
    const tookMs = Date.now() - killedAt;
    console.log(`master gone ${tookMs} ms after the tool was killed (ControlPersist ${opts.idleExitS} s)`);
    expect(tookMs).toBeLessThan(6000);
    expect(listProcesses().filter((p) => p.args.includes(opts.controlDir))).toEqual([]);
  });

  it('through a jump host: the hop has its own master and host-key check, named as the hop', async () => {
    const hopKnownHosts = join(dir, 'kh-hop');
    const asked: string[] = [];
    const hop = {
      ...sshd.hostOptions(sshd.users.nopw),
      name: 'bastion',
      knownHostsFiles: [hopKnownHosts],
      onUnknownHostKey: async (info: { fingerprint: string }) => {
        asked.push(`bastion ${info.fingerprint}`);
        return true;
      },
    };
    const host = opensshHost({ jump: [hop] });
    expect((await host.run({ argv: ['sh', '-c', 'echo "$SSH_CLIENT" | cut -d" " -f1'] })).stdout).toBe('127.0.0.1\n');
    expect(asked).toEqual([`bastion ${sshd.hostKeyFingerprint}`]);
    const mine = sshProcesses(host).map((p) => p.args);
    // The target's master (titled `[mux]`) and the hop's (-N: it keeps its command line).
    expect(mine.filter((p) => p.endsWith('.t [mux]'))).toHaveLength(1);
    expect(mine.filter((p) => p.startsWith('ssh -M ') && p.endsWith(' -N 127.0.0.1'))).toHaveLength(1);
    expect(mine.some((p) => p.includes(' -W [127.0.0.1]:'))).toBe(true);
    await host.close();
    expect(sshProcesses(host)).toEqual([]);

    const untrusted = { ...hop, knownHostsFiles: [join(dir, 'kh-hop-none')], onUnknownHostKey: async () => false };
    const refusing = opensshHost({ jump: [untrusted] });
    await expect(refusing.connect()).rejects.toThrow(/^bastion: the host key of 127\.0\.0\.1:\d+ .* is not known/);
  });
});
