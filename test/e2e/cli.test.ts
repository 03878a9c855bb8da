/** The built CLI as scripts use it: exit codes, JSON contract, plain output, help and version. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/l20-setup.js');
const run = promisify(execFile);

async function cli(args: string[], env: Record<string, string> = {}) {
  const home = mkdtempSync(join(tmpdir(), 'l20-cli-home-'));
  try {
    const r = await run(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        HOME: home,
        XDG_STATE_HOME: join(home, 'state'),
        XDG_CONFIG_HOME: join(home, 'config'),
        ...env,
      },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr, home };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr, home };
  }
}

describe('l20-setup CLI', () => {
  it('check --lab --stage inventory --json prints the version-1 report, every check passing on two hosts', async () => {
    const r = await cli(['check', '--lab', '--stage', 'inventory', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as {
      version: number;
      hosts: Array<{ name: string; address: string }>;
      stages: Array<{
        id: string;
        status: string;
        changed: number;
        checks: Array<{ id: string; host: string | null; status: string; summary: string; evidence: string }>;
        steps: unknown[];
      }>;
      summary: Record<string, number>;
    };
    expect(report.version).toBe(1);
    expect(report.hosts.map((h) => h.name)).toEqual(['l20-n1', 'l20-n2']);
    expect(report.hosts[0]!.address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(report.stages).toHaveLength(1);
    const stage = report.stages[0]!;
    expect(stage).toMatchObject({ id: 'inventory', status: 'pass', changed: 0, steps: [] });
    const ids = new Set(stage.checks.map((c) => c.id));
    for (const id of [
      'inventory.os',
      'inventory.cpu-mem',
      'inventory.nics',
      'inventory.gpus',
      'inventory.pcie',
      'inventory.netdevs',
      'inventory.mgmt',
      'inventory.rdma',
      'inventory.links',
      'inventory.topology',
      'inventory.stack',
      'inventory.pair-hardware',
      'inventory.cabling',
    ]) {
      expect(ids.has(id)).toBe(true);
    }
    // Fresh fabric ports are down: the cabling is not seen yet, a skip that leaves the stage a pass.
    expect(stage.checks.filter((c) => c.status !== 'pass').map((c) => `${c.id} ${c.status}`)).toEqual([
      'inventory.cabling skip',
    ]);
    expect(
      stage.checks
        .filter((c) => c.host === null)
        .map((c) => c.id)
        .sort(),
    ).toEqual(['inventory.cabling', 'inventory.distinct-hosts', 'inventory.pair-hardware']);
    expect(stage.checks.every((c) => c.summary.length > 0 && c.evidence.length > 0)).toBe(true);
    expect(report.summary).toEqual({ pass: stage.checks.length - 1, warn: 0, fail: 0, error: 0, skip: 1, changed: 0 });
    // The session log holds every command with its full output.
    const logs = readdirSync(join(r.home, 'state/l20-setup/sessions'));
    expect(logs).toHaveLength(1);
    const events = readFileSync(join(r.home, 'state/l20-setup/sessions', logs[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; host?: string; exitCode?: number });
    expect(events.filter((e) => e.type === 'cmd.exit' && e.host === 'l20-n2').length).toBeGreaterThan(10);
  });

  it('prints plain lines without a TTY and no colour codes', async () => {
    const r = await cli(['check', '--lab', '--stage', 'inventory'], { NO_COLOR: '1' });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\[l20-n1\] PASS {2}inventory\.gpus {2}8 × NVIDIA L20/m);
    expect(r.stdout).toMatch(/^\[cluster\] PASS {2}inventory\.pair-hardware/m);
    expect(r.stdout).not.toMatch(/\u001b\[/);
  });

  it('an unreachable host is a connection error: exit 2, its checks are errors with the reason', async () => {
    const home = mkdtempSync(join(tmpdir(), 'l20-inv-'));
    const inv = join(home, 'inv.yaml');
    (await import('node:fs')).writeFileSync(
      inv,
      'hosts:\n  - name: gone\n    address: 127.0.0.1\n    port: 1\n    user: nobody\n    role: head\n    auth: { method: identityFile, path: /nonexistent }\n',
    );
    const r = await cli(['check', '--inventory', inv, '--json']);
    expect(r.code).toBe(2);
    const report = JSON.parse(r.stdout) as {
      stages: Array<{ checks: Array<{ host: string | null; status: string; evidence: string; fix: string }> }>;
    };
    const hostChecks = report.stages[0]!.checks.filter((c) => c.host === 'gone');
    expect(hostChecks.length).toBe(11);
    expect(
      hostChecks.every((c) => c.status === 'error' && c.evidence.includes('127.0.0.1:1') && c.fix.includes('ssh -p')),
    ).toBe(true);
    expect(report.stages[0]!.checks.filter((c) => c.host === null).every((c) => c.status === 'skip')).toBe(true);
  });

  it('reports usage and config errors with exit 2 and a message that says what to do', async () => {
    const bad = await cli(['check', '--stage', 'bogus', '--lab']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown stage; stages are inventory, os');
    const unknownFlag = await cli(['check', '--frobnicate']);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("Unknown option '--frobnicate'");
    const noInv = await cli(['check']);
    expect(noInv.code).toBe(2);
    expect(noInv.stderr).toContain('no saved inventory yet');
    const home = mkdtempSync(join(tmpdir(), 'l20-inv-'));
    const inv = join(home, 'inv.json');
    (await import('node:fs')).writeFileSync(
      inv,
      JSON.stringify({ hosts: [{ name: 'a', address: '10.0.0.1', port: 99999, role: 'head' }] }),
    );
    const badInv = await cli(['check', '--inventory', inv]);
    expect(badInv.code).toBe(2);
    expect(badInv.stderr).toContain('hosts[0].port = 99999');
  });

  it('has --help and --version on every verb', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const verb of [[], ['check'], ['lab'], ['plan'], ['doctor'], ['resolve']]) {
      const v = await cli([...verb, '--version']);
      expect(v.code).toBe(0);
      expect(v.stdout.trim()).toBe(pkg.version);
      const h = await cli([...verb, '--help']);
      expect(h.code).toBe(0);
      expect(h.stdout).toContain('l20-setup');
    }
  });
});
