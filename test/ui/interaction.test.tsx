/**
 * The interaction layer through the rendered App (ink-testing-library, one chunk per stdin write): the
 * regressions of the old split handling — Esc did not close help; the setup footer offered q and ? that
 * did nothing there; Backspaces arriving as one chunk were typed into a field as literal DEL characters —
 * and pasted text landing whole in a field.
 */
import React from 'react';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import type { Controller } from '../../src/engine/controller.js';
import { fakeController } from '../helpers/fake-controller.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

async function until(check: () => boolean, what: string, frame?: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}${frame ? `; frame:\n${frame()}` : ''}`);
}

const calls = (f: unknown) => (f as ReturnType<typeof vi.fn>).mock.calls;

function mount(store: AppStore, c: Controller) {
  const ui = render(
    <Providers store={store} controller={c}>
      <App />
    </Providers>,
  );
  const frame = () => ui.lastFrame() ?? '';
  return { ui, frame };
}

/** The footer's keys: the frame's last non-empty line. */
const footerLine = (frame: string) =>
  frame
    .split('\n')
    .filter((l) => l.trim() !== '')
    .at(-1) ?? '';

describe('help', () => {
  it('? opens it over the stage view, Esc closes it (and ? again does too)', async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    const { ui, frame } = mount(store, fakeController());
    ui.stdin.write('?');
    await until(() => frame().includes('Keys — stage'), 'the help overlay', frame);
    expect(frame()).toContain('verdict details: evidence and fix of every check');
    expect(frame()).toMatch(/cancel running commands — not now: nothing is running/); // disabled: dimmed, with why
    expect(footerLine(frame())).toBe('esc close  q quit  ? help');
    ui.stdin.write('\u001b');
    await until(() => !frame().includes('Keys —'), 'the overlay closed by Esc', frame);
    expect(frame()).toContain('cluster checks');
    ui.stdin.write('?');
    await until(() => frame().includes('Keys — stage'), 'the overlay again', frame);
    ui.stdin.write('?');
    await until(() => !frame().includes('Keys —'), 'the overlay closed by ?', frame);
    ui.unmount();
  });
});

describe('the setup screen', () => {
  it('its footer shows the keys that work there; ? opens help, Esc closes it, q quits', async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const c = fakeController();
    const { ui, frame } = mount(store, c);
    expect(footerLine(frame())).toBe(
      '↑↓←→ move  ⏎ edit  + add  - remove  t test  n design  w save  esc back  m monitor  q quit  ? help',
    );
    ui.stdin.write('?');
    await until(() => frame().includes('Keys — setup'), 'help on the setup screen', frame);
    expect(frame()).toContain('network design: A (default), B or tutorial');
    ui.stdin.write('\u001b');
    await until(() => frame().includes('Network design:'), 'the setup screen again', frame);
    expect(calls(c.quit)).toHaveLength(0);
    ui.stdin.write('q');
    await until(() => calls(c.quit).length === 1, 'quit');
    ui.unmount();
  });

  it('a field: Backspace ×6 in one chunk (DEL, then ^H) deletes, pasted text lands whole, ⏎ keeps it', async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const c = fakeController();
    const { ui, frame } = mount(store, c);
    ui.stdin.write('\r'); // the first host's name, "l20-n1"
    await until(() => frame().includes('l20-n1▏'), 'edit mode', frame);
    expect(footerLine(frame())).toBe('⏎ keep  esc undo  ⌫ delete');
    ui.stdin.write('\u007f'.repeat(6));
    await until(() => store.getState().ui.setup.editing === '', 'six characters deleted', frame);
    expect(frame()).not.toContain('\u007f');
    ui.stdin.write('gpu-a-long');
    await until(() => frame().includes('gpu-a-long▏'), 'the pasted name', frame);
    ui.stdin.write('\b'.repeat(5));
    await until(() => frame().includes('gpu-a▏'), 'five more deleted (^H)', frame);
    // q, ? and m are letters here: no quit, no help, no monitor.
    ui.stdin.write('?q');
    await until(() => frame().includes('gpu-a?q▏'), 'letters that are keys elsewhere', frame);
    ui.stdin.write('\u007f\u007f');
    ui.stdin.write('\r');
    await until(() => !frame().includes('▏'), 'committed', frame);
    expect([c.quit, c.openMonitor].map((f) => calls(f).length)).toEqual([0, 0]);
    expect(store.getState().ui.showHelp).toBe(false);
    ui.stdin.write('w');
    await until(() => calls(c.saveHosts).length === 1, 'save');
    expect(calls(c.saveHosts)[0]![0][0]).toMatchObject({ name: 'gpu-a', role: 'head' });
    await until(() => store.getState().ui.screen === 'pipeline', 'the pipeline after saving');
    ui.unmount();
  });
});

describe('a trust question while a field is edited', () => {
  it("takes the keys: n refuses the key (and does not change the design, as the setup screen's n would)", async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const c = fakeController();
    const { ui, frame } = mount(store, c);
    store.dispatch({
      type: 'prompt.open',
      prompt: {
        id: 3,
        kind: 'trust',
        host: 'gpu-a',
        address: '10.0.0.1:22',
        keyType: 'ssh-ed25519',
        fingerprint: 'SHA256:xyz',
      },
    });
    await until(() => frame().includes('unknown host key of gpu-a'), 'the question', frame);
    ui.stdin.write('n');
    await until(() => calls(c.answerTrust).length === 1, 'the answer');
    expect(calls(c.answerTrust)[0]).toEqual([3, false]);
    expect(store.getState().ui.setup.design).toBe('A');
    ui.unmount();
  });
});
