/**
 * Every key of the TUI, as tables: each screen and each modal declares its bindings — the keys, how
 * the footer and the help show them, when they do not apply (and why), and what they ask for. The
 * dispatcher (handle-key.ts) routes a key through these tables and nothing else; the footer, the
 * help overlay and README's key list are generated from them.
 */
import { checksWorstFirst } from '../../src/engine/store.js';
import type { Prompt, QuestionKind } from '../../src/engine/prompts.js';
import { symptomIdForCheck } from '../../src/troubleshoot/lookup.js';
import { gridPerRow } from '../stage/host-grid.js';
import { FIELDS } from '../state/setup-draft.js';
import type { AppState } from '../state/ui-types.js';
import type { Command } from './commands.js';
import type { KeyPress, KeySpec } from './key-press.js';

export interface Binding {
  keys: readonly KeySpec[];
  /** Display form, e.g. "↑↓". */
  label: string;
  description: string;
  /** The few words the footer shows. */
  hint?: string;
  showInFooter: boolean;
  /** Undefined while the key works; else why it does not now (the footer leaves it out, the help dims it
   *  with the reason, and pressing it shows the reason). */
  when?: (s: AppState) => string | undefined;
  run: (s: AppState, press: KeyPress) => Command[];
}

const BUSY = 'a stage is running; wait for it or press c to cancel';
const notice = (text: string): Command => ({ type: 'ui.notice', text });

/** The open question of a kind the modal answers (the oldest one first). */
export function promptOf<K extends QuestionKind>(s: AppState, kind: K): Extract<Prompt, { kind: K }> | undefined {
  return s.ui.prompts.find((p): p is Extract<Prompt, { kind: K }> => p.kind === kind);
}

// ── Global: every screen, and the modals that let keys through ─────────────────────────────────────

const interrupt: Binding = {
  keys: ['ctrl+c'],
  label: '^C',
  description: 'cancel running commands, then ask to quit',
  showInFooter: false,
  run: (s) =>
    s.busy
      ? [{ type: 'do.cancel' }, notice('cancelled the running commands on every host; ^C again to quit')]
      : [{ type: 'ui.confirmQuit', open: true }],
};

export const globalBindings: readonly Binding[] = [
  interrupt,
  {
    keys: ['q'],
    label: 'q',
    description: 'quit (asks first while commands run)',
    hint: 'quit',
    showInFooter: true,
    run: (s) => (s.busy ? [{ type: 'ui.confirmQuit', open: true }] : [{ type: 'do.quit' }]),
  },
  {
    keys: ['?'],
    label: '?',
    description: 'show or hide all keys',
    hint: 'help',
    showInFooter: true,
    run: () => [{ type: 'ui.toggleHelp' }],
  },
];

// ── Keys several screens share ──────────────────────────────────────────────────────────────────────

const monitorKey: Binding = {
  keys: ['m'],
  label: 'm',
  hint: 'monitor',
  showInFooter: true,
  description: 'live monitor: GPUs, ports, vLLM and alerts of every host (m again comes back)',
  run: () => [{ type: 'do.openMonitor' }],
};

const troubleshootKey: Binding = {
  keys: ['x'],
  label: 'x',
  hint: 'troubleshoot',
  showInFooter: true,
  description: 'troubleshoot: pick a symptom, probe both hosts, see the cause and fix it',
  run: () => [{ type: 'do.openTroubleshoot' }],
};

function notImplemented(s: AppState, what: 'checks' | 'steps'): string | undefined {
  const stage = s.ui.selectedStage;
  if (s.ui.implemented.includes(stage)) return undefined;
  return what === 'steps'
    ? `${stage} has no steps yet`
    : `${stage} has no checks yet; implemented: ${s.ui.implemented.join(', ')}`;
}

const runStage = (description: string): Binding => ({
  keys: ['r'],
  label: 'r',
  description,
  hint: 'run',
  showInFooter: true,
  when: (s) => notImplemented(s, 'checks') ?? (s.busy ? BUSY : undefined),
  run: (s) => [
    { type: 'ui.notice' },
    { type: 'ui.screen', screen: 'stage' },
    { type: 'do.runStage', stage: s.ui.selectedStage },
  ],
});

/** The check T troubleshoots: in details the selected one, in the panes the stage's worst not-passing one. */
function checkToTroubleshoot(s: AppState) {
  const list = checksWorstFirst(s, s.ui.selectedStage);
  const details = s.ui.details;
  return details !== null
    ? list[Math.min(details, list.length - 1)]
    : list.find((c) => c.status !== 'pass' && c.status !== 'skip');
}

