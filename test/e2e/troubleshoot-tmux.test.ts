/**
 * A diagnosis and its fix through the TUI in a real terminal (issue 6): on the lab's pfc-mismatch
 * scenario, x opens troubleshoot from the pipeline, the PFC symptom's probes run in both hosts'
 * panes, the cause comes back with R26 and the two hosts' QoS outputs side by side with the PFC
 * lines marked ≠, f shows the qos plan preview, y applies (the disruptive step asks, naming node 2),
 * and the symptom is probed again and shows clear.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { tmuxServer } from '../helpers/tmux.js';

const server = tmuxServer(`l20ts-${process.pid}`);

/** The row of the side-by-side comparison that carries priority 3's PFC state for both hosts. */
const pfcRows = (s: string): string[] =>
  s.split('\n').filter((l) => /prio-pfc .*│.*prio-pfc|enabled .*│.*enabled/.test(l));

describe('troubleshoot in a real terminal (tmux)', () => {
  afterAll(() => server.close());

  it('diagnoses PFC on one side only, fixes it through the qos plan preview, and verifies it clear', async () => {
    const t = server.terminal('ts', 160, 48);
    server.tmux('set-option', '-t', 'ts', 'remain-on-exit', 'on');
    t.keys('node bin/l20-setup.js --lab --scenario pfc-mismatch --speed max; echo EXIT-CODE=$?', 'Enter');
    const pipeline = await t.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    expect(pipeline).toContain('x troubleshoot');
    t.keys('x');
    const list = await t.until(
      (s) => s.includes('l20-setup · troubleshoot') && s.includes('PFC configured on one side only'),
      'the symptom list',
    );
    const rows = list.split('\n');
    const pfcIndex = rows.findIndex((l) => l.includes('PFC configured on one side only'));
    const firstIndex = rows.findIndex((l) => /^[·✘✔?…] /.test(l));
    expect(pfcIndex).toBeGreaterThan(firstIndex);
    for (let i = firstIndex; i < pfcIndex; i++) t.keys('Down');
    // The right side names the cursor's symptom (the inverse cursor row does not show in a capture).
    await t.until((s) => /│PFC configured on one side only/.test(s) && /seen as: /.test(s), 'the PFC symptom selected');
    t.keys('Enter');
    // The probes stream into both hosts' panes while they run.
    const probing = await t.until(
      (s) =>
        s.includes('probing "PFC configured on one side only"') &&
        /l20-n1\s+127\.0\.0\.1:\d+\s+connected/.test(s) &&
        /l20-n2\s+127\.0\.0\.1:\d+\s+connected/.test(s),
      'the panes',
    );
    expect(probing).toMatch(/╭─+╮╭─+╮/);
    const found = await t.until((s) => s.includes('cause found') && /idle/.test(s), 'the diagnosis', 120_000);
    expect(found).toContain('✘ PFC configured on one side only — cause found');
    expect(found).toMatch(/rules R26\b.* · on l20-n2/);
    expect(found).toContain('fix (f plans qos)');
    expect(found).toMatch(/── mlnx_qos.* per port.*: \d+ lines? differs? \(≠\)/);
    expect(found).toMatch(/ l20-n1 +│ l20-n2/);
    // Node 1 has PFC on priority 3, node 2 has it off: the row is marked ≠ and carries both.
    const marked = pfcRows(found);
    expect(marked.length).toBeGreaterThan(0);
    for (const r of marked) {
      expect(r).toMatch(/│≠ /);
      expect(r).toMatch(/3:on .*│ .*3:off /);
    }
    t.keys('f');
    const preview = await t.until((s) => s.includes('plan for qos') && s.includes('y apply'), 'the plan preview');
    expect(preview).toContain('stage 5/11 qos');
    expect(preview).toMatch(/● l20-n2: dscp trust .*PFC on priority 3/);
    expect(preview).toMatch(/- l20-n1: nothing to do/);
    t.keys('y');
    await t.until(
      (s) => s.includes('Apply qos.persist (disruptive) on l20-n2? y yes'),
      'the confirmation naming node 2',
    );
    t.keys('y');
    // The apply ends, the screen comes back to the symptom and probes it again: clear.
    const clear = await t.until(
      (s) => s.includes('l20-setup · troubleshoot') && s.includes('clear after the fix — verified') && /idle/.test(s),
      'the verification',
      120_000,
    );
    expect(clear).toContain('✔ PFC configured on one side only — clear: every probe passes');
    expect(clear).toMatch(/── mlnx_qos.* per port.*: the same on both hosts/);
    expect(clear).not.toMatch(/│≠ /);
    expect(pfcRows(clear).length).toBeGreaterThan(0);
    for (const r of pfcRows(clear)) expect(r).toMatch(/3:on .*│ .*3:on /);
    // Every symptom at once (one quick run of the stages they share): nothing shows any more.
    t.keys('a');
    await t.until(
      (s) => s.includes('no symptom shows on these hosts') && /idle/.test(s),
      'every symptom clear',
      120_000,
    );
    t.keys('Escape');
    await t.until((s) => s.includes('l20-setup · pipeline'), 'back to the pipeline, where troubleshooting began');
    t.keys('q');
    await t.until((s) => s.includes('EXIT-CODE=0'), 'exit 0');
  }, 300_000);
});
