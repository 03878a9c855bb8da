/**
 * The key handler as a pure function: state and one chunk of input in, commands out. Chunks as Ink
 * hands them over (several keys typed faster than a render, Backspace in both forms, pasted text),
 * the modal stack's precedence, disabled bindings answering with their reason, and the footer and
 * help generated from the same tables. The regressions: Esc closes help; the setup footer offers
 * only keys that work there; chunked Backspace and paste edit a field.
 */
import type { Key } from 'ink';
import { describe, expect, it } from 'vitest';
import { footerText } from '../../screens/input/bindings.js';
import type { Command } from '../../screens/input/commands.js';
import { footerBindings, handleKey, helpLayer, modalStack } from '../../screens/input/handle-key.js';
import { appState, reduceApp } from '../../screens/state/app-store.js';
import { isUiAction, type AppAction, type AppState } from '../../screens/state/ui-types.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

const NONE: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};
/** What Ink reports for a lone key: Esc comes with meta set, as Ink sets it. */
const ESC: Key = { ...NONE, escape: true, meta: true };
const ENTER: Key = { ...NONE, return: true };
const CTRL: Key = { ...NONE, ctrl: true };

const apply = (s: AppState, ...actions: AppAction[]): AppState => actions.reduce(reduceApp, s);

/** Runs the screen actions of `commands` through the reducer (what App does with them, less the session's). */
function after(s: AppState, commands: readonly Command[]): AppState {
  return commands.filter(isUiAction).reduce(reduceApp, s);
}

/** Presses `input` (one chunk) and returns the state its screen actions leave, and the commands. */
function press(s: AppState, input: string, key: Key = NONE): { state: AppState; commands: Command[] } {
  const commands = handleKey(s, input, key);
  return { state: after(s, commands), commands };
}

const sessionCalls = (commands: readonly Command[]) => commands.filter((c) => c.type.startsWith('do.'));
const footer = (s: AppState) => footerText(footerBindings(s));

/** The setup screen editing the first host's address, which holds `text`. */
function editingAddress(text: string): AppState {
  let s = appState([], { screen: 'setup' });
  s = after(s, handleKey(s, '', { ...NONE, rightArrow: true }));
  s = after(s, handleKey(s, '\r', ENTER));
  return apply(s, ...Array.from(text, (ch) => ({ type: 'setup.insert' as const, text: ch })));
}

describe('chunks are split into keys', () => {
  it('keys typed faster than a render, Enter included: "jjjj⏎" selects the fifth stage and opens it', () => {
    const { state, commands } = press(appState(hosts), 'jjjj\r');
    expect(commands).toEqual([
      ...Array.from({ length: 4 }, () => ({ type: 'ui.moveStage', delta: 1 })),
      { type: 'ui.screen', screen: 'stage' },
    ]);
    expect(state.ui).toMatchObject({ screen: 'stage', selectedStage: 'qos' });
  });

  it('each key of a chunk is routed by the state the keys before it left: "⏎d" opens a stage, then details', () => {
    const { state } = press(appState(hosts), '\rd');
    expect(state.ui).toMatchObject({ screen: 'stage', details: 0 });
    expect(modalStack(state)).toEqual(['details']);
  });

  for (const [form, ch] of [
    ['DEL (\\x7f)', '\u007f'],
    ['^H (\\b)', '\b'],
  ] as const) {
    it(`Backspace ×6 in one chunk, as ${form}, deletes six characters of the field (inserts nothing)`, () => {
      const { state, commands } = press(editingAddress('10.0.0.123'), ch.repeat(6));
      expect(commands).toEqual(Array.from({ length: 6 }, () => ({ type: 'setup.deleteBack' })));
      expect(state.ui.setup.editing).toBe('10.0');
    });
  }

  it('a lone Backspace as Ink reports it (DEL as "delete", ^H as "backspace") deletes one character', () => {
    const s = editingAddress('abc');
    expect(press(s, '', { ...NONE, delete: true }).state.ui.setup.editing).toBe('ab');
    expect(press(s, '', { ...NONE, backspace: true }).state.ui.setup.editing).toBe('ab');
  });

  it('pasted text goes into the field whole — letters that are keys elsewhere (q, ?, m) included', () => {
    const s = editingAddress('');
    const pasted = press(s, 'gpu-a.example?q=m');
    expect(pasted.state.ui.setup.editing).toBe('gpu-a.example?q=m');
    expect(sessionCalls(pasted.commands)).toEqual([]);
    expect(pasted.state.ui.showHelp).toBe(false);
    // Text and Backspace in one chunk, then Enter: the field keeps what is left.
    const edited = press(s, '10.0.0.19\u007f1\r');
    expect(edited.state.ui.setup.editing).toBeNull();
    expect(edited.state.ui.setup.hosts[0]?.address).toBe('10.0.0.11');
  });

  it('Ctrl-C in a field still interrupts: idle, it asks to quit', () => {
    const { state } = press(editingAddress('x'), 'c', CTRL);
    expect(state.ui.confirmQuit).toBe(true);
    expect(modalStack(state).at(-1)).toBe('quit');
  });
});

