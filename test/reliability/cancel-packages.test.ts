/**
 * Cancel is safe (issue 16 item 4): cancelling the os stage's apply while apt-get unpacks or configures
 * packages leaves dpkg interrupted — apt then refuses with "dpkg was interrupted" and exit 100 — and the next
 * apply repairs it through the os stage's package guard before its apt-get, then converges. Seeded moments
 * (a package of the install and a dpkg phase of it, on either host), one in-process lab for all of them.
 * The summary after each cancel says cancelled and claims no verification.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import { exitCodeFor, jsonReport, verificationText } from '../../src/engine/run-output.js';
import { osStage } from '../../checks/os/index.js';
import { PACKAGE_STATE_COMMAND, interrupted, parsePackageState } from '../../checks/os/package-guard.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { waitFor } from '../lab/helpers.js';
import { rng } from '../../lab/util/prng.js';

let t: LabTarget;

// Slow enough that the cancel lands inside the dpkg phase it was aimed at (a few seconds per install).
beforeAll(async () => {
  t = await labTarget({ scenario: 'fresh', speed: 40 });
}, 60_000);
afterAll(() => t?.close());

/** The packages this test takes away and the os stage installs again, with the dpkg phase to cancel in. */
const TARGETS = ['jq', 'chrony', 'lldpd'] as const;
const PHASES = [
  { status: 'iH ', what: 'unpacking' },
  { status: 'iU ', what: 'unpacked, not configured' },
] as const;

async function packageState(host: number) {
  return parsePackageState(await t.hosts[host]!.run(PACKAGE_STATE_COMMAND));
}

describe('cancel during apt-get install, then apply again', () => {
  it('≥ 10 seeded cancels: each leaves dpkg interrupted, says cancelled; the next apply repairs', async () => {
    const random = rng('issue16', 'cancel-packages');
    const tried: string[] = [];
    let repaired = 0;
    for (let i = 0; i < 10; i++) {
      // The packages go again (purge, so their postinst runs again), so every round installs them.
      const purge = { argv: ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'purge', '-y', ...TARGETS] };
      const purged = await Promise.all(t.hosts.map((h) => h.run(purge, { sudo: true })));
      expect(
        purged.map((r) => r.exitCode),
        purged.map((r) => r.stderr).join(''),
      ).toEqual([0, 0]);

      const pkg = TARGETS[random.int(0, TARGETS.length - 1)]!;
      const phase = PHASES[random.int(0, PHASES.length - 1)]!;
      const host = random.int(0, 1);
      const moment = `${t.lab.hosts[host]!.name}: ${pkg} ${phase.what}`;
      tried.push(moment);

      const engine = new Engine(t.hosts, { config: t.config });
      const applying = new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: false }).applyStage(osStage);
      const machine = t.lab.hosts[host]!.machine;
      await waitFor(() => machine.packages.get(pkg)?.status === phase.status, moment, 30_000);
      engine.cancelAll();
      const cancelled = await applying;
      expect(cancelled.cancelled, moment).toBe(true);
      expect(verificationText([cancelled]), moment).toMatch(/^cancelled: not verified/);
      expect(verificationText([cancelled])).not.toContain('every check passes');
      expect(exitCodeFor([cancelled])).not.toBe(0);
      expect(jsonReport([], [cancelled]).stages[0]?.cancelled).toBe(true);

      // The break, as a real host shows it: the journal is left and apt refuses.
      const left = await packageState(host);
      expect(interrupted(left), `${moment}: ${JSON.stringify(left)}`).toBe(true);
      const refused = await t.hosts[host]!.run({ argv: ['apt-get', 'install', '-y', 'jq'] }, { sudo: true });
      const message =
        "E: dpkg was interrupted, you must manually run 'sudo dpkg --configure -a' " + 'to correct the problem. \n';
      expect([refused.exitCode, refused.stderr]).toEqual([100, message]);

      // Apply again: the guard finishes the interrupted run before the stage's apt-get, and the stage converges.
      const notes: string[] = [];
      const again = new Engine(t.hosts, { config: t.config });
      again.subscribe((e) => {
        if (e.type === 'step.note') notes.push(e.line);
      });
      const next = await new StepExecutor(again, { dryRun: false, yes: true, allowReboot: false }).applyStage(osStage);
      expect(
        next.steps?.filter((s) => s.status === 'failed').map((s) => s.error),
        moment,
      ).toEqual([]);
      const notPassing = next.results.filter((r) => r.status !== 'pass' && r.status !== 'warn');
      expect(
        notPassing.map((r) => `${r.host}:${r.id} ${r.summary}`),
        moment,
      ).toEqual([]);
      expect(exitCodeFor([next])).toBe(0);
      expect(verificationText([next])).toBe('verification: every check passes or warns');
      const guardNote = `${t.lab.hosts[host]!.name}: a package operation was interrupted`;
      expect(
        notes.some((l) => l.includes(guardNote)),
        `${moment}: ${notes.join('\n')}`,
      ).toBe(true);
      for (const h of [0, 1]) {
        const after = await packageState(h);
        expect(after, moment).toEqual({ audit: '', journal: [] });
      }
      repaired++;
    }
    expect(tried.length).toBeGreaterThanOrEqual(10);
    expect(repaired).toBe(tried.length);
  }, 240_000);
});
