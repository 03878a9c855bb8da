/**
 * The one key handler: a pure function of the store's state and a chunk of input. The modals form a
 * stack (derived from the state, so it cannot disagree with what is shown); the top one owns the keys.
 * A key goes to the top modal's table, then — if that modal lets keys through — the global table;
 * with no modal open, to the global table, then the current screen's. A disabled binding answers with
 * its reason. The footer and the help overlay read the same layers, so what they show is what works.
 */
import type { Key } from 'ink';
import { reduceApp } from '../state/app-store.js';
import { isUiAction, type AppState } from '../state/ui-types.js';
import {
  confirmBindings,
  detailsBindings,
  fieldBindings,
  globalBindings,
  helpBindings,
  journalBindings,
  monitorBindings,
  pipelineBindings,
  planBindings,
  promptOf,
  quitBindings,
  setupBindings,
  stageBindings,
  troubleshootBindings,
  trustBindings,
  type Binding,
} from './bindings.js';
import type { Command } from './commands.js';
import { matchesKey, pressesOf, type KeyPress } from './key-press.js';

export type ModalId = 'details' | 'plan' | 'field' | 'journal' | 'confirm' | 'help' | 'quit' | 'trust';

export interface Modal {
  id: ModalId;
  title: string;
  bindings: readonly Binding[];
  /** Keys its table lacks go on to the global table (q, ?, ^C); else they are ignored. */
  passesGlobal: boolean;
}

export const MODALS: Readonly<Record<ModalId, Modal>> = {
  details: { id: 'details', title: 'verdict details (stage view)', bindings: detailsBindings, passesGlobal: true },
  plan: { id: 'plan', title: 'plan preview (stage view)', bindings: planBindings, passesGlobal: true },
  field: { id: 'field', title: 'editing a setup field', bindings: fieldBindings, passesGlobal: false },
  journal: { id: 'journal', title: 'interrupted apply found at start', bindings: journalBindings, passesGlobal: true },
  confirm: { id: 'confirm', title: 'a dangerous step asks', bindings: confirmBindings, passesGlobal: true },
  help: { id: 'help', title: 'help', bindings: helpBindings, passesGlobal: true },
  quit: { id: 'quit', title: 'quit?', bindings: quitBindings, passesGlobal: false },
  trust: { id: 'trust', title: 'unknown host key', bindings: trustBindings, passesGlobal: false },
};

/** The open modals, bottom first: the last one is on top. */
export function modalStack(s: AppState): ModalId[] {
  const { ui } = s;
  const open: Array<[ModalId, boolean]> = [
    ['details', ui.screen === 'stage' && ui.details !== null],
    ['plan', ui.screen === 'stage' && (ui.apply?.phase === 'planning' || promptOf(s, 'plan') !== undefined)],
    ['field', ui.screen === 'setup' && ui.setup.editing !== null],
    ['journal', promptOf(s, 'journal') !== undefined],
    ['confirm', promptOf(s, 'confirm') !== undefined],
    ['help', ui.showHelp],
    ['quit', ui.confirmQuit],
    ['trust', promptOf(s, 'trust') !== undefined],
  ];
  return open.filter(([, isOpen]) => isOpen).map(([id]) => id);
}

export function topModal(s: AppState): Modal | undefined {
  const id = modalStack(s).at(-1);
  return id ? MODALS[id] : undefined;
}

export function screenBindings(s: AppState): readonly Binding[] {
  switch (s.ui.screen) {
    case 'pipeline':
      return pipelineBindings;
    case 'stage':
      return stageBindings(s);
    case 'monitor':
      return monitorBindings;
    case 'troubleshoot':
      return troubleshootBindings;
    case 'setup':
      return setupBindings;
  }
}

/** What owns the keys now, in the order they are tried. */
function keyTables(s: AppState, modal: Modal | undefined): Array<readonly Binding[]> {
  if (modal) return modal.passesGlobal ? [modal.bindings, globalBindings] : [modal.bindings];
  return [globalBindings, screenBindings(s)];
}

/** The bindings in effect, in the order the footer and help show them (the modal's or screen's, then global). */
export function activeBindings(s: AppState, modal: Modal | undefined): readonly Binding[] {
  const [first = [], second = []] = keyTables(s, modal);
  return modal ? [...first, ...second] : [...second, ...first];
}

/** The footer: the bindings that work now. */
export function footerBindings(s: AppState): readonly Binding[] {
  return activeBindings(s, topModal(s)).filter((b) => b.when?.(s) === undefined);
}

/** The help overlay: every binding of what lies under it (disabled ones with their reason), and help's own. */
export function helpLayer(s: AppState): { title: string; bindings: readonly Binding[] } {
  const below = modalStack(s)
    .filter((id) => id !== 'help')
    .at(-1);
  const modal = below ? MODALS[below] : undefined;
  return { title: modal?.title ?? s.ui.screen, bindings: [...activeBindings(s, modal), ...helpBindings] };
}

/** One key: the first binding of the tables in effect that takes it. */
export function routeKey(s: AppState, press: KeyPress): Command[] {
  for (const table of keyTables(s, topModal(s))) {
    const binding = table.find((b) => b.keys.some((k) => matchesKey(k, press)));
    if (!binding) continue;
    const reason = binding.when?.(s);
    return reason !== undefined ? [{ type: 'ui.notice', text: reason }] : binding.run(s, press);
  }
  return [];
}

/**
 * A chunk of input (several keys when they came faster than a render, or pasted text): each key is routed
 * against the state the keys before it leave, so "jjjj⏎" opens the fifth stage and "⏎10.0.0.1⏎" edits a field.
 */
export function handleKey(state: AppState, input: string, key: Key): Command[] {
  const commands: Command[] = [];
  let s = state;
  for (const press of pressesOf(input, key)) {
    const next = routeKey(s, press);
    commands.push(...next);
    for (const c of next) if (isUiAction(c)) s = reduceApp(s, c);
  }
  return commands;
}