describe('the modal stack: the top modal owns the keys', () => {
  it('Esc closes the help overlay; ? toggles it; q still quits from it', () => {
    const open = press(appState(hosts, { screen: 'stage' }), '?').state;
    expect(modalStack(open)).toEqual(['help']);
    expect(press(open, '', ESC).state.ui.showHelp).toBe(false);
    expect(press(open, '?').state.ui.showHelp).toBe(false);
    expect(sessionCalls(press(open, 'q').commands)).toEqual([{ type: 'do.quit' }]);
    // Screen keys do not act under the overlay.
    expect(press(open, 'r').commands).toEqual([]);
  });

  it("help lists what lies under it — a modal's keys when one is open — and dims disabled keys with the reason", () => {
    const stage = appState(hosts, { screen: 'stage', implemented: ['inventory'] });
    const help = helpLayer(press(apply(stage, { type: 'ui.moveStage', delta: 4 }), '?').state);
    expect(help.title).toBe('stage');
    const apply_ = help.bindings.find((b) => b.keys.includes('a'));
    const s = apply(stage, { type: 'ui.moveStage', delta: 4 }, { type: 'ui.toggleHelp' });
    expect(apply_?.when?.(s)).toBe('qos has no steps yet');
    const journal = apply(
      appState(hosts),
      {
        type: 'prompt.open',
        prompt: {
          id: 1,
          kind: 'journal',
          journal: {
            phase: 'ask',
            runId: 'R',
            pid: 1,
            startedAt: '',
            stage: 'qos',
            inFlight: [],
            timers: [],
            resumeStages: ['qos'],
          },
        },
      },
      { type: 'ui.toggleHelp' },
    );
    expect(helpLayer(journal).title).toBe('interrupted apply found at start');
    expect(helpLayer(journal).bindings.map((b) => b.hint)).toEqual(
      expect.arrayContaining(['resume', 'roll back', 'later']),
    );
  });

  it('a trust question takes every key over a journal modal: y answers it, r does nothing', () => {
    const s = apply(
      appState(hosts),
      {
        type: 'prompt.open',
        prompt: {
          id: 1,
          kind: 'journal',
          journal: {
            phase: 'ask',
            runId: 'R',
            pid: 1,
            startedAt: '',
            stage: 'qos',
            inFlight: [],
            timers: [],
            resumeStages: ['qos'],
          },
        },
      },
      {
        type: 'prompt.open',
        prompt: { id: 2, kind: 'trust', host: 'l20-n1', address: 'x:22', keyType: 'ssh-ed25519', fingerprint: 'f' },
      },
    );
    expect(modalStack(s)).toEqual(['journal', 'trust']);
    expect(handleKey(s, 'r', NONE)).toEqual([]);
    expect(handleKey(s, 'q', NONE)).toEqual([]);
    expect(handleKey(s, 'y', NONE)).toEqual([{ type: 'do.answerTrust', id: 2, yes: true }]);
    expect(handleKey(s, '', ESC)).toEqual([{ type: 'do.answerTrust', id: 2, yes: false }]);
    // Answered (the session closes it), the journal's keys are back.
    const back = reduceApp(s, { type: 'prompt.close', id: 2 });
    expect(handleKey(back, 'r', NONE)).toEqual([{ type: 'do.answerJournal', id: 1, choice: 'resume' }]);
  });

  it("a dangerous step's question stays on screen: no monitor key; y and n answer it by id", () => {
    const s = apply(
      appState(hosts, { screen: 'stage' }),
      { type: 'session.apply', apply: { stage: 'qos', phase: 'applying' } },
      {
        type: 'prompt.open',
        prompt: { id: 5, kind: 'confirm', stage: 'qos', step: 'qos.persist', danger: 'disruptive', hosts: ['l20-n2'] },
      },
    );
    expect(modalStack(s)).toEqual(['confirm']);
    expect(handleKey(s, 'm', NONE)).toEqual([]);
    expect(handleKey(s, 'n', NONE)).toEqual([{ type: 'do.answerConfirm', id: 5, yes: false }]);
    expect(footer(s)).toBe('y yes  n no  ↑↓ scroll  q quit  ? help');
  });

  it('the quit question: y, q or ^C quit; any other key stays', () => {
    const s = apply(appState(hosts), { type: 'ui.confirmQuit', open: true });
    for (const [input, key] of [
      ['y', NONE],
      ['q', NONE],
      ['c', CTRL],
    ] as const) {
      expect(handleKey(s, input, key)).toEqual([{ type: 'do.quit' }]);
    }
    expect(press(s, 'x').state.ui.confirmQuit).toBe(false);
  });

  it('while the plan is computed there is no preview to answer: y and esc say so; the preview answers by id', () => {
    const planning = apply(appState(hosts, { screen: 'stage' }), {
      type: 'session.apply',
      apply: { stage: 'qos', phase: 'planning' },
    });
    expect(modalStack(planning)).toEqual(['plan']);
    expect(handleKey(planning, 'y', NONE)).toEqual([
      { type: 'ui.notice', text: 'planning: the preview comes when every step is computed' },
    ]);
    expect(footer(planning)).toBe('↑↓ scroll  m monitor  q quit  ? help');
    const preview = apply(
      planning,
      { type: 'session.apply' },
      { type: 'prompt.open', prompt: { id: 9, kind: 'plan', stage: 'qos', planned: true } },
    );
    expect(handleKey(preview, 'y', NONE)).toEqual([{ type: 'do.answerPlan', id: 9, yes: true }]);
    expect(handleKey(preview, '', ESC)).toEqual([{ type: 'do.answerPlan', id: 9, yes: false }]);
    // On another screen the preview waits (it is the stage view's): the monitor's keys work there.
    const monitor = reduceApp(preview, { type: 'monitor.open' });
    expect(modalStack(monitor)).toEqual([]);
  });
});

