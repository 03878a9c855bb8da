/**
 * The monitor in a real terminal: `l20-setup monitor --lab` under tmux shows both hosts' 8 GPUs and
 * 4 ports with values that move between frames, switches the timebase, and a recording plays back
 * in the same screen.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tmuxServer } from '../helpers/tmux.js';

const server = tmuxServer(`l20mon-${process.pid}`);

function terminal(name: string, cols = 200, rows = 50) {
  const t = server.terminal(name, cols, rows);
  server.tmux('set-option', '-t', name, 'remain-on-exit', 'on');
  return t;
}

/** GPU rows of the two columns: lines starting with a GPU index and a util bar. */
const gpuRows = (s: string): string[] => s.split('\n').filter((l) => /^\s+[0-7] ▕/.test(l));
const sampleTime = (s: string): string | undefined => /sample (\d\d:\d\d:\d\d)/.exec(s)?.[1];

describe('monitor in a real terminal (tmux)', () => {
  afterAll(() => server.close());

  it("shows both hosts' GPUs and ports with moving values, switches the timebase, records and quits cleanly", async () => {
    const t = terminal('live');
    const rec = join(t.home, 'rec.jsonl');
    t.keys(`clear; node bin/l20-setup.js monitor --lab --record ${rec}; echo EXIT-CODE=$?`, 'Enter');
    // The GPU stream and the counter loop arrive independently: wait for both hosts' GPUs and ports.
    const first = await t.until(
      (s) =>
        s.includes('l20-setup · monitor') &&
        gpuRows(s).length === 8 &&
        /96%/.test(s) &&
        s.match(/ens[12]f[01] /g)?.length === 8,
      'both hosts busy, with their ports',
    );
    // Side by side: each GPU row carries both hosts (the column rule between them).
    for (const row of gpuRows(first)) expect(row).toMatch(/│\s+[0-7] ▕/);
    expect(first).toMatch(/l20-n1 .*8 GPUs · 4 ports/);
    expect(first).toMatch(/l20-n2 .*8 GPUs · 4 ports/);
    expect(first).toMatch(/vLLM\s+run \d+/);
    // Values move: a later frame shows another sample and different numbers (power, temperature, rates).
    await t.until(
      (s) => sampleTime(s) !== sampleTime(first) && gpuRows(s).join() !== gpuRows(first).join(),
      'a new frame with new values',
      15_000,
    );
    // The load's ib_write_bw on rail 1, in Gb/s and % of 25G.
    const atLineRate = /ens1f0\s.*\s2\d\.\d\s+[89]\d%/;
    // Node 1 sends at about line rate (left of the rule) and node 2 receives it (right of the rule).
    await t.until(
      (s) =>
        s.split('\n').some((l) => atLineRate.test(l.split('│')[0] ?? '') && atLineRate.test(l.split('│')[1] ?? '')),
      'rail 1 carrying RDMA both ends',
      30_000,
    );
    t.keys('t');
    await t.until((s) => /timebase 10m/.test(s), 'timebase 10m');
    t.keys('t');
    await t.until((s) => /timebase 1h/.test(s), 'timebase 1h');
    t.keys('q');
    const after = await t.until((s) => /EXIT-CODE=\d/.test(s), 'the exit', 30_000);
    expect(after).toContain('EXIT-CODE=0');
    expect(existsSync(rec)).toBe(true);
    // At least the two frames seen above, one line each, in time order.
    const times = readFileSync(rec, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => Date.parse((JSON.parse(l) as { time: string }).time));
    expect(times.length).toBeGreaterThanOrEqual(2);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // The recording plays back in the same screen.
    t.keys(`clear; node bin/l20-setup.js monitor --replay ${rec}; echo EXIT-CODE=$?`, 'Enter');
    const replay = await t.until((s) => /replay \d+\/\d+/.test(s) && gpuRows(s).length === 8, 'the replay');
    expect(replay).toContain('rec.jsonl');
    t.keys('q');
    await t.until(
      (s) => (s.match(/EXIT-CODE=0/g) ?? []).length === 1 && !s.includes('l20-setup · monitor'),
      'the replay to quit',
      30_000,
    );
  }, 120_000);

  it('opens from the pipeline with m and goes back with esc, sampling on', async () => {
    const t = terminal('tui', 160, 45);
    t.keys('clear; node bin/l20-setup.js --lab --scenario ready; echo EXIT-CODE=$?', 'Enter');
    await t.until((s) => s.includes('l20-setup · pipeline'), 'the pipeline');
    t.keys('m');
    const mon = await t.until(
      (s) => s.includes('l20-setup · monitor') && gpuRows(s).length === 8,
      'the monitor with both hosts',
    );
    expect(mon).toMatch(/esc back\s+t timebase/);
    t.keys('Escape');
    await t.until((s) => s.includes('l20-setup · pipeline'), 'back to the pipeline');
    t.keys('m');
    // Sampling went on while the pipeline showed: the history is there at once.
    await t.until((s) => s.includes('l20-setup · monitor') && gpuRows(s).length === 8, 'the monitor again', 10_000);
    t.keys('q');
    await t.until((s) => /EXIT-CODE=0/.test(s), 'the exit', 30_000);
  }, 90_000);
});