const troubleshootCheckKey: Binding = {
  keys: ['T'],
  label: 'T',
  hint: 'troubleshoot',
  showInFooter: true,
  description: 'troubleshoot this check: open the symptom it belongs to and probe it',
  when: (s) => {
    const check = checkToTroubleshoot(s);
    if (!check) return `no failing check in ${s.ui.selectedStage} to troubleshoot — x opens the symptom list`;
    return symptomIdForCheck(check)
      ? undefined
      : `no symptom in the catalog reads ${check.id} — x opens the symptom list`;
  },
  run: (s) => {
    const check = checkToTroubleshoot(s);
    const symptom = check ? symptomIdForCheck(check) : undefined;
    return symptom ? [{ type: 'do.openTroubleshoot', symptom }] : [];
  },
};

// ── Screens ─────────────────────────────────────────────────────────────────────────────────────────

export const pipelineBindings: readonly Binding[] = [
  {
    keys: ['up', 'k'],
    label: '↑↓',
    description: 'select stage',
    hint: 'stage',
    showInFooter: true,
    run: () => [{ type: 'ui.moveStage', delta: -1 }],
  },
  {
    keys: ['down', 'j'],
    label: '',
    description: 'select next stage',
    showInFooter: false,
    run: () => [{ type: 'ui.moveStage', delta: 1 }],
  },
  {
    keys: ['enter'],
    label: '⏎',
    description: 'open the stage view',
    hint: 'open',
    showInFooter: true,
    run: () => [{ type: 'ui.screen', screen: 'stage' }],
  },
  runStage("run the selected stage's checks on every host"),
  {
    keys: ['a'],
    label: 'a',
    description: "run every implemented stage's checks",
    hint: 'run all',
    showInFooter: true,
    when: (s) => (s.busy ? BUSY : undefined),
    run: () => [{ type: 'do.runAll' }, { type: 'ui.screen', screen: 'stage' }],
  },
  {
    keys: ['s'],
    label: 's',
    description: 'edit hosts (setup)',
    hint: 'hosts',
    showInFooter: true,
    run: () => [{ type: 'ui.screen', screen: 'setup' }],
  },
  troubleshootKey,
  monitorKey,
];

/**
 * The stage view's host grid (more than two hosts). ←→ already step through stages and [ ] cycle
 * the panes, so the cursor takes tab and ↑↓ (free in the stage view), and { } — shifted [ ] —
 * put the cursor's host into the left or right pane. The stage footer is already full at 120
 * columns, so the grid's header line shows these (its "footer" entries) and the App's footer not.
 */
export const hostGridBindings: readonly Binding[] = [
  {
    keys: ['tab'],
    label: 'tab↑↓',
    description: 'host grid: cursor to the next host (hosts are worst first)',
    hint: 'host',
    showInFooter: true,
    run: () => [{ type: 'ui.gridCursor', delta: 1 }],
  },
  {
    keys: ['shift+tab'],
    label: 'S-tab',
    description: 'host grid: cursor to the previous host',
    showInFooter: false,
    run: () => [{ type: 'ui.gridCursor', delta: -1 }],
  },
  // A row of the grid is as many hosts as its width holds (the view lays it out the same way).
  {
    keys: ['up', 'k'],
    label: '↑',
    description: 'host grid: cursor a row up',
    showInFooter: false,
    run: (s) => [{ type: 'ui.gridCursor', delta: -gridPerRow(s.ui.terminal.columns, s.hostOrder) }],
  },
  {
    keys: ['down', 'j'],
    label: '↓',
    description: 'host grid: cursor a row down',
    showInFooter: false,
    run: (s) => [{ type: 'ui.gridCursor', delta: gridPerRow(s.ui.terminal.columns, s.hostOrder) }],
  },
  {
    keys: ['{'],
    label: '{}',
    description: "show the grid cursor's host in the left pane",
    hint: 'into left/right pane',
    showInFooter: true,
    run: () => [{ type: 'ui.showHost', side: 'left' }],
  },
  {
    keys: ['}'],
    label: '}',
    description: "show the grid cursor's host in the right pane",
    showInFooter: false,
    run: () => [{ type: 'ui.showHost', side: 'right' }],
  },
];

