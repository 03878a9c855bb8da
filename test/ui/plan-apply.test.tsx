import React from 'react';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import type { Controller } from '../../src/engine/controller.js';
import { fakeController } from '../helpers/fake-controller.js';
import type { StepResult } from '../../src/engine/types.js';
import { plannedCount, planLines } from '../../screens/stage/plan-lines.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

const controller = (): Controller => fakeController({}, ['inventory', 'os', 'qos']);
const calls = (f: unknown): number => (f as ReturnType<typeof vi.fn>).mock.calls.length;

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const step = (host: string, over: Partial<StepResult> = {}): StepResult => ({
  id: 'qos.persist',
  stage: 'qos',
  host,
  status: 'planned',
  danger: 'disruptive',
  summary: `write the QoS script and unit on ${host}`,
  commands: [
    'sudo install -D -m 0755 -o root -g root /dev/stdin /usr/local/sbin/l20-roce-qos',
    'sudo systemctl restart l20-roce-qos.service',
  ],
  diff: `--- /dev/null\n+++ /usr/local/sbin/l20-roce-qos\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+for i in ens1f0 ens1f1; do :; done # ${host}\n`,
  changed: false,
  ...over,
});

/** The stage view of qos, the store knowing the controller's stages. */
function qosStage(c: Controller): AppStore {
  const store = new AppStore(appState(hosts, { screen: 'stage', implemented: c.implementedStages }));
  store.dispatch({ type: 'ui.selectStage', stage: 'qos' });
  return store;
}

