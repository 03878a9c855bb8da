/**
 * As a new user would (issue 16 item 4): the TUI on the lab, the os stage's apply, Ctrl-C while apt-get
 * unpacks, then `a` again. The summary after the cancel says cancelled and claims no verification; the
 * second apply finishes the interrupted dpkg run first (the os stage's package guard) and converges.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { tmuxServer } from '../helpers/tmux.js';

const server = tmuxServer(`l20cancel-${process.pid}`);
const { terminal } = server;

describe('Ctrl-C during apt-get in the TUI, then apply again (tmux)', () => {
  afterAll(() => server.close());

  it('cancels mid-install, says cancelled, and the next apply repairs dpkg and converges', async () => {
    const t = terminal('cancel');
    // Slow enough that apt-get is still unpacking when the key arrives (seconds per package at this speed).
    t.keys('node bin/l20-setup.js --lab --speed 20; echo EXIT-CODE=$?', 'Enter');
    await t.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    t.keys('j');
    t.keys('Enter');
    await t.until((s) => s.includes('stage 2/11 os'), 'the os stage view');
    t.keys('a');
    await t.until((s) => s.includes('plan for os') && s.includes('y apply'), 'the plan preview');
    t.keys('y');
    // apt-get's transcript in the panes: it is unpacking now.
    await t.until((s) => /Unpacking \S+/.test(s), 'apt-get to unpack a package', 120_000);
    t.keys('C-c');
    const cancelledLine = /os: cancelled; \d+ changed, \d+ failed; cancelled: not verified/;
    const cancelled = await t.until((s) => cancelledLine.test(s) && /idle/.test(s), 'the cancelled summary', 60_000);
    expect(cancelled).not.toContain('every check passes');

    t.keys('a');
    await t.until((s) => s.includes('plan for os') && s.includes('y apply'), 'the plan preview again');
    t.keys('y');
    const verified = /os: \d+ changed, 0 failed; verification: every check passes or warns/;
    const done = await t.until((s) => verified.test(s) && /idle/.test(s), 'the second apply to converge', 240_000);
    expect(done).toMatch(/✔ os\.install-base/);
    expect(done).not.toMatch(/✘/);
    t.keys('q');
    await t.until((s) => s.includes('EXIT-CODE=0'), 'exit 0');
  }, 400_000);
});