const stagePanesBindings: readonly Binding[] = [
  {
    keys: ['escape', 'b'],
    label: 'esc',
    description: 'back to the pipeline',
    hint: 'back',
    showInFooter: true,
    run: () => [{ type: 'ui.screen', screen: 'pipeline' }],
  },
  {
    keys: ['d', 'enter'],
    label: 'd',
    description: 'verdict details: evidence and fix of every check',
    hint: 'details',
    showInFooter: true,
    run: () => [{ type: 'ui.details', index: 0 }],
  },
  runStage("run this stage's checks on every host"),
  {
    keys: ['a', 'p'],
    label: 'a',
    hint: 'apply',
    showInFooter: true,
    description: "apply: preview every step's commands and diffs per host, then y to apply",
    when: (s) => notImplemented(s, 'steps') ?? (s.busy ? BUSY : undefined),
    run: (s) => [{ type: 'do.planStage', stage: s.ui.selectedStage }],
  },
  {
    keys: ['c'],
    label: 'c',
    description: 'cancel running commands',
    hint: 'cancel',
    showInFooter: true,
    when: (s) => (s.busy ? undefined : 'nothing is running'),
    run: () => [{ type: 'do.cancel' }],
  },
  {
    keys: ['['],
    label: '[',
    description: 'show another host in the left pane',
    hint: 'left host',
    showInFooter: true,
    run: () => [{ type: 'ui.cycleHost', side: 'left' }],
  },
  {
    keys: [']'],
    label: ']',
    description: 'show another host in the right pane',
    hint: 'right host',
    showInFooter: true,
    run: () => [{ type: 'ui.cycleHost', side: 'right' }],
  },
  {
    keys: ['left', 'h'],
    label: '←→',
    description: 'previous stage',
    hint: 'stage',
    showInFooter: true,
    run: () => [{ type: 'ui.moveStage', delta: -1 }],
  },
  {
    keys: ['right', 'l'],
    label: '',
    description: 'next stage',
    showInFooter: false,
    run: () => [{ type: 'ui.moveStage', delta: 1 }],
  },
];

const APPLYING = "an apply is running: its keys stay the stage's until it ends";
/** Troubleshooting opens from the panes, not over an apply (whose questions must stay in this view). */
const whileNotApplying = (b: Binding): Binding => ({
  ...b,
  when: (s) => (s.ui.apply ? APPLYING : b.when?.(s)),
});

export function stageBindings(s: AppState): readonly Binding[] {
  const grid = s.hostOrder.length > 2 ? hostGridBindings.map((b) => ({ ...b, showInFooter: false })) : [];
  return [
    ...stagePanesBindings,
    ...grid,
    whileNotApplying(troubleshootKey),
    whileNotApplying(troubleshootCheckKey),
    monitorKey,
  ];
}

export const monitorBindings: readonly Binding[] = [
  {
    keys: ['m', 'escape'],
    label: 'esc',
    description: 'back to the screen the monitor was opened from (sampling goes on)',
    hint: 'back',
    showInFooter: true,
    run: () => [{ type: 'do.closeMonitor' }],
  },
  {
    keys: ['t'],
    label: 't',
    description: 'sparkline timebase: last minute → 10 minutes → hour',
    hint: 'timebase',
    showInFooter: true,
    run: () => [{ type: 'do.monitorTimebase' }],
  },
  {
    keys: ['s'],
    label: 's',
    description: 'GPU sparkline: util → mem → power → temp → SM clock',
    hint: 'gpu metric',
    showInFooter: true,
    run: () => [{ type: 'monitor.metric' }],
  },
  {
    keys: ['left', 'h'],
    label: '←→',
    description: "move the host picker's cursor (more than two hosts)",
    hint: 'host',
    showInFooter: true,
    run: () => [{ type: 'monitor.cursor', delta: -1 }],
  },
  {
    keys: ['right', 'l'],
    label: '',
    description: "move the host picker's cursor right",
    showInFooter: false,
    run: () => [{ type: 'monitor.cursor', delta: 1 }],
  },
  {
    keys: ['['],
    label: '[',
    description: "show the cursor's host in the left column",
    hint: 'left',
    showInFooter: true,
    run: () => [{ type: 'monitor.show', side: 'left' }],
  },
  {
    keys: [']'],
    label: ']',
    description: "show the cursor's host in the right column",
    hint: 'right',
    showInFooter: true,
    run: () => [{ type: 'monitor.show', side: 'right' }],
  },
];

const cursorSymptom = (s: AppState) => s.troubleshoot.symptoms[s.ui.troubleshoot.cursor];
const noSymptom = (s: AppState) => (cursorSymptom(s) ? undefined : 'no symptom selected');
/** A page: the body less a row of overlap, so the last line read stays in view. */
const page = (s: AppState) => Math.max(1, s.ui.terminal.rows - 6);

