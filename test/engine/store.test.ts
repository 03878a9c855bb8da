import { describe, expect, it } from 'vitest';
import { initialState, PANE_LINES, reduce, stageStatusFor, Store } from '../../src/engine/store.js';

const hosts = [{ name: 'a', address: '127.0.0.1:1' }, { name: 'b', address: '127.0.0.1:2' }];

describe('store reducer', () => {
  it('tracks commands, bounded output and check results per host', () => {
    let s = initialState(hosts);
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'running' });
    expect(s.busy).toBe(true);
    s = reduce(s, { type: 'cmd.start', host: 'a', runId: 'r1', stage: 'inventory', probe: 'kernel', commandLine: 'LC_ALL=C uname -r', sudo: false });
    const many = Array.from({ length: PANE_LINES + 50 }, (_, i) => `line ${i}`);
    s = reduce(s, { type: 'cmd.output', host: 'a', runId: 'r1', stream: 'stdout', lines: many });
    s = reduce(s, { type: 'cmd.exit', host: 'a', runId: 'r1', exitCode: 0, signal: null, durationMs: 12, timedOut: false, cancelled: false });
    expect(s.panes.a!.lines).toHaveLength(PANE_LINES);
    expect(s.panes.a!.lines.at(-1)?.text).toBe(`line ${PANE_LINES + 49}`);
    expect(s.panes.a!.totalLines).toBe(PANE_LINES + 50);
    expect(s.panes.a!.commands[0]).toMatchObject({ running: false, exitCode: 0, durationMs: 12 });
    expect(s.panes.b!.lines).toHaveLength(0);
    expect(stageStatusFor(s, 'inventory', 'a')).toBe('running');
    s = reduce(s, { type: 'check.result', result: { id: 'inventory.os', stage: 'inventory', host: 'a', status: 'warn', summary: 'x', evidence: '' } });
    s = reduce(s, { type: 'check.result', result: { id: 'inventory.gpus', stage: 'inventory', host: 'a', status: 'pass', summary: 'y', evidence: '' } });
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'warn' });
    s = reduce(s, { type: 'engine.idle' });
    expect(s.busy).toBe(false);
    expect(stageStatusFor(s, 'inventory', 'a')).toBe('warn');
    expect(stageStatusFor(s, 'inventory', 'b')).toBe('pending');
  });

  it('a new run of a stage clears its previous results and commands', () => {
    let s = initialState(hosts);
    s = reduce(s, { type: 'check.result', result: { id: 'inventory.os', stage: 'inventory', host: 'a', status: 'fail', summary: 'x', evidence: '' } });
    s = reduce(s, { type: 'cmd.start', host: 'a', runId: 'r1', stage: 'inventory', probe: 'p', commandLine: 'x', sudo: false });
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'running' });
    expect(s.checks.inventory).toHaveLength(0);
    expect(s.panes.a!.commands).toHaveLength(0);
  });

  it('leaves other panes untouched (identity) so their views do not re-render', () => {
    const s0 = initialState(hosts);
    const s1 = reduce(s0, { type: 'cmd.output', host: 'a', runId: 'r', stream: 'stdout', lines: ['x'] });
    expect(s1.panes.b).toBe(s0.panes.b);
    expect(s1.panes.a).not.toBe(s0.panes.a);
  });

  it('navigates stages within bounds and cycles pane hosts', () => {
    let s = initialState(hosts);
    s = reduce(s, { type: 'ui.moveStage', delta: -1 });
    expect(s.ui.selectedStage).toBe('inventory');
    s = reduce(s, { type: 'ui.moveStage', delta: 2 });
    expect(s.ui.selectedStage).toBe('nic-stack');
    // Two hosts: cycling a pane swaps them, never showing one host twice.
    s = reduce(s, { type: 'ui.cycleHost', side: 'left' });
    expect([s.ui.leftHost, s.ui.rightHost]).toEqual([1, 0]);
    s = reduce(s, { type: 'ui.cycleHost', side: 'right' });
    expect([s.ui.leftHost, s.ui.rightHost]).toEqual([0, 1]);
    // Four hosts: the left pane steps over the right pane's host.
    let f = initialState([...hosts, { name: 'c', address: 'x:3' }, { name: 'd', address: 'x:4' }]);
    f = reduce(f, { type: 'ui.cycleHost', side: 'left' });
    expect([f.ui.leftHost, f.ui.rightHost]).toEqual([2, 1]);
    f = reduce(f, { type: 'ui.cycleHost', side: 'right' });
    expect([f.ui.leftHost, f.ui.rightHost]).toEqual([2, 3]);
  });

  it('Store notifies subscribers only on change', () => {
    const store = new Store(initialState(hosts));
    let calls = 0;
    store.subscribe(() => calls++);
    store.dispatch({ type: 'ui.toggleHelp' });
    store.dispatch({ type: 'cmd.output', host: 'nobody', runId: 'r', stream: 'stdout', lines: ['x'] });
    expect(calls).toBe(1);
    expect(store.getState().ui.showHelp).toBe(true);
  });
});