describe("screens: global keys first, then the screen's; disabled keys say why", () => {
  it("the setup screen's footer offers only keys that work there, and q and ? do what it says", () => {
    const setup = appState([], { screen: 'setup' });
    expect(footer(setup)).toBe(
      '↑↓←→ move  ⏎ edit  + add  - remove  t test  n design  w save  esc back  m monitor  q quit  ? help',
    );
    expect(handleKey(setup, 'q', NONE)).toEqual([{ type: 'do.quit' }]);
    expect(press(setup, '?').state.ui.showHelp).toBe(true);
    const busy = { ...setup, busy: true };
    expect(handleKey(busy, 'q', NONE)).toEqual([{ type: 'ui.confirmQuit', open: true }]);
    // Editing a field, its footer is the field's: q, ? and m are letters of the value.
    const editing = editingAddress('');
    expect(footer(editing)).toBe('⏎ keep  esc undo  ⌫ delete');
    expect(press(editing, 'q?m').state.ui.setup.editing).toBe('q?m');
  });

  it('a disabled key is left out of the footer; pressed, it shows its reason and asks nothing', () => {
    const s = apply(appState(hosts, { implemented: ['inventory'] }), { type: 'ui.moveStage', delta: 1 });
    expect(footer(s)).not.toContain('r run');
    expect(handleKey(s, 'r', NONE)).toEqual([
      { type: 'ui.notice', text: 'os has no checks yet; implemented: inventory' },
    ]);
    const running = { ...appState(hosts, { screen: 'stage' }), busy: true };
    expect(handleKey(running, 'a', NONE)).toEqual([
      { type: 'ui.notice', text: 'a stage is running; wait for it or press c to cancel' },
    ]);
    expect(footer(running)).toContain('c cancel');
    expect(footer({ ...running, busy: false })).not.toContain('c cancel');
  });

  it('Ctrl-C cancels while busy (then asks), and asks to quit when idle', () => {
    const busy = { ...appState(hosts), busy: true };
    expect(sessionCalls(handleKey(busy, 'c', CTRL))).toEqual([{ type: 'do.cancel' }]);
    expect(press(appState(hosts), 'c', CTRL).state.ui.confirmQuit).toBe(true);
  });
});