function cannotFix(s: AppState): string | undefined {
  const symptom = cursorSymptom(s);
  if (!symptom) return 'no symptom selected';
  const d = s.troubleshoot.diagnoses[symptom.id];
  if (!d) return 'run it first (⏎): the fix follows from the diagnosis';
  if (d.status === 'clear') return `${d.title}: clear — nothing to fix`;
  if (!d.fixStages[0]) return `${d.title}: no stage fixes this — ${d.fix}`;
  return s.busy ? 'probes are running; wait for them or press c to cancel' : undefined;
}

// ↑↓ move between symptoms and j/k scroll the evidence: both are needed at once (read a diagnosis,
// step to the next symptom), so they cannot share keys the way other screens' ↑↓ and j/k do.
export const troubleshootBindings: readonly Binding[] = [
  {
    keys: ['up'],
    label: '↑↓',
    description: 'select symptom',
    hint: 'symptom',
    showInFooter: true,
    run: () => [{ type: 'troubleshoot.cursor', delta: -1 }],
  },
  {
    keys: ['down'],
    label: '',
    description: 'select next symptom',
    showInFooter: false,
    run: () => [{ type: 'troubleshoot.cursor', delta: 1 }],
  },
  {
    keys: ['enter'],
    label: '⏎',
    description: "run the symptom's probes on every host and diagnose",
    hint: 'run',
    showInFooter: true,
    when: noSymptom,
    run: (s) => [{ type: 'do.runSymptom', symptom: cursorSymptom(s)!.id }],
  },
  {
    keys: ['a'],
    label: 'a',
    description: 'run every symptom in turn',
    hint: 'run all',
    showInFooter: true,
    run: () => [{ type: 'do.runAllSymptoms' }],
  },
  {
    keys: ['f'],
    label: 'f',
    hint: 'fix',
    showInFooter: true,
    description: "fix: the fix stage's plan preview (diff per host), y applies, then the symptom runs again",
    when: cannotFix,
    run: (s) => [{ type: 'do.fixSymptom', symptom: cursorSymptom(s)!.id }],
  },
  {
    keys: ['k'],
    label: 'jk',
    description: 'scroll the diagnosis and evidence up',
    hint: 'scroll',
    showInFooter: true,
    run: () => [{ type: 'troubleshoot.scroll', delta: -1 }],
  },
  {
    keys: ['j'],
    label: '',
    description: 'scroll the diagnosis and evidence down',
    showInFooter: false,
    run: () => [{ type: 'troubleshoot.scroll', delta: 1 }],
  },
  {
    keys: ['pageup'],
    label: 'PgUp',
    description: 'scroll the diagnosis up a page',
    showInFooter: false,
    run: (s) => [{ type: 'troubleshoot.scroll', delta: -page(s) }],
  },
  {
    keys: ['pagedown'],
    label: 'PgDn',
    description: 'scroll the diagnosis down a page',
    showInFooter: false,
    run: (s) => [{ type: 'troubleshoot.scroll', delta: page(s) }],
  },
  {
    keys: ['c'],
    label: 'c',
    description: 'cancel the running probes',
    hint: 'cancel',
    showInFooter: true,
    when: (s) => (s.busy || s.troubleshoot.running !== null ? undefined : 'nothing is running'),
    run: () => [{ type: 'do.cancel' }],
  },
  {
    keys: ['escape', 'b'],
    label: 'esc',
    description: 'back to the screen troubleshoot was opened from',
    hint: 'back',
    showInFooter: true,
    run: () => [{ type: 'troubleshoot.close' }],
  },
];

