/**
 * Crash safety as an operator meets it: `lab serve` in its own process, `apply --yes --allow-reboot --json` as a child
 * with its own XDG_STATE_HOME, killed with SIGKILL while the journal shows a step in flight. Then the
 * next apply refuses (exit 2) naming the hosts and the step, check only warns, --rollback undoes the
 * step on both hosts (the file it created is gone) and removes the journal; after another kill,
 * --resume --yes --allow-reboot takes the cluster to every check passing. The TUI's side: crash-journal-tui.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_PATH } from '../../checks/nccl/bench-script.js';
import { STAGE_IDS } from '../../src/engine/types.js';
import { Lab, notPassing, type Report } from './crash-lab.js';

describe('crash journal: kill -9 in the middle of an apply', () => {
  const lab = new Lab();
  beforeAll(() => lab.start('fresh', '30'), 60_000);
  afterAll(() => lab.stop());

  it('the next apply refuses naming host and step; check warns; --rollback undoes the step on both hosts', async () => {
    // nccl.bench-tools writes the benchmark (a new file) first, then pip installs for seconds: killed there.
    const j = await lab.crash(
      ['apply', '--yes', '--allow-reboot', '--json'],
      (x) =>
        x.inFlight.length === 2 &&
        x.inFlight.every((s) => s.step === 'nccl.bench-tools' && /pip install/.test(s.command ?? '')),
      'nccl.bench-tools in pip install on both hosts',
    );
    expect(j.inFlight.map((s) => s.host).sort()).toEqual(['l20-n1', 'l20-n2']);
    expect(j.inFlight[0]!.undo?.files).toEqual([{ path: BENCH_PATH, existed: false }]);
    expect(await lab.hasFile(BENCH_PATH)).toEqual({ 'l20-n1': true, 'l20-n2': true });

    const refused = await lab.cli(['apply', '--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/an apply on these hosts was interrupted \(run \d{8}T\d{6}Z, pid \d+/);
    expect(refused.stderr).toMatch(
      /l20-n1 {2}nccl\.bench-tools \(stage nccl, safe\) in flight since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC — running: .*pip install/,
    );
    expect(refused.stderr).toMatch(/l20-n2 {2}nccl\.bench-tools \(stage nccl, safe\) in flight since/);
    expect(refused.stderr).toContain(
      `l20-setup apply --resume --inventory ${lab.inventory} --yes [--allow-reboot]   re-runs nccl and the stages after it (ray, vllm)`,
    );
    expect(refused.stderr).toContain(`l20-setup apply --rollback --inventory ${lab.inventory}`);
    expect(refused.stderr).toContain(
      'apply refuses to continue on its own after an interrupted apply: pass --resume or --rollback.',
    );

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
    const j = await lab.crash(
      ['apply', '--yes', '--allow-reboot', '--json'],
      (x) => x.inFlight.length > 0 && x.inFlight.every((s) => s.command !== undefined),
      'a step running a command',
    );
    expect(j.inFlight.length).toBeGreaterThan(0);
    const first = j.inFlight.map((s) => s.stage).sort((a, b) => STAGE_IDS.indexOf(a) - STAGE_IDS.indexOf(b))[0]!;
    const resumed = await lab.cli(['apply', '--resume', '--yes', '--allow-reboot', '--json']);
    expect(resumed.stderr).toContain(`l20-setup: resuming run ${j.runId}: ${first}`);
    const report = JSON.parse(resumed.stdout) as Report;
    expect(report.stages[0]?.id).toBe(first);
    expect(
      report.stages.flatMap((s) =>
        s.steps.filter((x) => x.status === 'failed').map((x) => `${x.host} ${x.id}: ${x.error}`),
      ),
    ).toEqual([]);
    expect(notPassing(report)).toEqual([]);
    expect(resumed.code).toBe(0);
    expect(lab.journal()).toBeUndefined();
    const check = await lab.cli(['check']);
    expect(check.code).toBe(0);
    expect(check.stderr).not.toContain('interrupted');
  }, 600_000);
});
