/**
 * The TUI's output path (issue 8): every line of every command reaches the session log as the engine emits it,
 * while the store gets at most one update per host per interval carrying a pane's worth of lines. Whatever the
 * interleaving, the pane must end with exactly the newest lines in order and the right count. The engine holds
 * nothing back: each chunk's complete lines are published with it (the coalescer is the TUI's only timer).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PaneOutputCoalescer } from '../../src/engine/output-coalescer.js';
import { OutputLines } from '../../src/engine/output-lines.js';
import { initialState, lastLines, PANE_LINES, reduce } from '../../src/engine/store.js';
import type { EngineAction, EngineState } from '../../src/engine/store-types.js';
import { clean } from '../../src/util/sanitize.js';

const hosts = [
  { name: 'a', address: '127.0.0.1:1' },
  { name: 'b', address: '127.0.0.1:2' },
];

/** A state with two commands on each host (probe p1 and p2), as the engine leaves it after cmd.start. */
function started(): EngineState {
  let s = initialState(hosts);
  for (const h of ['a', 'b']) {
    for (const p of ['p1', 'p2'])
      s = reduce(s, {
        type: 'cmd.start',
        host: h,
        runId: `${h}-${p}`,
        stage: 'inventory',
        probe: p,
        commandLine: p,
        sudo: false,
      });
  }
  return s;
}

type Out = {
  host: string;
  runId: string;
  stage: 'inventory';
  probe: string;
  stream: 'stdout' | 'stderr';
  lines: string[];
};