export const setupBindings: readonly Binding[] = [
  {
    keys: ['up', 'k'],
    label: '↑↓←→',
    description: 'select the host above',
    hint: 'move',
    showInFooter: true,
    run: () => [{ type: 'setup.move', delta: -FIELDS.length }],
  },
  {
    keys: ['down', 'j'],
    label: '',
    description: 'select the host below',
    showInFooter: false,
    run: () => [{ type: 'setup.move', delta: FIELDS.length }],
  },
  {
    keys: ['left'],
    label: '',
    description: 'select the field to the left',
    showInFooter: false,
    run: () => [{ type: 'setup.move', delta: -1 }],
  },
  {
    keys: ['right'],
    label: '',
    description: 'select the field to the right',
    showInFooter: false,
    run: () => [{ type: 'setup.move', delta: 1 }],
  },
  {
    keys: ['enter'],
    label: '⏎',
    description: 'edit the field (⏎ again to keep, esc to undo)',
    hint: 'edit',
    showInFooter: true,
    run: () => [{ type: 'setup.startEdit' }],
  },
  {
    keys: ['+'],
    label: '+',
    description: 'add a host',
    hint: 'add',
    showInFooter: true,
    run: () => [{ type: 'setup.add' }],
  },
  {
    keys: ['-'],
    label: '-',
    description: 'remove the selected host',
    hint: 'remove',
    showInFooter: true,
    when: (s) => (s.ui.setup.hosts.length > 1 ? undefined : 'the last host stays'),
    run: () => [{ type: 'setup.remove' }],
  },
  {
    keys: ['t'],
    label: 't',
    description: 'test the connection of every host',
    hint: 'test',
    showInFooter: true,
    run: (s) => [
      { type: 'setup.message', text: 'testing connections…' },
      { type: 'do.testConnections', hosts: s.ui.setup.hosts },
    ],
  },
  {
    keys: ['n'],
    label: 'n',
    description: 'network design: A (default), B or tutorial — its consequences are shown below',
    hint: 'design',
    showInFooter: true,
    run: () => [{ type: 'setup.design' }],
  },
  {
    keys: ['w'],
    label: 'w',
    description: 'save the inventory',
    hint: 'save',
    showInFooter: true,
    run: (s) => [{ type: 'do.saveHosts', hosts: s.ui.setup.hosts, design: s.ui.setup.design }],
  },
  {
    keys: ['escape'],
    label: 'esc',
    description: 'back to the pipeline',
    hint: 'back',
    showInFooter: true,
    run: () => [{ type: 'ui.screen', screen: 'pipeline' }],
  },
  monitorKey,
];

// ── Modals ──────────────────────────────────────────────────────────────────────────────────────────

/** Editing a setup field: every printable key is text (q, ?, m included); ^C still interrupts. */
export const fieldBindings: readonly Binding[] = [
  {
    keys: ['enter'],
    label: '⏎',
    description: 'keep the new value',
    hint: 'keep',
    showInFooter: true,
    run: () => [{ type: 'setup.commit' }],
  },
  {
    keys: ['escape'],
    label: 'esc',
    description: 'undo: keep the old value',
    hint: 'undo',
    showInFooter: true,
    run: () => [{ type: 'setup.undo' }],
  },
  {
    keys: ['backspace'],
    label: '⌫',
    description: 'delete the last character',
    hint: 'delete',
    showInFooter: true,
    run: () => [{ type: 'setup.deleteBack' }],
  },
  { ...interrupt },
  {
    keys: ['text'],
    label: 'text',
    description: 'typed or pasted text goes into the field',
    showInFooter: false,
    run: (_s, press) => [{ type: 'setup.insert', text: press.text }],
  },
];

export const detailsBindings: readonly Binding[] = [
  {
    keys: ['up', 'k'],
    label: '↑↓',
    description: 'previous check',
    hint: 'check',
    showInFooter: true,
    run: (s) => [{ type: 'ui.details', index: (s.ui.details ?? 0) - 1 }],
  },
  {
    keys: ['down', 'j'],
    label: '',
    description: 'next check',
    showInFooter: false,
    run: (s) => [
      {
        type: 'ui.details',
        index: Math.min((s.ui.details ?? 0) + 1, Math.max(0, s.checks[s.ui.selectedStage].length - 1)),
      },
    ],
  },
  {
    keys: ['escape', 'd', 'b'],
    label: 'esc',
    description: 'back to the panes',
    hint: 'back',
    showInFooter: true,
    run: () => [{ type: 'ui.details', index: null }],
  },
  troubleshootCheckKey,
  monitorKey,
];

const PLANNING = 'planning: the preview comes when every step is computed';
const scrollPlan: readonly Binding[] = [
  {
    keys: ['up', 'k'],
    label: '↑↓',
    description: 'scroll the plan',
    hint: 'scroll',
    showInFooter: true,
    run: () => [{ type: 'ui.scrollPlan', delta: -1 }],
  },
  {
    keys: ['down', 'j'],
    label: '',
    description: 'scroll down',
    showInFooter: false,
    run: () => [{ type: 'ui.scrollPlan', delta: 1 }],
  },
];