describe('plan and apply from the stage view', () => {
  it('a previews per-host diffs, y applies, a dangerous step asks naming its hosts', async () => {
    const c = controller();
    const store = qosStage(c);
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    ui.stdin.write('a');
    await until(() => (c.planStage as ReturnType<typeof vi.fn>).mock.calls.length === 1, 'planStage');
    expect(c.planStage).toHaveBeenCalledWith('qos');

    store.dispatch({ type: 'step.result', result: step('l20-n1') });
    store.dispatch({ type: 'step.result', result: step('l20-n2') });
    store.dispatch({ type: 'session.apply', apply: { stage: 'qos', phase: 'planning' } });
    await until(() => (ui.lastFrame() ?? '').includes('planning qos'), 'the plan being computed');
    // While it is computed there is nothing to apply yet: y says so and asks nothing.
    ui.stdin.write('y');
    await until(() => (ui.lastFrame() ?? '').includes('planning: the preview comes'), 'the reason');
    expect(calls(c.answerPlan)).toBe(0);
    store.dispatch({ type: 'session.apply' });
    store.dispatch({ type: 'prompt.open', prompt: { id: 7, kind: 'plan', stage: 'qos', planned: true } });
    await until(() => (ui.lastFrame() ?? '').includes('plan for qos'), 'the preview');
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('● l20-n1: write the QoS script and unit on l20-n1');
    expect(frame).toContain('+for i in ens1f0 ens1f1; do :; done # l20-n2');
    expect(frame).toContain('$ sudo systemctl restart l20-roce-qos.service');

    ui.stdin.write('y');
    await until(() => calls(c.answerPlan) === 1, 'answerPlan');
    expect(c.answerPlan).toHaveBeenCalledWith(7, true);
    // The session closes the preview and applies; a dangerous step asks, naming its hosts.
    store.dispatch({ type: 'prompt.close', id: 7 });
    store.dispatch({ type: 'session.apply', apply: { stage: 'qos', phase: 'applying' } });
    const confirm = {
      id: 8,
      kind: 'confirm',
      stage: 'qos',
      step: 'qos.persist',
      danger: 'disruptive',
      hosts: ['l20-n2', 'l20-n1'],
    } as const;
    store.dispatch({ type: 'prompt.open', prompt: { ...confirm, hosts: [...confirm.hosts] } });
    await until(
      () => (ui.lastFrame() ?? '').includes('Apply qos.persist (disruptive) on l20-n2, l20-n1?'),
      'the confirmation',
    );
    expect(ui.lastFrame()).not.toContain('m monitor'); // the question stays on screen until answered
    ui.stdin.write('n');
    await until(() => calls(c.answerConfirm) === 1, 'answerConfirm');
    expect(c.answerConfirm).toHaveBeenCalledWith(8, false);

    // While applying, the panes are back and the step row reports the results.
    store.dispatch({ type: 'prompt.close', id: 8 });
    store.dispatch({ type: 'step.result', result: step('l20-n2', { status: 'applied', changed: true }) });
    store.dispatch({ type: 'step.result', result: step('l20-n1', { status: 'failed', error: 'exit 1' }) });
    await until(
      () => (ui.lastFrame() ?? '').includes('steps: ✔ qos.persist (l20-n2) · ✘ qos.persist (l20-n1)'),
      'the step row',
    );
    ui.unmount();
  });

  it('keys typed faster than a render, Enter included, are all handled ("jjjj⏎" opens stage 5)', async () => {
    const store = new AppStore(appState(hosts));
    const ui = render(
      <Providers store={store} controller={controller()}>
        <App />
      </Providers>,
    );
    ui.stdin.write('jjjj\r');
    await until(() => (ui.lastFrame() ?? '').includes('stage 5/11 qos'), 'the qos stage view');
    expect(store.getState().ui.screen).toBe('stage');
    ui.unmount();
  });

  it("a long plan keeps its header (the dangerous step's question) on screen", async () => {
    const c = controller();
    const store = qosStage(c);
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    const long = Array.from({ length: 80 }, (_, i) => `sudo step-command-${i}`);
    store.dispatch({ type: 'step.result', result: step('l20-n1', { commands: long }) });
    store.dispatch({ type: 'step.result', result: step('l20-n2', { commands: long }) });
    store.dispatch({
      type: 'prompt.open',
      prompt: { id: 1, kind: 'confirm', stage: 'qos', step: 'qos.persist', danger: 'disruptive', hosts: ['l20-n2'] },
    });
    await until(() => (ui.lastFrame() ?? '').includes('more lines'), 'the long plan');
    expect(ui.lastFrame()).toContain('Apply qos.persist (disruptive) on l20-n2? y yes');
    ui.unmount();
  });

  it('plan lines: the step under confirmation first, skipped hosts dimmed, diffs toned', () => {
    const other: StepResult = {
      ...step('l20-n1'),
      id: 'qos.other',
      status: 'skipped',
      summary: 'nothing to do',
      commands: [],
      diff: '',
    };
    const lines = planLines([other, step('l20-n1')], ['l20-n1', 'l20-n2'], 'qos.persist');
    expect(lines[0]).toEqual({ text: 'qos.persist (disruptive)', tone: 'title' });
    expect(lines.find((l) => l.text.includes('+#!/bin/sh'))?.tone).toBe('add');
    expect(lines.find((l) => l.text.includes('@@'))?.tone).toBe('hunk');
    // A multi-line script is one command: `$` on its first line only.
    const script = planLines(
      [{ ...step('l20-n1'), commands: ["sudo bash -s <<'EOF'\nset -e\nEOF"], diff: '' }],
      ['l20-n1'],
    );
    expect(script.filter((l) => l.tone === 'command').map((l) => l.text)).toEqual([
      "      $ sudo bash -s <<'EOF'",
      '        set -e',
      '        EOF',
    ]);
    expect(plannedCount([step('l20-n1'), step('l20-n2'), { ...step('l20-n1'), id: 'qos.other' }])).toBe(
      '2 steps on 2 hosts',
    );
    expect(lines.find((l) => l.text === 'qos.other (disruptive) — nothing to do')).toBeDefined();
    expect(lines.find((l) => l.text.includes('nothing to do') && l.text.startsWith('  -'))?.tone).toBe('dim');
  });
});
