/**
 * The screens' state in the one store: UI actions, what the session's events open and close, and the
 * engine's state left alone by both.
 */
import { describe, expect, it } from 'vitest';
import { AppStore, appState, reduceApp } from '../../screens/state/app-store.js';
import type { AppAction, AppState } from '../../screens/state/ui-types.js';
import { clean } from '../../src/util/sanitize.js';

const hosts = [
  { name: 'a', address: '127.0.0.1:1' },
  { name: 'b', address: '127.0.0.1:2' },
];

const apply = (s: AppState, ...actions: AppAction[]): AppState => actions.reduce(reduceApp, s);

describe("the screens' state", () => {
  it('navigates stages within bounds and cycles pane hosts', () => {
    let s = appState(hosts);
    s = reduceApp(s, { type: 'ui.moveStage', delta: -1 });
    expect(s.ui.selectedStage).toBe('inventory');
    s = reduceApp(s, { type: 'ui.moveStage', delta: 2 });
    expect(s.ui.selectedStage).toBe('nic-stack');
    // Two hosts: cycling a pane swaps them, never showing one host twice.
    s = reduceApp(s, { type: 'ui.cycleHost', side: 'left' });
    expect([s.ui.leftHost, s.ui.rightHost]).toEqual([1, 0]);
    s = reduceApp(s, { type: 'ui.cycleHost', side: 'right' });
    expect([s.ui.leftHost, s.ui.rightHost]).toEqual([0, 1]);
    // Four hosts: the left pane steps over the right pane's host.
    let f = appState([...hosts, { name: 'c', address: 'x:3' }, { name: 'd', address: 'x:4' }]);
    f = reduceApp(f, { type: 'ui.cycleHost', side: 'left' });
    expect([f.ui.leftHost, f.ui.rightHost]).toEqual([2, 1]);
    f = reduceApp(f, { type: 'ui.cycleHost', side: 'right' });
    expect([f.ui.leftHost, f.ui.rightHost]).toEqual([2, 3]);
  });

  it("a UI action leaves the engine's slices as they were (identity), and an engine event the UI's", () => {
    const s0 = appState(hosts);
    const s1 = reduceApp(s0, { type: 'ui.toggleHelp' });
    expect(s1.ui.showHelp).toBe(true);
    for (const key of ['panes', 'checks', 'monitor', 'troubleshoot'] as const) expect(s1[key]).toBe(s0[key]);
    const s2 = reduceApp(s1, {
      type: 'cmd.start',
      host: 'a',
      runId: 'r',
      stage: 'inventory',
      probe: 'p',
      commandLine: 'x',
      sudo: false,
    });
    expect(s2.ui).toBe(s1.ui);
    expect(s2.panes.a).not.toBe(s1.panes.a);
    // Nothing changed: the same state, and no subscriber is told.
    const store = new AppStore(s2);
    let calls = 0;
    store.subscribe(() => calls++);
    store.dispatch({
      type: 'cmd.output',
      host: 'nobody',
      runId: 'r',
      stage: 'inventory',
      probe: 'p',
      stream: 'stdout',
      lines: [clean('x')],
    });
    store.dispatch({ type: 'prompt.close', id: 99 });
    expect(calls).toBe(0);
  });

  it('prompts open in order, close by id; one shown again keeps its place; a new plan question shows its top', () => {
    let s = apply(
      appState(hosts),
      { type: 'ui.scrollPlan', delta: 5 },
      {
        type: 'prompt.open',
        prompt: { id: 1, kind: 'trust', host: 'a', address: 'x:22', keyType: 'ssh-ed25519', fingerprint: 'SHA256:a' },
      },
      { type: 'prompt.open', prompt: { id: 2, kind: 'plan', stage: 'qos', planned: true } },
    );
    expect(s.ui.prompts.map((p) => p.id)).toEqual([1, 2]);
    expect(s.ui.planScroll).toBe(0);
    s = apply(
      s,
      { type: 'ui.scrollPlan', delta: 3 },
      {
        type: 'prompt.open',
        prompt: { id: 1, kind: 'trust', host: 'a', address: 'x:22', keyType: 'ssh-rsa', fingerprint: 'SHA256:b' },
      },
    );
    expect(s.ui.prompts.map((p) => [p.id, p.kind === 'trust' && p.keyType])).toEqual([
      [1, 'ssh-rsa'],
      [2, false],
    ]);
    expect(s.ui.planScroll).toBe(3);
    s = reduceApp(s, { type: 'prompt.close', id: 1 });
    expect(s.ui.prompts.map((p) => p.id)).toEqual([2]);
  });

  it('the session leads to a stage, notices are clean text, the monitor goes back where it came from', () => {
    let s = apply(
      appState(hosts),
      { type: 'ui.screen', screen: 'troubleshoot' },
      { type: 'ui.details', index: 2 },
      { type: 'session.showStage', stage: 'qos' },
      { type: 'session.notice', text: 'host said \u001b]0;pwned\u0007 hi' },
    );
    expect(s.ui).toMatchObject({ screen: 'stage', selectedStage: 'qos', details: null });
    expect(s.ui.notice).not.toContain('\u001b');
    s = apply(s, { type: 'monitor.open' }, { type: 'monitor.open' });
    expect([s.ui.screen, s.ui.monitor.returnTo]).toEqual(['monitor', 'stage']);
    expect(reduceApp(s, { type: 'monitor.close' }).ui.screen).toBe('stage');
  });
});