/** The plan of a stage: computing it, then its preview (a plan prompt). */
export const planBindings: readonly Binding[] = [
  {
    keys: ['y'],
    label: 'y',
    description: 'apply the previewed plan (dangerous steps still ask)',
    hint: 'apply',
    showInFooter: true,
    when: (s) => (promptOf(s, 'plan') ? undefined : PLANNING),
    run: (s) => [{ type: 'do.answerPlan', id: promptOf(s, 'plan')!.id, yes: true }],
  },
  {
    keys: ['escape', 'n'],
    label: 'esc',
    description: 'close the preview without applying',
    hint: 'close',
    showInFooter: true,
    when: (s) => (promptOf(s, 'plan') ? undefined : PLANNING),
    run: (s) => [{ type: 'do.answerPlan', id: promptOf(s, 'plan')!.id, yes: false }],
  },
  ...scrollPlan,
  monitorKey,
];

/** A dangerous step's question (a confirm prompt): it stays on screen until answered (no monitor key). */
export const confirmBindings: readonly Binding[] = [
  {
    keys: ['y'],
    label: 'y',
    description: 'run the step on the hosts it names',
    hint: 'yes',
    showInFooter: true,
    run: (s) => [{ type: 'do.answerConfirm', id: promptOf(s, 'confirm')!.id, yes: true }],
  },
  {
    keys: ['n', 'escape'],
    label: 'n',
    description: 'refuse the step (it is skipped)',
    hint: 'no',
    showInFooter: true,
    run: (s) => [{ type: 'do.answerConfirm', id: promptOf(s, 'confirm')!.id, yes: false }],
  },
  ...scrollPlan,
];

function journalPhase(s: AppState) {
  return promptOf(s, 'journal')?.journal.phase;
}
const notAsking = (s: AppState) => {
  const phase = journalPhase(s);
  return phase === 'rolling-back'
    ? 'the rollback is running'
    : phase === 'done'
      ? 'the rollback has run — esc to close'
      : undefined;
};
const answerJournal =
  (choice: 'resume' | 'rollback' | 'later') =>
  (s: AppState): Command[] => [{ type: 'do.answerJournal', id: promptOf(s, 'journal')!.id, choice }];

/** The interrupted apply found at start. */
export const journalBindings: readonly Binding[] = [
  {
    keys: ['r'],
    label: 'r',
    description: 'resume: apply the interrupted stage and the stages after it',
    hint: 'resume',
    showInFooter: true,
    when: notAsking,
    run: answerJournal('resume'),
  },
  {
    keys: ['b'],
    label: 'b',
    description: 'roll back the steps that were in flight, then stop',
    hint: 'roll back',
    showInFooter: true,
    when: notAsking,
    run: answerJournal('rollback'),
  },
  {
    keys: ['escape'],
    label: 'esc',
    description: 'decide later (the journal stays) / close',
    hint: 'later',
    showInFooter: true,
    when: (s) => (journalPhase(s) === 'rolling-back' ? 'wait for the rollback to finish' : undefined),
    run: answerJournal('later'),
  },
];

export const helpBindings: readonly Binding[] = [
  {
    keys: ['escape', '?'],
    label: 'esc',
    description: 'close this help',
    hint: 'close',
    showInFooter: true,
    run: () => [{ type: 'ui.toggleHelp' }],
  },
];

export const quitBindings: readonly Binding[] = [
  {
    keys: ['y', 'q', 'ctrl+c'],
    label: 'y',
    description: 'quit (running commands are cancelled on every host)',
    hint: 'quit',
    showInFooter: true,
    run: () => [{ type: 'do.quit' }],
  },
  {
    keys: ['any'],
    label: 'n',
    description: 'any other key: stay',
    hint: 'stay',
    showInFooter: true,
    run: () => [{ type: 'ui.confirmQuit', open: false }],
  },
];

export const trustBindings: readonly Binding[] = [
  {
    keys: ['y'],
    label: 'y',
    description: 'trust the host key (recorded in its known_hosts file, if any)',
    hint: 'trust',
    showInFooter: true,
    run: (s) => [{ type: 'do.answerTrust', id: promptOf(s, 'trust')!.id, yes: true }],
  },
  {
    keys: ['n', 'escape'],
    label: 'n',
    description: 'refuse it (nothing is sent to the host)',
    hint: 'refuse',
    showInFooter: true,
    run: (s) => [{ type: 'do.answerTrust', id: promptOf(s, 'trust')!.id, yes: false }],
  },
];

export function footerText(bindings: ReadonlyArray<Binding>): string {
  return bindings
    .filter((b) => b.showInFooter)
    .map((b) => `${b.label} ${b.hint ?? b.description}`)
    .join('  ');
}
