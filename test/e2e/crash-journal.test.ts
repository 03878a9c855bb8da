/**
 * Crash safety as an operator meets it: `lab serve` in its own process, `apply --yes --allow-reboot --json` as a child
 * with its own XDG_STATE_HOME, killed with SIGKILL while the journal shows a step in flight. Then the
 * next apply refuses (exit 2) naming the hosts and the step, check only warns, --rollback undoes the
 * step on both hosts (the file it created is gone) and removes the journal; after another kill,
 * --resume --yes --allow-reboot takes the cluster to every check passing. In a real terminal (tmux),
 * the TUI's modal shows the in-flight step after a kill and r resumes it to a verified end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, ROOT } from '../helpers/cli.js';
import { tmuxServer } from '../helpers/tmux.js';
import { loadInventoryFile } from '../../src/config/store.js';
import { hostsFromConfig } from '../../src/target.js';
import { BENCH_PATH } from '../../checks/nccl/bench-script.js';
import type { JournalFile } from '../../src/engine/journal.js';
import { STAGE_IDS } from '../../src/engine/types.js';

interface Report {
  stages: Array<{ id: string; checks: Array<{ id: string; host: string | null; status: string; summary: string }>; steps: Array<{ id: string; host: string; status: string; error?: string }> }>;
}

/** A lab in its own process and a state directory of our own (where the journal lives). */
class Lab {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'l20-crash-'));
  readonly inventory = join(this.dir, 'inv.json');
  env: NodeJS.ProcessEnv = { ...process.env, HOME: this.dir, XDG_STATE_HOME: join(this.dir, 'state'), XDG_CONFIG_HOME: join(this.dir, 'config'), NO_COLOR: '1' };

  async start(scenario: string, speed: string): Promise<void> {
    this.child = spawn(process.execPath, [BIN, 'lab', 'serve', '--scenario', scenario, '--speed', speed, '--inventory-out', this.inventory], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    this.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => existsSync(this.inventory) && out.includes('serving; Ctrl-C to stop'), () => `lab serve to listen: ${out}`, 60_000, this.child);
  }

  get journalDir(): string {
    return join(this.env.XDG_STATE_HOME!, 'l20-setup', 'journal');
  }

  /** The journal file's content, or undefined while there is none (a rename replaces it whole: never half-read). */
  journal(): JournalFile | undefined {
    const file = existsSync(this.journalDir) ? readdirSync(this.journalDir).find((f) => f.endsWith('.json')) : undefined;
    return file ? (JSON.parse(readFileSync(join(this.journalDir, file), 'utf8')) as JournalFile) : undefined;
  }

  cli(args: string[]) {
    return cli([...args, '--inventory', this.inventory], this.env);
  }

  /** Starts `apply …` and kills it with SIGKILL once the journal satisfies `ready`; the journal the kill left. */
  async crash(args: string[], ready: (j: JournalFile) => boolean, what: string): Promise<JournalFile> {
    const child = spawn(process.execPath, [BIN, ...args, '--inventory', this.inventory], { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
    await until(() => { const j = this.journal(); return j !== undefined && j.pid === child.pid && ready(j); }, () => `${what}; journal: ${JSON.stringify(this.journal())}\n${out.slice(-2000)}`, 300_000, child);
    child.kill('SIGKILL');
    // Reaped before we go on: a zombie would still answer kill(pid, 0) and look like a running apply.
    expect(await exited).toBe('SIGKILL');
    return this.journal()!;
  }

  /** Whether each host has the file (through the inventory's own SSH settings, as the tool reaches them). */
  async hasFile(path: string): Promise<Record<string, boolean>> {
    const hosts = hostsFromConfig(await loadInventoryFile(this.inventory));
    try {
      const out: Record<string, boolean> = {};
      for (const h of hosts) out[h.name] = (await h.run({ argv: ['stat', '-c', '%F', '--', path] }, { sudo: true })).exitCode === 0;
      return out;
    } finally {
      await Promise.all(hosts.map((h) => h.close()));
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

/** Polls a condition (every 20 ms) until it holds; fails early if the process it waits on ends. */
async function until(cond: () => boolean, what: () => string, timeoutMs: number, proc?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (proc && proc.exitCode !== null) throw new Error(`process exited ${proc.exitCode} while waiting for ${what()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 20)); // polling interval of the condition, not a fixed wait
  }
}

const notPassing = (r: Report) => r.stages.flatMap((s) => s.checks.filter((c) => c.status !== 'pass' && c.status !== 'skip').map((c) => `${s.id} ${c.host ?? 'cluster'} ${c.id} ${c.status}: ${c.summary}`));

describe('crash journal: kill -9 in the middle of an apply', () => {
  const lab = new Lab();
  beforeAll(() => lab.start('fresh', '20'), 60_000);
  afterAll(() => lab.stop());

  it('the next apply refuses naming host and step; check warns; --rollback undoes the step on both hosts', async () => {
    // nccl.bench-tools writes the benchmark (a new file) first, then pip installs for seconds: killed there.
    const j = await lab.crash(['apply', '--yes', '--allow-reboot', '--json'], (x) => x.inFlight.length === 2 && x.inFlight.every((s) => s.step === 'nccl.bench-tools' && /pip install/.test(s.command ?? '')), 'nccl.bench-tools in pip install on both hosts');
    expect(j.inFlight.map((s) => s.host).sort()).toEqual(['l20-n1', 'l20-n2']);
    expect(j.inFlight[0]!.undo?.files).toEqual([{ path: BENCH_PATH, existed: false }]);
    expect(await lab.hasFile(BENCH_PATH)).toEqual({ 'l20-n1': true, 'l20-n2': true });

    const refused = await lab.cli(['apply', '--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/an apply on these hosts was interrupted \(run \d{8}T\d{6}Z, pid \d+/);
    expect(refused.stderr).toMatch(/l20-n1 {2}nccl\.bench-tools \(stage nccl, safe\) in flight since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC — running: .*pip install/);
    expect(refused.stderr).toMatch(/l20-n2 {2}nccl\.bench-tools \(stage nccl, safe\) in flight since/);
    expect(refused.stderr).toContain(`l20-setup apply --resume --inventory ${lab.inventory} --yes [--allow-reboot]   re-runs nccl and the stages after it (ray, vllm)`);
    expect(refused.stderr).toContain(`l20-setup apply --rollback --inventory ${lab.inventory}`);
    expect(refused.stderr).toContain('apply refuses to continue on its own after an interrupted apply: pass --resume or --rollback.');

    const check = await lab.cli(['check', '--stage', 'inventory']);
    expect(check.code).toBe(0);
    expect(check.stderr).toContain('nccl.bench-tools (stage nccl, safe) in flight');
    expect(lab.journal()?.runId).toBe(j.runId);

    const rollback = await lab.cli(['apply', '--rollback']);
    expect(rollback.code, rollback.stdout + rollback.stderr).toBe(0);
    expect(rollback.stdout).toContain(`rollback of run ${j.runId}:`);
    for (const host of ['l20-n1', 'l20-n2']) {
      expect(rollback.stdout).toContain(`  ${host}  nccl.bench-tools (nccl)\n    ✔ removed (new file) ${BENCH_PATH}\n`);
    }
    expect(rollback.stdout).toContain('rolled back; journal removed.');
    expect(lab.journal()).toBeUndefined();
    expect(await lab.hasFile(BENCH_PATH)).toEqual({ 'l20-n1': false, 'l20-n2': false });
    // Nothing left to undo or resume.
    expect((await lab.cli(['apply', '--rollback'])).stderr).toContain('nothing to roll back');
  }, 600_000);

  it('after another kill, --resume --yes --allow-reboot finishes with every check passing and removes the journal', async () => {
    const j = await lab.crash(['apply', '--yes', '--allow-reboot', '--json'], (x) => x.inFlight.length > 0 && x.inFlight.every((s) => s.command !== undefined), 'a step running a command');
    expect(j.inFlight.length).toBeGreaterThan(0);
    const first = j.inFlight.map((s) => s.stage).sort((a, b) => STAGE_IDS.indexOf(a) - STAGE_IDS.indexOf(b))[0]!;
    const resumed = await lab.cli(['apply', '--resume', '--yes', '--allow-reboot', '--json']);
    expect(resumed.stderr).toContain(`l20-setup: resuming run ${j.runId}: ${first}`);
    const report = JSON.parse(resumed.stdout) as Report;
    expect(report.stages[0]?.id).toBe(first);
    expect(report.stages.flatMap((s) => s.steps.filter((x) => x.status === 'failed').map((x) => `${x.host} ${x.id}: ${x.error}`))).toEqual([]);
    expect(notPassing(report)).toEqual([]);
    expect(resumed.code).toBe(0);
    expect(lab.journal()).toBeUndefined();
    const check = await lab.cli(['check']);
    expect(check.code).toBe(0);
    expect(check.stderr).not.toContain('interrupted');
  }, 600_000);
});

describe('crash journal in the TUI (tmux)', () => {
  const lab = new Lab();
  const server = tmuxServer(`l20crash-${process.pid}`);
  beforeAll(() => lab.start('fresh', '10'), 60_000);
  afterAll(async () => {
    server.close();
    await lab.stop();
  });

  it('after a kill in apt-get install the modal names the step on both hosts; r resumes it to a verified end', async () => {
    const t = server.terminal('crash');
    // The TUI reads the journal from its own state directory: the killed apply writes there.
    lab.env = { ...lab.env, HOME: t.home, XDG_STATE_HOME: join(t.home, 'state') };
    await lab.crash(['apply', '--stage', 'os,nic-stack', '--yes'], (x) => x.inFlight.length === 2 && x.inFlight.every((s) => s.step === 'os.install-base' && /apt-get install/.test(s.command ?? '')), 'os.install-base in apt-get install');

    t.keys(`node ${join(ROOT, 'bin/l20-setup.js')} --inventory ${lab.inventory}; echo EXIT-CODE=$?`, 'Enter');
    const modal = await t.until((s) => s.includes('An apply on these hosts was interrupted') && s.includes('r  resume'), 'the interrupted-apply modal');
    expect(modal).toMatch(/l20-n1 {2}os\.install-base \(stage os, safe\) since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(modal).toMatch(/l20-n2 {2}os\.install-base \(stage os, safe\) since/);
    expect(modal).toMatch(/running: .*apt-get install -y/);
    expect(modal).toContain('r  resume: apply os and the stages after it (nic-stack)');
    expect(modal).toMatch(/r resume {2}b roll back {2}esc later/);

    t.keys('r');
    const done = await t.until((s) => /resumed os, nic-stack: \d+ changed, 0 failed; verification: every check passes or warns/.test(s) && /idle/.test(s), 'the resumed apply to finish', 240_000);
    expect(done).not.toContain('An apply on these hosts was interrupted');
    expect(lab.journal()).toBeUndefined();
    t.keys('q');
    const after = await t.until((s) => /EXIT-CODE=\d/.test(s), 'the shell after quitting');
    expect(after).toContain('EXIT-CODE=0');
  }, 600_000);
});
