/**
 * Crash safety in a real terminal (tmux): after an apply is killed with SIGKILL in apt-get install, the TUI's
 * modal shows the in-flight step on both hosts and r resumes it to a verified end.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';
import { tmuxServer } from '../helpers/tmux.js';
import { Lab } from './crash-lab.js';

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
    await lab.crash(
      ['apply', '--stage', 'os,nic-stack', '--yes'],
      (x) =>
        x.inFlight.length === 2 &&
        x.inFlight.every((s) => s.step === 'os.install-base' && /apt-get install/.test(s.command ?? '')),
      'os.install-base in apt-get install',
    );

    t.keys(`node ${join(ROOT, 'bin/l20-setup.js')} --inventory ${lab.inventory}; echo EXIT-CODE=$?`, 'Enter');
    const modal = await t.until(
      (s) => s.includes('An apply on these hosts was interrupted') && s.includes('r  resume'),
      'the interrupted-apply modal',
    );
    expect(modal).toMatch(/l20-n1 {2}os\.install-base \(stage os, safe\) since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    expect(modal).toMatch(/l20-n2 {2}os\.install-base \(stage os, safe\) since/);
    expect(modal).toMatch(/running: .*apt-get install -y/);
    expect(modal).toContain('r  resume: apply os and the stages after it (nic-stack)');
    expect(modal).toMatch(/r resume {2}b roll back {2}esc later/);

    t.keys('r');
    const done = await t.until(
      (s) =>
        /resumed os, nic-stack: \d+ changed, 0 failed; verification: every check passes or warns/.test(s) &&
        /idle/.test(s),
      'the resumed apply to finish',
      240_000,
    );
    expect(done).not.toContain('An apply on these hosts was interrupted');
    expect(lab.journal()).toBeUndefined();
    t.keys('q');
    const after = await t.until((s) => /EXIT-CODE=\d/.test(s), 'the shell after quitting');
    expect(after).toContain('EXIT-CODE=0');
  }, 600_000);
});
