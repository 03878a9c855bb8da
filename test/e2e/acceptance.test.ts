/**
 * Issue acceptance, as an operator runs it: `lab serve --scenario fresh --inventory-out inv.json` in its
 * own process, then `apply --inventory inv.json --yes --json` takes both hosts through every stage to
 * pass, a second apply changes nothing, and `check` exits 0. Also: `ready` passes every check untouched.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/l20-setup.js');
const run = promisify(execFile);

interface Report {
  stages: Array<{
    id: string;
    status: string;
    changed: number;
    checks: Array<{ id: string; host: string | null; status: string; summary: string }>;
    steps: Array<{ id: string; host: string; status: string; summary: string; error?: string }>;
  }>;
  summary: Record<string, number>;
}

class Served {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'l20-accept-'));
  readonly inventory = join(this.dir, 'inv.json');
  readonly env = {
    ...process.env,
    HOME: this.dir,
    XDG_STATE_HOME: join(this.dir, 'state'),
    XDG_CONFIG_HOME: join(this.dir, 'config'),
    NO_COLOR: '1',
  };

  async start(scenario: string): Promise<void> {
    this.child = spawn(
      process.execPath,
      [BIN, 'lab', 'serve', '--scenario', scenario, '--speed', 'max', '--inventory-out', this.inventory],
      { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    this.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    // The inventory is written once every host listens.
    await new Promise<void>((resolve, reject) => {
      const poll = setInterval(() => {
        if (existsSync(this.inventory) && out.includes('serving; Ctrl-C to stop')) {
          clearInterval(poll);
          resolve();
        }
      }, 50);
      this.child!.once('exit', (code) => {
        clearInterval(poll);
        reject(new Error(`lab serve exited ${code}: ${out}`));
      });
    });
  }

  async cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const r = await run(process.execPath, [BIN, ...args, '--inventory', this.inventory], {
        env: this.env,
        maxBuffer: 256 * 1024 * 1024,
      });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child!.once('exit', r));
      this.child.kill('SIGINT');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function notPassing(r: Report): string[] {
  return r.stages.flatMap((s) =>
    s.checks
      .filter((c) => c.status !== 'pass' && c.status !== 'skip')
      .map((c) => `${s.id} ${c.host ?? 'cluster'} ${c.id} ${c.status}: ${c.summary}`),
  );
}

describe('acceptance: fresh lab → apply → every check passes; apply again changes nothing', () => {
  const lab = new Served();
  beforeAll(() => lab.start('fresh'), 60_000);
  afterAll(() => lab.stop());

  it('applies every stage, verifies, and converges', async () => {
    const first = await lab.cli(['apply', '--yes', '--allow-reboot', '--json']);
    const report = JSON.parse(first.stdout) as Report;
    const failedSteps = report.stages.flatMap((s) =>
      s.steps.filter((x) => x.status === 'failed').map((x) => `${x.host} ${x.id}: ${x.error ?? x.summary}`),
    );
    expect(failedSteps).toEqual([]);
    expect(notPassing(report)).toEqual([]);
    expect(first.code).toBe(0);
    expect(report.summary.changed).toBeGreaterThan(0);

    const second = await lab.cli(['apply', '--yes', '--allow-reboot', '--json']);
    const again = JSON.parse(second.stdout) as Report;
    expect(again.summary.changed).toBe(0);
    expect(again.stages.every((s) => s.steps.every((x) => x.status === 'skipped'))).toBe(true);

    const check = await lab.cli(['check']);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/ 0 failed, 0 errors/);
  }, 600_000);
});

describe('acceptance: ready passes untouched', () => {
  const lab = new Served();
  beforeAll(() => lab.start('ready'), 60_000);
  afterAll(() => lab.stop());

  it('check --json: every check passes, plan has nothing to do', async () => {
    const r = await lab.cli(['check', '--json']);
    expect(notPassing(JSON.parse(r.stdout) as Report)).toEqual([]);
    expect(r.code).toBe(0);
    const plan = JSON.parse((await lab.cli(['plan', '--json'])).stdout) as Report;
    expect(
      plan.stages.flatMap((s) =>
        s.steps.filter((x) => x.status === 'planned').map((x) => `${x.host} ${x.id}: ${x.summary}`),
      ),
    ).toEqual([]);
  }, 300_000);
});
