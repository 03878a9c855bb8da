import { describe, expect, it } from 'vitest';
import { initialState, lastLines, PANE_LINES, reduce, stageStatusFor, Store } from '../../src/engine/store.js';
import type { StageOutput } from '../../src/engine/store-types.js';
import { clean } from '../../src/util/sanitize.js';

/** Every line a stage's output keeps, oldest first. */
const kept = (o: StageOutput | undefined) => lastLines(o, Infinity);

const hosts = [
  { name: 'a', address: '127.0.0.1:1' },
  { name: 'b', address: '127.0.0.1:2' },
];

describe('store reducer', () => {
  it('tracks commands, bounded output and check results per host', () => {
    let s = initialState(hosts);
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'running' });
    expect(s.busy).toBe(true);
    s = reduce(s, {
      type: 'cmd.start',
      host: 'a',
      runId: 'r1',
      stage: 'inventory',
      probe: 'kernel',
      commandLine: 'LC_ALL=C uname -r',
      sudo: false,
    });
    const many = Array.from({ length: PANE_LINES + 50 }, (_, i) => `line ${i}`);
    s = reduce(s, {
      type: 'cmd.output',
      host: 'a',
      runId: 'r1',
      stage: 'inventory',
      probe: 'kernel',
      stream: 'stdout',
      lines: many.map(clean),
    });
    s = reduce(s, {
      type: 'cmd.exit',
      host: 'a',
      runId: 'r1',
      exitCode: 0,
      signal: null,
      durationMs: 12,
      timedOut: false,
      cancelled: false,
    });
    expect(kept(s.panes.a!.output.inventory)).toHaveLength(PANE_LINES);
    expect(kept(s.panes.a!.output.inventory).at(-1)?.text).toBe(`line ${PANE_LINES + 49}`);
    expect(s.panes.a!.output.inventory!.totalLines).toBe(PANE_LINES + 50);
    expect(s.panes.a!.commands[0]).toMatchObject({ running: false, exitCode: 0, durationMs: 12 });
    expect(s.panes.b!.output).toEqual({});
    expect(stageStatusFor(s, 'inventory', 'a')).toBe('running');
    s = reduce(s, {
      type: 'check.result',
      result: { id: 'inventory.os', stage: 'inventory', host: 'a', status: 'warn', summary: 'x', evidence: '' },
    });
    s = reduce(s, {
      type: 'check.result',
      result: { id: 'inventory.gpus', stage: 'inventory', host: 'a', status: 'pass', summary: 'y', evidence: '' },
    });
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'warn' });
    s = reduce(s, { type: 'engine.idle' });
    expect(s.busy).toBe(false);
    expect(stageStatusFor(s, 'inventory', 'a')).toBe('warn');
    expect(stageStatusFor(s, 'inventory', 'b')).toBe('pending');
  });

  it('a new run of a stage clears its previous results and commands', () => {
    let s = initialState(hosts);
    s = reduce(s, {
      type: 'check.result',
      result: { id: 'inventory.os', stage: 'inventory', host: 'a', status: 'fail', summary: 'x', evidence: '' },
    });
    s = reduce(s, {
      type: 'cmd.start',
      host: 'a',
      runId: 'r1',
      stage: 'inventory',
      probe: 'p',
      commandLine: 'x',
      sudo: false,
    });
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'running' });
    expect(s.checks.inventory).toHaveLength(0);
    expect(s.panes.a!.commands).toHaveLength(0);
  });

  it("keeps each stage's commands and output: running the next stage leaves the earlier one's for its view", () => {
    let s = initialState(hosts);
    const run = (stage: 'inventory' | 'os', runId: string, lines: string[]) => {
      s = reduce(s, { type: 'stage.state', stage, state: 'running' });
      s = reduce(s, {
        type: 'cmd.start',
        host: 'a',
        runId,
        stage,
        probe: `${stage}-probe`,
        commandLine: 'x',
        sudo: false,
      });
      s = reduce(s, {
        type: 'cmd.output',
        host: 'a',
        runId,
        stage,
        probe: `${stage}-probe`,
        stream: 'stdout',
        lines: lines.map(clean),
      });
      s = reduce(s, {
        type: 'cmd.exit',
        host: 'a',
        runId,
        exitCode: 0,
        signal: null,
        durationMs: 1,
        timedOut: false,
        cancelled: false,
      });
      s = reduce(s, { type: 'step.note', stage, step: 'note', host: 'a', line: clean(`${stage} note`) });
    };
    run('inventory', 'r1', ['inv 1', 'inv 2']);
    run('os', 'r2', ['os 1']);
    expect(s.panes.a!.commands.map((c) => [c.stage, c.runId])).toEqual([
      ['inventory', 'r1'],
      ['os', 'r2'],
    ]);
    expect(kept(s.panes.a!.output.inventory).map((l) => [l.text, l.probe])).toEqual([
      ['inv 1', 'inventory-probe'],
      ['inv 2', 'inventory-probe'],
      ['inventory note', 'note'],
    ]);
    expect(kept(s.panes.a!.output.os).map((l) => l.text)).toEqual(['os 1', 'os note']);
    // Running inventory again replaces only its own commands and output.
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'running' });
    expect(s.panes.a!.commands.map((c) => c.runId)).toEqual(['r2']);
    expect(s.panes.a!.output.inventory).toBeUndefined();
    expect(s.panes.a!.output.os!.totalLines).toBe(2);
    // A coalesced burst adds each stage's lines and its count (lines counted but not carried) to that stage only.
    s = reduce(s, {
      type: 'pane.output',
      host: 'a',
      output: { inventory: { runs: [{ probe: 'p', stderr: true, lines: ['tail'] }], totalLines: 41 } },
    });
    expect(kept(s.panes.a!.output.inventory)).toEqual([{ text: 'tail', stderr: true, probe: 'p' }]);
    expect(s.panes.a!.output.inventory!.totalLines).toBe(41);
    expect(s.panes.a!.output.os!.totalLines).toBe(2);
  });

  it('files output under the stage and probe its event names, whatever else the pane has seen', () => {
    let s = initialState(hosts);
    s = reduce(s, {
      type: 'cmd.output',
      host: 'a',
      runId: 'r9',
      stage: 'os',
      probe: 'sysctl',
      stream: 'stderr',
      lines: [clean('one'), clean('two')],
    });
    expect(Object.keys(s.panes.a!.output)).toEqual(['os']);
    expect(kept(s.panes.a!.output.os)).toEqual([
      { text: 'one', stderr: true, probe: 'sysctl' },
      { text: 'two', stderr: true, probe: 'sysctl' },
    ]);
    expect(s.panes.a!.output.os!.totalLines).toBe(2);
  });

  it("keeps a stage's newest PANE_LINES lines across the runs they came in, in order, and counts every line", () => {
    let s = initialState(hosts);
    const out = (probe: string, stream: 'stdout' | 'stderr', lines: string[]) => {
      s = reduce(s, {
        type: 'cmd.output',
        host: 'a',
        runId: probe,
        stage: 'os',
        probe,
        stream,
        lines: lines.map(clean),
      });
    };
    const texts = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}`);
    out('p1', 'stdout', texts(200, 'first'));
    out('p2', 'stderr', texts(150, 'second'));
    out('p1', 'stdout', ['last']);
    const all = kept(s.panes.a!.output.os);
    expect(s.panes.a!.output.os!.totalLines).toBe(351);
    expect(all).toHaveLength(PANE_LINES);
    expect(all.map((l) => l.text)).toEqual([...texts(200, 'first').slice(51), ...texts(150, 'second'), 'last']);
    expect(all.filter((l) => l.stderr).map((l) => l.probe)).toEqual(Array(150).fill('p2'));
    // A view asks for the rows it has room for: the newest, oldest first.
    expect(lastLines(s.panes.a!.output.os, 3)).toEqual([
      { text: 'second 148', stderr: true, probe: 'p2' },
      { text: 'second 149', stderr: true, probe: 'p2' },
      { text: 'last', stderr: false, probe: 'p1' },
    ]);
    expect(lastLines(undefined, 3)).toEqual([]);
  });

  it('leaves other panes untouched (identity) so their views do not re-render', () => {
    const s0 = reduce(initialState(hosts), {
      type: 'cmd.start',
      host: 'a',
      runId: 'r',
      stage: 'inventory',
      probe: 'p',
      commandLine: 'x',
      sudo: false,
    });
    const s1 = reduce(s0, {
      type: 'cmd.output',
      host: 'a',
      runId: 'r',
      stage: 'inventory',
      probe: 'p',
      stream: 'stdout',
      lines: [clean('x')],
    });
    expect(s1.panes.b).toBe(s0.panes.b);
    expect(s1.panes.a).not.toBe(s0.panes.a);
  });

  it("Store notifies subscribers only on change; the session's words to the operator are not engine state", () => {
    const store = new Store(initialState(hosts));
    let calls = 0;
    store.subscribe(() => calls++);
    const before = store.getState();
    store.dispatch({ type: 'session.notice', text: 'hello' });
    store.dispatch({ type: 'prompt.open', prompt: { id: 1, kind: 'plan', stage: 'qos', planned: true } });
    store.dispatch({ type: 'monitor.open' });
    expect(store.getState()).toBe(before);
    store.dispatch({
      type: 'check.result',
      result: { id: 'inventory.os', stage: 'inventory', host: 'a', status: 'pass', summary: 'x', evidence: '' },
    });
    store.dispatch({
      type: 'cmd.output',
      host: 'nobody',
      runId: 'r',
      stage: 'inventory',
      probe: 'p',
      stream: 'stdout',
      lines: [clean('x')],
    });
    expect(calls).toBe(1);
    expect(store.getState().checks.inventory).toHaveLength(1);
    expect(Object.keys(store.getState())).not.toContain('ui');
  });
});
