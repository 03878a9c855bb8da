import React from 'react';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import type { Controller } from '../../src/engine/controller.js';
import { fakeController } from '../helpers/fake-controller.js';
import type { CheckResult } from '../../src/engine/types.js';
import { pfcDiagnosis, symptoms } from './troubleshoot-fixtures.js';
import { clean } from '../../src/util/sanitize.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

const controller = (): Controller => fakeController({}, ['inventory', 'os', 'qos']);

async function until(check: () => boolean, what: string, frame?: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}${frame ? `; frame:\n${frame()}` : ''}`);
}

const calls = (f: unknown) => (f as ReturnType<typeof vi.fn>).mock.calls;

/** The troubleshoot screen opened over the pipeline, with the catalog (what openTroubleshoot dispatches). */
function opened() {
  const store = new AppStore(appState(hosts));
  store.dispatch({ type: 'troubleshoot.open', symptoms });
  const c = controller();
  const ui = render(
    <Providers store={store} controller={c}>
      <App />
    </Providers>,
  );
  const frame = () => ui.lastFrame() ?? '';
  return { store, c, ui, frame };
}

const check = (
  id: string,
  status: CheckResult['status'],
  rule?: string,
  host: string | null = 'l20-n2',
): CheckResult => ({
  id,
  stage: id.split('.')[0] as CheckResult['stage'],
  host,
  status,
  summary: `${id} ${status}`,
  evidence: '',
  ...(rule ? { rule } : {}),
});

describe('troubleshoot from a check (T)', () => {
  it('in details, T opens the symptom of the selected check', async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    store.dispatch({ type: 'ui.selectStage', stage: 'qos' });
    store.dispatch({ type: 'check.result', result: check('qos.pair', 'fail', 'R26', null) });
    store.dispatch({ type: 'check.result', result: check('qos.dcbx', 'warn', 'R28', 'l20-n1') });
    store.dispatch({ type: 'ui.details', index: 0 });
    const c = controller();
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    expect(ui.lastFrame()).toContain('T troubleshoot');
    ui.stdin.write('T');
    await until(() => calls(c.openTroubleshoot).length === 1, 'openTroubleshoot');
    expect(calls(c.openTroubleshoot)[0]).toEqual(['pfc-one-side']);
    ui.unmount();
  });

  it("in the panes, T takes the stage's worst not-passing check; with none it says so", async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    store.dispatch({ type: 'ui.selectStage', stage: 'network' });
    const c = controller();
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    ui.stdin.write('T');
    await until(() => (ui.lastFrame() ?? '').includes('no failing check in network to troubleshoot'), 'the notice');
    store.dispatch({ type: 'check.result', result: check('network.mtu', 'pass') });
    store.dispatch({ type: 'check.result', result: check('network.mtu', 'fail', 'R24', null) });
    ui.stdin.write('T');
    await until(() => calls(c.openTroubleshoot).length === 1, 'openTroubleshoot');
    expect(calls(c.openTroubleshoot)[0]).toEqual(['mtu-mismatch']);
    ui.unmount();
  });
});

describe('troubleshoot screen', () => {
  it('x from the pipeline opens it; the list shows every symptom; ↑↓ pick, ⏎ runs, a runs all, esc goes back', async () => {
    const store = new AppStore(appState(hosts));
    const c = controller();
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    expect(ui.lastFrame()).toContain('x troubleshoot');
    ui.stdin.write('x');
    await until(() => calls(c.openTroubleshoot).length === 1, 'openTroubleshoot');
    expect(calls(c.openTroubleshoot)[0]).toEqual([]);
    store.dispatch({ type: 'troubleshoot.open', symptoms });
    await until(() => (ui.lastFrame() ?? '').includes('l20-setup · troubleshoot'), 'the screen');
    const frame = ui.lastFrame() ?? '';
    for (const s of symptoms) expect(frame).toContain(`· ${s.title}`);
    expect(frame).toContain('not probed yet');
    expect(frame).toContain('seen as: all_reduce at ~1 GB/s; NCCL INFO NET/Socket');
    // Nothing diagnosed yet: f is not offered, and pressing it says why (the diagnosis names the fix).
    expect(frame).toMatch(/↑↓ symptom {2}⏎ run {2}a run all {2}jk scroll/);
    expect(frame).not.toContain('f fix');
    ui.stdin.write('f');
    await until(
      () => (ui.lastFrame() ?? '').includes('run it first (⏎): the fix follows from the diagnosis'),
      'why f does nothing',
    );
    expect(calls(c.fixSymptom)).toHaveLength(0);
    ui.stdin.write('\u001B[B');
    await until(() => store.getState().ui.troubleshoot.cursor === 1, 'the cursor');
    ui.stdin.write('\r');
    await until(() => calls(c.runSymptom).length === 1, 'runSymptom');
    expect(calls(c.runSymptom)[0]).toEqual(['pfc-one-side']);
    ui.stdin.write('a');
    await until(() => calls(c.runAllSymptoms).length === 1, 'runAllSymptoms');
    ui.stdin.write('\u001B');
    await until(() => (ui.lastFrame() ?? '').includes('l20-setup · pipeline'), 'the pipeline again');
    ui.unmount();
  });

  it("while probing, both hosts' panes show the probes' live output", async () => {
    const { store, ui, frame } = opened();
    store.dispatch({ type: 'troubleshoot.running', symptom: 'pfc-one-side' });
    store.dispatch({ type: 'stage.state', stage: 'qos', state: 'running' });
    for (const [h, pfc] of [
      ['l20-n1', '0   0   0   1'],
      ['l20-n2', '0   0   0   0'],
    ] as const) {
      store.dispatch({ type: 'host.state', host: h, state: 'connected' });
      store.dispatch({
        type: 'cmd.start',
        host: h,
        runId: `${h}q`,
        stage: 'qos',
        probe: 'mlnx_qos',
        commandLine: 'mlnx_qos -i ens1f0',
        sudo: true,
      });
      store.dispatch({
        type: 'cmd.output',
        host: h,
        runId: `${h}q`,
        stage: 'qos',
        probe: 'mlnx_qos',
        stream: 'stdout',
        lines: [clean('PFC configuration:'), clean(`\tenabled     ${pfc}`)],
      });
    }
    // ink-testing-library's terminal is 100 columns: each pane shows the start of its lines.
    const both = (r: string, text: string) => r.split(text).length === 3;
    await until(
      () =>
        frame()
          .split('\n')
          .some((r) => both(r, 'mlnx_qos    │  enabled')),
      "both panes' output",
      frame,
    );
    const rows = frame().split('\n');
    expect(rows.some((r) => both(r, 'mlnx_qos    │PFC configurati'))).toBe(true);
    expect(rows.some((r) => both(r, '$ [root] mlnx_qos: running'))).toBe(true);
    expect(rows.some((r) => /l20-n1\s+127\.0\.0\.1:4001\s+conn.*l20-n2\s+127\.0\.0\.1:4002\s+conn/.test(r))).toBe(true);
    expect(frame()).toContain('probing "PFC configured on one side only" on l20-n1, l20-n2: qos');
    expect(frame()).toContain('… PFC configured on one side only');
    ui.unmount();
  });

  it('a found diagnosis: cause, R26, the two mlnx_qos outputs side by side with the differing lines marked; j scrolls; f fixes', async () => {
    const { store, c, ui, frame } = opened();
    store.dispatch({ type: 'troubleshoot.cursor', delta: 1 });
    // Two ports' outputs: more lines than the 24-row terminal shows, so j scrolls.
    const d = pfcDiagnosis();
    store.dispatch({
      type: 'troubleshoot.diagnosis',
      diagnosis: { ...d, comparisons: [...d.comparisons, { ...d.comparisons[0]!, label: 'mlnx_qos -i ens1f1' }] },
    });
    await until(() => frame().includes('cause found'), 'the diagnosis', frame);
    const f = frame();
    expect(f).toContain('✘ PFC configured on one side only — cause found');
    expect(f).toContain('rules R26 · on l20-n2');
    expect(f).toContain('f plans qos');
    expect(f).toContain('── mlnx_qos -i ens1f0: 2 lines differ (≠)');
    const rows = f.split('\n');
    expect(rows.some((r) => /l20-n1 +│ l20-n2/.test(r))).toBe(true);
    const enabled = rows.find((r) => r.includes('enabled     0   0   0   1'))!;
    expect(enabled).toMatch(/≠ {3}enabled {5}0 {3}0 {3}0 {3}1 .*│ {3}enabled {5}0 {3}0 {3}0 {3}0 /);
    const trust = rows.find((r) => r.includes('Priority trust state: dscp'))!;
    expect(trust).not.toContain('≠');
    expect(f).toMatch(/… \d+ more lines \(j\)/);
    expect(f).toMatch(/a run all {2}f fix {2}jk scroll/); // found, with a fix stage: f is offered
    ui.stdin.write('j');
    await until(() => store.getState().ui.troubleshoot.scroll === 1, 'the scroll');
    await until(() => !frame().includes('cause found'), 'the first line scrolled away', frame);
    ui.stdin.write('f');
    await until(() => calls(c.fixSymptom).length === 1, 'fixSymptom');
    expect(calls(c.fixSymptom)[0]).toEqual(['pfc-one-side']);
    ui.unmount();
  });
});
