/**
 * README's key list, generated from the binding tables (scripts/readme-keys.mjs writes it between its
 * markers; test/ui/readme-keys.test.ts fails when it is not what the tables say).
 */
import {
  confirmBindings,
  detailsBindings,
  fieldBindings,
  globalBindings,
  helpBindings,
  hostGridBindings,
  journalBindings,
  monitorBindings,
  pipelineBindings,
  planBindings,
  quitBindings,
  setupBindings,
  stageBindings,
  troubleshootBindings,
  trustBindings,
  type Binding,
} from './bindings.js';
import { appState } from '../state/app-store.js';

export const KEYS_BEGIN = '<!-- keys: generated from screens/input/bindings.ts by `node scripts/readme-keys.mjs` -->';
export const KEYS_END = '<!-- keys: end -->';

const KEY_NAMES: Record<string, string> = {
  up: '↑',
  down: '↓',
  left: '←',
  right: '→',
  enter: '⏎',
  escape: 'Esc',
  tab: 'Tab',
  'shift+tab': 'Shift-Tab',
  pageup: 'PgUp',
  pagedown: 'PgDn',
  backspace: 'Backspace',
  'ctrl+c': 'Ctrl-C',
};

function keyName(spec: string): string {
  return KEY_NAMES[spec] ?? spec;
}

function entry(b: Binding): string {
  if (b.keys.includes('text')) return `typed or pasted text goes into the field`;
  if (b.keys.includes('any')) return `any other key: ${b.description.replace(/^any other key: /, '')}`;
  return `${b.keys.map((k) => `\`${keyName(k)}\``).join('/')} ${b.description}`;
}

/** Words wrapped to `width` columns, continuation lines indented by two spaces (a list item's text). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && Array.from(`${line} ${word}`).length > width) {
      lines.push(line);
      line = `  ${word}`;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** The stage view's own table, as on a cluster of two hosts (the host grid is listed on its own). */
const stageOfTwo = stageBindings(
  appState([
    { name: 'a', address: 'a' },
    { name: 'b', address: 'b' },
  ]),
);

const CONTEXTS: ReadonlyArray<[string, readonly Binding[]]> = [
  ['Everywhere (unless a question or a field has the keys)', globalBindings],
  ['Pipeline', pipelineBindings],
  ['Stage view', stageOfTwo],
  ['Stage view, more than two hosts (the host grid)', hostGridBindings],
  ['Verdict details', detailsBindings],
  ['Plan preview', planBindings],
  ['A dangerous step asks', confirmBindings],
  ['Monitor', monitorBindings],
  ['Troubleshoot', troubleshootBindings],
  ['Setup', setupBindings],
  ['Editing a setup field', fieldBindings],
  ['Interrupted apply found at start', journalBindings],
  ['Help', helpBindings],
  ['Quit?', quitBindings],
  ['Unknown host key', trustBindings],
];

export function keysMarkdown(width = 120): string {
  const lines = CONTEXTS.flatMap(([title, bindings]) =>
    wrap(`- **${title}**: ${bindings.map(entry).join('; ')}.`, width),
  );
  return [KEYS_BEGIN, ...lines, KEYS_END].join('\n');
}
