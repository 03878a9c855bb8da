/**
 * Real OpenSSH + real sudo: a sudo password goes on stdin only (never argv, logs or files); a wrong or
 * missing password fails clearly instead of hanging; passwordless sudo needs no password (issue 7).
 * Through the transport's sudo wrapper: the command's own exit status and stdin (after the password line)
 * arrive unchanged, and a cancel under `sudo -S` ends the root processes too. The password user's tests
 * live here only: the harness sets its password once per file that reads it.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteArgv, SUDO_WRAPPER_ARGV } from '../../src/transport/quote.js';
import { OpensshHost } from '../../src/transport/openssh.js';
import { SshHost } from '../../src/transport/ssh.js';
import type { Host } from '../../src/transport/types.js';
import { filesHolding, isAlive, processesHolding } from '../helpers/processes.js';
import { listProcesses, processTree, startSshd, waitFor, type Sshd } from '../helpers/sshd.js';

/** What the transport puts between sudo and the command (src/transport/quote.ts). */
const WRAPPER = quoteArgv(SUDO_WRAPPER_ARGV);

let sshd: Sshd;
const hosts: Host[] = [];

beforeAll(async () => {
  sshd = await startSshd();
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
});

function makeHost(user: string, sudoPassword?: string): SshHost {
  const host = new SshHost(sshd.hostOptions(user, sudoPassword === undefined ? {} : { sudoPassword }));
  hosts.push(host);
  return host;
}

describe('real sshd: sudo', () => {
  it('runs as root with the password on stdin only: not in any argv or environment, log or file', async () => {
    const password = sshd.users.pwPassword;
    const host = makeHost(sshd.users.pw, password);
    const id = await host.run({ argv: ['id', '-u'] }, { sudo: true });
    expect(id).toMatchObject({ exitCode: 0, stdout: '0\n' });
    expect(id.commandLine).toBe(`sudo -k -S -p '' -- ${WRAPPER} env LC_ALL=C id -u`);
    expect(id.stdout + id.stderr).not.toContain(password);

    // While a sudo command runs, look at every process on the machine.
    const long = host.run({ argv: ['sleep', '5'] }, { sudo: true });
    await waitFor(
      () => processTree(sshd.pid).some((p) => p.uid === 0 && p.args === 'sleep 5'),
      'sleep 5 to run as root under this sshd',
    );
    expect(processesHolding('sleep\x005')).not.toEqual([]); // the scan does see the running command's argv
    expect(processesHolding(password)).toEqual([]);
    const done = await long;
    expect(done).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });

    expect(sshd.readLog()).not.toContain(password);
    for (const log of ['/var/log/auth.log', '/var/log/secure', '/var/log/sudo.log']) {
      if (existsSync(log)) expect(readFileSync(log, 'utf8')).not.toContain(password);
    }
    expect(filesHolding(sshd.dir, password)).toEqual([]);
    expect(filesHolding(`/home/${sshd.users.pw}`, password)).toEqual([]);
  });

  it("fails a wrong password with sudo's own message, without hanging", async () => {
    const wrong = `wrong-${sshd.users.pwPassword}`;
    const host = makeHost(sshd.users.pw, wrong);
    const r = await host.run({ argv: ['id', '-u'] }, { sudo: true, timeoutMs: 30_000 });
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^sudo: 1 incorrect password attempt$/m);
    expect(r.stderr).not.toContain(wrong);
  });

  it('says sudo wants a password when none is configured, without hanging', async () => {
    const host = makeHost(sshd.users.pw);
    const r = await host.run({ argv: ['id', '-u'] }, { sudo: true, timeoutMs: 30_000 });
    expect(r).toMatchObject({ exitCode: 1, timedOut: false, stdout: '' });
    expect(r.commandLine).toBe(`sudo -n -- ${WRAPPER} env LC_ALL=C id -u`);
    expect(r.stderr).toMatch(/^sudo: a password is required$/m);
  });

  it('runs passwordless sudo with sudo -n, and never sends a configured password where sudo asks none', async () => {
    const plain = makeHost(sshd.users.nopw);
    expect(await plain.run({ argv: ['id', '-u'] }, { sudo: true })).toMatchObject({ exitCode: 0, stdout: '0\n' });

    // With a password configured but not needed, it must not end up on the command's stdin.
    const withPassword = makeHost(sshd.users.nopw, 'not-needed-here');
    const cat = await withPassword.run({ argv: ['cat'] }, { sudo: true });
    expect(cat).toMatchObject({ exitCode: 0, stdout: '' });
    expect(cat.commandLine).toBe(`sudo -n -- ${WRAPPER} env LC_ALL=C cat`);
  });
});