/** A deterministic interleaving: hosts, commands and streams alternate in bursts of varying size. */
function traffic(events: number): Out[] {
  const out: Out[] = [];
  let n = 0;
  for (let i = 0; i < events; i++) {
    const host = i % 3 === 0 ? 'b' : 'a';
    const probe = i % 5 < 2 ? 'p1' : 'p2';
    const stream = i % 7 === 0 ? 'stderr' : 'stdout';
    const size = [1, 3, 40, 700, 2000, 0, 17][i % 7] as number;
    out.push({
      host,
      runId: `${host}-${probe}`,
      stage: 'inventory',
      probe,
      stream,
      lines: Array.from({ length: size }, () => `${host} ${probe} ${stream} #${n++}`),
    });
  }
  return out;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('pane output coalescing', () => {
  it('ends with the same pane as applying every event to the store, in order, with every line counted', () => {
    vi.useFakeTimers();
    const events = traffic(400);
    let direct = started();
    for (const e of events) direct = reduce(direct, { type: 'cmd.output', ...e, lines: e.lines.map(clean) });

    let coalesced = started();
    const actions: EngineAction[] = [];
    const co = new PaneOutputCoalescer((a) => {
      actions.push(a);
      coalesced = reduce(coalesced, a);
    }, 100);
    for (const [i, e] of events.entries()) {
      co.push(e);
      if (i % 50 === 49) vi.advanceTimersByTime(100);
    }
    co.flush();

    for (const h of ['a', 'b']) {
      expect(coalesced.panes[h]!.output.inventory!.totalLines).toBe(
        events.filter((e) => e.host === h).reduce((n, e) => n + e.lines.length, 0),
      );
      expect(coalesced.panes[h]!.output.inventory!.totalLines).toBe(direct.panes[h]!.output.inventory!.totalLines);
      expect(lastLines(coalesced.panes[h]!.output.inventory, Infinity)).toEqual(
        lastLines(direct.panes[h]!.output.inventory, Infinity),
      );
      expect(lastLines(coalesced.panes[h]!.output.inventory, Infinity)).toHaveLength(PANE_LINES);
    }
    // Stderr lines stay marked and every line names its command's probe.
    expect(
      lastLines(coalesced.panes.a!.output.inventory, Infinity)
        .filter((l) => l.stderr)
        .every((l) => l.text.includes('stderr')),
    ).toBe(true);
    expect(lastLines(coalesced.panes.a!.output.inventory, Infinity).every((l) => l.text.includes(` ${l.probe} `))).toBe(
      true,
    );
    // 400 events became a handful of store updates: the first at once, then at most one per host per interval.
    expect(actions.length).toBeLessThanOrEqual(2 * (1 + 8 + 1));
  });

  it('passes the first output after a quiet interval at once, and holds a burst for the interval', () => {
    vi.useFakeTimers();
    const actions: EngineAction[] = [];
    const co = new PaneOutputCoalescer((a) => actions.push(a), 100);
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['first'] });
    expect(actions).toHaveLength(1);
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['second'] });
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['third'] });
    expect(actions).toHaveLength(1);
    vi.advanceTimersByTime(100);
    const run = (lines: string[]) => ({ probe: 'p1', stderr: false, lines });
    expect(actions).toEqual([
      { type: 'pane.output', host: 'a', output: { inventory: { runs: [run(['first'])], totalLines: 1 } } },
      {
        type: 'pane.output',
        host: 'a',
        output: { inventory: { runs: [run(['second']), run(['third'])], totalLines: 2 } },
      },
    ]);
  });

  it('after a flood (more lines than a pane holds in one interval) shows the next lines after the longer interval', () => {
    vi.useFakeTimers();
    const actions: EngineAction[] = [];
    const co = new PaneOutputCoalescer((a) => actions.push(a), 100, 250);
    const flood = Array.from({ length: PANE_LINES + 1 }, (_, i) => `${i}`);
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['calm'] });
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: flood });
    vi.advanceTimersByTime(100);
    expect(actions).toHaveLength(2);
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['after the flood'] });
    vi.advanceTimersByTime(249);
    expect(actions).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(actions).toHaveLength(3);
    // That flush was calm: the next one comes after the short interval again.
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['calm again'] });
    vi.advanceTimersByTime(100);
    expect(actions).toHaveLength(4);
  });

  it('carries only a pane of lines for a huge burst and counts the rest', () => {
    vi.useFakeTimers();
    const actions: Array<Extract<EngineAction, { type: 'pane.output' }>> = [];
    const co = new PaneOutputCoalescer((a) => actions.push(a), 100);
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['warm-up'] });
    for (let i = 0; i < 100; i++)
      co.push({
        host: 'a',
        stage: 'inventory',
        probe: 'p1',
        stream: 'stdout',
        lines: Array.from({ length: 10_000 }, (_, j) => `${i}:${j}`),
      });
    co.flush();
    const burst = actions[1]!.output.inventory!;
    expect(lastLines(burst, Infinity)).toHaveLength(PANE_LINES);
    expect(burst.totalLines).toBe(1_000_000);
    expect(lastLines(burst, 1)[0]!.text).toBe('99:9999');
  });

  it('flush hands pending output over before the caller dispatches a later event (the session keeps order)', () => {
    vi.useFakeTimers();
    let s = started();
    const co = new PaneOutputCoalescer((a) => (s = reduce(s, a)), 100);
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['x'] });
    co.push({ host: 'a', stage: 'inventory', probe: 'p1', stream: 'stdout', lines: ['last words'] });
    co.flush();
    s = reduce(s, {
      type: 'cmd.exit',
      host: 'a',
      runId: 'a-p1',
      exitCode: 0,
      signal: null,
      durationMs: 1,
      timedOut: false,
      cancelled: false,
    });
    expect(lastLines(s.panes.a!.output.inventory, Infinity).map((l) => l.text)).toEqual(['x', 'last words']);
    expect(s.panes.a!.commands[0]).toMatchObject({ running: false, exitCode: 0 });
  });
});

describe('output lines', () => {
  it("publishes each chunk's whole lines at once, each line once and in order, the partial last one at the end", () => {
    const published: Array<[string, string[]]> = [];
    const output = new OutputLines((stream, lines) => published.push([stream, lines]));
    let text = '';
    for (let i = 0; i < 5000; i++) text += `line ${i}\n`;
    text += 'no newline';
    const stdout = () => published.filter(([s]) => s === 'stdout').flatMap(([, l]) => l);
    // Uneven chunks that cut lines in two: after each, every line it completed is out, nothing waits.
    for (let at = 0; at < text.length; at += 977) {
      output.push('stdout', text.slice(at, at + 977));
      const complete = text
        .slice(0, at + 977)
        .split('\n')
        .slice(0, -1);
      expect(stdout()).toEqual(complete);
    }
    // A control sequence cut in two is stripped whole.
    output.push('stderr', 'warn\u001b[3');
    output.push('stderr', '1m red\u001b[0m\n');
    output.end();
    expect(stdout()).toEqual([...Array.from({ length: 5000 }, (_, i) => `line ${i}`), 'no newline']);
    expect(published.filter(([s]) => s === 'stderr').flatMap(([, l]) => l)).toEqual(['warn red']);
    expect(published.every(([, l]) => l.length > 0)).toBe(true);
  });
});
