/**
 * End to end in a real terminal: the built binary under tmux, on the lab. Reaches the pipeline,
 * runs inventory on both hosts, sees both panes pass, quits, and finds the terminal restored.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { tmuxServer } from '../helpers/tmux.js';

const server = tmuxServer(`l20e2e-${process.pid}`);
const { tmux, terminal } = server;

describe('TUI in a real terminal (tmux)', () => {
  afterAll(() => server.close());

  it('runs inventory on both lab hosts side by side and restores the terminal on quit', async () => {
    const e2e = terminal('e2e');
    tmux('set-option', '-t', 'e2e', 'remain-on-exit', 'on');
    e2e.keys('clear; echo BEFORE-MARKER; node bin/l20-setup.js --lab; echo EXIT-CODE=$?', 'Enter');
    const pipeline = await e2e.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    expect(pipeline).toContain('inventory');
    expect(pipeline).not.toContain('BEFORE-MARKER'); // the alternate screen is on
    expect(tmux('display', '-p', '-t', 'e2e', '#{alternate_on}').trim()).toBe('1');
    e2e.keys('r');
    // Fresh fabric ports are down: the cabling is not seen yet (a skip, not a pass).
    const done = await e2e.until(
      (s) => /cluster checks/.test(s) && /- inventory\.cabling/.test(s) && /idle/.test(s),
      'inventory to finish',
      60_000,
    );
    // Both panes, each with its verdicts.
    expect(done).toMatch(/l20-n1\s+127\.0\.0\.1:\d+\s+connected/);
    expect(done).toMatch(/l20-n2\s+127\.0\.0\.1:\d+\s+connected/);
    const passRows = done.split('\n').filter((l) => (l.match(/✔ gpus/g) ?? []).length > 0);
    expect(passRows.some((l) => (l.match(/✔ gpus\s+8 × NVIDIA L20/g) ?? []).length === 2)).toBe(true);
    expect(done).not.toMatch(/✘/);
    e2e.keys('q');
    const after = await e2e.until((s) => s.includes('EXIT-CODE='), 'the shell prompt after quitting');
    expect(after).toContain('EXIT-CODE=0');
    expect(after).toContain('BEFORE-MARKER'); // the normal screen is back, with what was there before
    expect(after).not.toContain('l20-setup · pipeline');
    expect(tmux('display', '-p', '-t', 'e2e', '#{alternate_on}').trim()).toBe('0');
    expect(tmux('display', '-p', '-t', 'e2e', '#{cursor_flag}').trim()).toBe('1');
  });

  it('applies a stage from its view: preview with per-host diffs, y, live output in both panes, verified', async () => {
    const t = terminal('apply');
    t.keys('node bin/l20-setup.js --lab --speed max; echo EXIT-CODE=$?', 'Enter');
    await t.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    t.keys('j');
    t.keys('Enter');
    await t.until((s) => s.includes('stage 2/11 os'), 'the os stage view');
    t.keys('a');
    const preview = await t.until((s) => s.includes('plan for os') && s.includes('y apply'), 'the plan preview');
    expect(preview).toMatch(/● l20-n1: write \/etc\/security\/limits\.d\/90-l20-memlock\.conf/);
    expect(preview).toMatch(/● l20-n2: /);
    expect(preview).toContain('+* hard memlock unlimited');
    expect(preview).toContain('$ sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chrony');
    t.keys('y');
    const done = await t.until(
      (s) => /os: \d+ changed, 0 failed; verification: every check passes/.test(s) && /idle/.test(s),
      'the apply to finish',
      120_000,
    );
    // Live output reached both panes (apt's transcript), and the step row names both hosts.
    expect(done).toMatch(
      /steps: .*✔ os\.install-base \(l20-n1, l20-n2\)|steps: .*✔ os\.install-base \(l20-n2, l20-n1\)/,
    );
    const rows = done.split('\n');
    expect(rows.some((l) => (l.match(/✔ memlock/g) ?? []).length === 2)).toBe(true);
    expect(done).not.toMatch(/✘/);
    t.keys('q');
    await t.until((s) => s.includes('EXIT-CODE=0'), 'exit 0');
  }, 180_000);

  it('a disruptive step asks for confirmation naming its host (qos on pfc-mismatch), then verifies', async () => {
    const t = terminal('qos');
    t.keys('node bin/l20-setup.js --lab --scenario pfc-mismatch --speed max; echo EXIT-CODE=$?', 'Enter');
    await t.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    for (let i = 0; i < 4; i++) t.keys('j');
    t.keys('Enter');
    await t.until((s) => s.includes('stage 5/11 qos'), 'the qos stage view');
    t.keys('r');
    const failing = await t.until((s) => /✘ qos\.pair/.test(s) && /idle/.test(s), 'the failing pair check');
    expect(failing).toMatch(/✘ pfc/); // node 2's PFC is off
    t.keys('a');
    const preview = await t.until((s) => s.includes('plan for qos') && s.includes('y apply'), 'the plan preview');
    expect(preview).toMatch(/● l20-n2: dscp trust .*PFC on priority 3/);
    expect(preview).toMatch(/- l20-n1: nothing to do/);
    t.keys('y');
    const ask = await t.until(
      (s) => s.includes('Apply qos.persist (disruptive) on l20-n2? y yes'),
      'the confirmation naming the host',
    );
    expect(ask).not.toMatch(/on l20-n1, l20-n2\?/);
    t.keys('y');
    const done = await t.until(
      (s) => /qos: 1 changed, 0 failed; verification: every check passes/.test(s) && /idle/.test(s),
      'the apply to finish',
    );
    expect(done).toMatch(/steps: ✔ qos\.persist \(l20-n2\)/);
    expect(done).toMatch(/✔ qos\.pair/);
    expect(done).not.toMatch(/✘/);
    t.keys('q');
    await t.until((s) => s.includes('EXIT-CODE=0'), 'exit 0');
  }, 180_000);
});