describe('real sshd: the sudo wrapper changes nothing for the command', () => {
  it("exits with the command's own status; a command killed by a signal reads as 128+n", async () => {
    const host = makeHost(sshd.users.nopw);
    expect(await host.run({ argv: ['bash', '-c', 'echo out; echo err >&2; exit 7'] }, { sudo: true })).toMatchObject({
      exitCode: 7,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
    });
    expect(await host.run({ script: 'echo "$1 $(id -u)"; exit 3\n', args: ['x y'] }, { sudo: true })).toMatchObject({
      exitCode: 3,
      stdout: 'x y 0\n',
    });
    expect(await host.run({ argv: ['bash', '-c', 'kill -KILL $$'] }, { sudo: true })).toMatchObject({
      exitCode: 137,
      signal: null,
      cancelled: false,
    });
  });

  it('sudo -S: the password works and stdin after it reaches dd byte for byte', async () => {
    const host = makeHost(sshd.users.pw, sshd.users.pwPassword);
    const target = join(sshd.dir, 'dd-target');
    // Every byte value, a line like a password, and no final newline: nothing may be added, dropped or eaten.
    const bytes = Buffer.concat([
      Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
      Buffer.from(`\n${sshd.users.pwPassword}\nlast`),
    ]);
    try {
      const r = await host.run({ argv: ['dd', `of=${target}`, 'status=none'] }, { sudo: true, stdin: bytes });
      expect(r).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
      expect(r.commandLine).toBe(`sudo -k -S -p '' -- ${WRAPPER} env LC_ALL=C dd of=${target} status=none`);
      expect(Buffer.compare(readFileSync(target), bytes)).toBe(0);
      expect(statSync(target).uid).toBe(0);
    } finally {
      rmSync(target, { force: true });
    }
  });

  it('sudo -S: cancelling a bash -s script ends it and the background sleep it started', async () => {
    const host = makeHost(sshd.users.pw, sshd.users.pwPassword);
    const sleeps = ['sleep 340', 'sleep 341'];
    const ac = new AbortController();
    const run = host.run({ script: 'sleep 340 &\necho "started $!"\nsleep 341\n' }, { sudo: true, signal: ac.signal });
    try {
      await waitFor(
        () => listProcesses().filter((p) => p.uid === 0 && sleeps.includes(p.args)).length === 2,
        'both root sleeps to run',
      );
      // By pid: a process that escapes is reparented to init, out of sshd's tree.
      const running = processTree(sshd.pid).filter((p) => p.pid !== sshd.pid && !p.args.startsWith('sshd'));
      expect(running.map((p) => p.args)).toContain(
        `sudo -k -S -p  -- ${SUDO_WRAPPER_ARGV.join(' ')} env LC_ALL=C bash -s --`,
      );
      ac.abort();
      expect(await run).toMatchObject({ cancelled: true });
      await waitFor(() => running.every((p) => !isAlive(p.pid)), 'every process of the run to exit', 10_000);
      expect(listProcesses().filter((p) => sleeps.includes(p.args))).toEqual([]);
    } finally {
      // A failing run must not leave 5-minute root sleeps behind.
      for (const p of listProcesses().filter((x) => sleeps.includes(x.args))) process.kill(p.pid, 'SIGKILL');
    }
  });
});

describe('real sshd: sudo over the OpenSSH transport', () => {
  it('the password goes on stdin only (never in an argv), and the stdin after it arrives unchanged', async () => {
    const password = sshd.users.pwPassword;
    const configFile = join(sshd.dir, 'openssh_client_config'); // the machine's own ~/.ssh/config stays out
    writeFileSync(configFile, 'IdentitiesOnly yes\nIdentityAgent none\n', { mode: 0o600 });
    const user = sshd.users.pw;
    const host = new OpensshHost({
      ...sshd.hostOptions(user, { sudoPassword: password }),
      sshAlias: '127.0.0.1',
      inventory: { port: sshd.port, user, identityFiles: [sshd.clientKeyPath] },
      sshConfigFile: configFile,
      controlDir: join(sshd.dir, 'ssh'),
    });
    hosts.push(host);
    expect(await host.run({ argv: ['id', '-u'] }, { sudo: true })).toMatchObject({ exitCode: 0, stdout: '0\n' });
    const long = host.run({ argv: ['sleep', '2'] }, { sudo: true });
    const rootSleep = () => processTree(sshd.pid).some((p) => p.uid === 0 && p.args === 'sleep 2');
    await waitFor(rootSleep, 'sleep 2 to run as root');
    expect(processesHolding(password)).toEqual([]);
    expect(await long).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
    const stdin = `${password}\nnext line\nlast`;
    const cat = await host.run({ argv: ['cat'] }, { sudo: true, stdin });
    expect(cat).toMatchObject({ exitCode: 0, stderr: '' });
    expect(cat.stdout).toBe(stdin.replaceAll(password, '[REDACTED:sudo-password]'));
  });
});
