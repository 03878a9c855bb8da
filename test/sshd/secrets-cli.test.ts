/**
 * Secrets never leave memory (issue 7): the real CLI, against a real sshd whose user needs a sudo password,
 * given that password on standard input. A random password is planted; while each verb runs no process on
 * the machine has it in argv or environment, and afterwards it is in no file the tool wrote — the session
 * logs, the configuration directory, the support bundle (unpacked), the report — nor in its output, nor in
 * the server's log. sudo did use it: a root-only probe succeeded. An inventory that tries to carry a password
 * is refused without echoing it. Figures: `secrets: N places searched, 0 found`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv } from '../helpers/cli.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { filesHolding as filesHoldingIn, processesHolding } from '../helpers/processes.js';

let sshd: Sshd;
let home: string;
let inventory: string;
let password: string;
const searched = { files: 0 };
/** Files under `dir` holding `secret` (a .tar.gz searched unpacked), counted in `searched`. */
const filesHolding = (dir: string, secret: string): string[] => filesHoldingIn(dir, secret, searched);

beforeAll(async () => {
  sshd = await startSshd();
  password = sshd.users.cliPassword;
  home = mkdtempSync(join(tmpdir(), 'l20-secrets-'));
  inventory = join(home, 'inventory.json');
  writeFileSync(
    inventory,
    JSON.stringify({
      version: 1,
      hosts: [
        {
          name: 'sshd-a',
          address: '127.0.0.1',
          port: sshd.port,
          user: sshd.users.cli,
          role: 'head',
          auth: { method: 'identityFile', path: sshd.clientKeyPath },
          knownHostsFile: sshd.knownHostsPath,
        },
      ],
    }),
  );
});

afterAll(async () => {
  await sshd?.stop();
});

/** The account's home directory, as the password database has it. */
function homedir(user: string): string {
  return execFileSync('getent', ['passwd', user], { encoding: 'utf8' }).trim().split(':')[5]!;
}

/** Runs the CLI with the password on stdin, scanning every process on the machine while it runs. */
async function cliWithPassword(
  args: string[],
  stdin = `${password}\n`,
): Promise<{ code: number; stdout: string; stderr: string; exposed: string[]; scans: number }> {
  const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(home), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(stdin);
  const exposed = new Set<string>();
  let scans = 0;
  let exited = false;
  const done = new Promise<number>((resolve) =>
    child.once('close', (code) => {
      exited = true;
      resolve(code ?? -1);
    }),
  );
  while (!exited) {
    for (const p of processesHolding(password)) exposed.add(p);
    scans++;
    await new Promise((r) => setTimeout(r, 25));
  }
  return { code: await done, stdout, stderr, exposed: [...exposed], scans };
}

describe('the sudo password stays in memory', () => {
  it('check: sudo works with it (a root-only probe succeeds), and it is in no argv, environment, output or file', async () => {
    const r = await cliWithPassword([
      'check',
      '--inventory',
      inventory,
      '--stage',
      'network',
      '--sudo-password-stdin',
      '--json',
    ]);
    expect(r.stderr).not.toMatch(/internal error/);
    // This Debian host lacks what the network stage reads (no fabric, no systemd as PID 1): some checks cannot
    // tell (exit 2), but every one of them ran over the connection.
    expect([0, 1, 2]).toContain(r.code);
    const checks = (JSON.parse(r.stdout) as { stages: Array<{ checks: Array<{ summary: string }> }> }).stages[0]!
      .checks;
    expect(checks.length).toBeGreaterThan(5);
    expect(checks.filter((c) => /cannot connect|lost .* while probing/.test(c.summary))).toEqual([]);
    expect(r.scans).toBeGreaterThan(1);
    expect(r.exposed).toEqual([]);
    expect(r.stdout + r.stderr).not.toContain(password);
    // sudo used it: the session log has sudo commands that ran as root and exited 0.
    const logs = join(home, 'state', 'l20-setup', 'sessions');
    const events = readdirSync(logs).flatMap((f) =>
      readFileSync(join(logs, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
    const sudoRuns = new Set(events.filter((e) => e.type === 'cmd.start' && e.sudo === true).map((e) => e.runId));
    const okSudo = events.filter((e) => e.type === 'cmd.exit' && sudoRuns.has(e.runId) && e.exitCode === 0);
    expect(sudoRuns.size).toBeGreaterThan(0);
    expect(okSudo.length).toBeGreaterThan(0);
    expect(filesHolding(home, password)).toEqual([]);
  }, 120_000);

  it('bundle and report: the archive (unpacked) and the report do not hold it', async () => {
    const bundle = await cliWithPassword([
      'bundle',
      '--inventory',
      inventory,
      '--sudo-password-stdin',
      '--out',
      join(home, 'bundle.tar.gz'),
    ]);
    expect(bundle.stderr).not.toMatch(/internal error/);
    expect(bundle.exposed).toEqual([]);
    expect(statSync(join(home, 'bundle.tar.gz')).size).toBeGreaterThan(1000);
    const report = await cliWithPassword([
      'report',
      '--inventory',
      inventory,
      '--sudo-password-stdin',
      '--out',
      join(home, 'report.md'),
    ]);
    expect(report.stderr).not.toMatch(/internal error/);
    expect(report.exposed).toEqual([]);
    expect(readFileSync(join(home, 'report.md'), 'utf8')).toMatch(/sshd-a/);
    for (const r of [bundle, report]) expect(r.stdout + r.stderr).not.toContain(password);
    expect(filesHolding(home, password)).toEqual([]);
    expect(sshd.readLog()).not.toContain(password);
    searched.files += 3; // both outputs and the server log
    console.log(
      `secrets: ${searched.files} places searched (files under the tool's home incl. the unpacked bundle, session logs, report; outputs; sshd log) plus every process's argv and environment while it ran: 0 found`,
    );
  }, 300_000);

  it('a host file that holds the password (~/.nccl.conf): every output and file has it scrubbed', async () => {
    // An operator pasted the sudo password into the NCCL config the nccl stage's probe prints back.
    const conf = join(homedir(sshd.users.cli), '.nccl.conf');
    writeFileSync(conf, `NCCL_DEBUG=WARN\nNCCL_PASSWORD=${password}\n`, { mode: 0o600 });
    execFileSync('chown', [`${sshd.users.cli}:`, conf]);
    try {
      const r = await cliWithPassword([
        'check',
        '--inventory',
        inventory,
        '--stage',
        'nccl',
        '--sudo-password-stdin',
        '--json',
      ]);
      expect(r.stderr).not.toMatch(/internal error/);
      expect(r.stdout).toContain('NCCL_PASSWORD=[REDACTED:sudo-password]');
      expect(r.stdout + r.stderr).not.toContain(password);
      expect(filesHolding(home, password)).toEqual([]);
    } finally {
      rmSync(conf, { force: true });
    }
  }, 120_000);

  it('an inventory that carries a password is refused without echoing it, and nothing is saved', async () => {
    const bad = join(home, 'bad.json');
    const inv = JSON.parse(readFileSync(inventory, 'utf8')) as { hosts: Array<Record<string, unknown>> };
    inv.hosts[0]!.sudoPassword = password;
    writeFileSync(bad, JSON.stringify(inv));
    const r = await cliWithPassword(['check', '--inventory', bad, '--stage', 'os']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/sudoPassword/);
    expect(r.stderr + r.stdout).not.toContain(password);
    expect(filesHolding(home, password).filter((f) => f !== bad)).toEqual([]);
  }, 60_000);
});
