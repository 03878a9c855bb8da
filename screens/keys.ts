/**
 * Keybindings are tables: the footer and the help overlay are generated from them, and the root
 * dispatcher routes input through them (global first, then the screen's).
 */
import type { Key } from 'ink';

export interface Binding<C extends string = string> {
  keys: string[];
  /** Display form, e.g. "↑↓". */
  label: string;
  command: C;
  description: string;
  /** The few words the footer shows. */
  hint?: string;
  showInFooter: boolean;
}

export function matches(binding: Binding, input: string, key: Key): boolean {
  return binding.keys.some((k) => {
    switch (k) {
      case 'up': return key.upArrow;
      case 'down': return key.downArrow;
      case 'left': return key.leftArrow;
      case 'right': return key.rightArrow;
      case 'enter': return key.return;
      case 'escape': return key.escape;
      case 'tab': return key.tab && !key.shift;
      case 'shift+tab': return key.tab && key.shift;
      case 'pageup': return key.pageUp;
      case 'pagedown': return key.pageDown;
      case 'ctrl+c': return key.ctrl && input === 'c';
      default: return !key.ctrl && !key.meta && input === k;
    }
  });
}

export const globalBindings: Binding<'quit' | 'help' | 'interrupt'>[] = [
  { keys: ['ctrl+c'], label: '^C', command: 'interrupt', description: 'cancel running commands, then ask to quit', showInFooter: false },
  { keys: ['q'], label: 'q', command: 'quit', description: 'quit (asks first while commands run)', hint: 'quit', showInFooter: true },
  { keys: ['?'], label: '?', command: 'help', description: 'show or hide all keys', hint: 'help', showInFooter: true },
];

export const pipelineBindings: Binding<'up' | 'down' | 'open' | 'run' | 'runAll' | 'setup'>[] = [
  { keys: ['up', 'k'], label: '↑↓', command: 'up', description: 'select stage', hint: 'stage', showInFooter: true },
  { keys: ['down', 'j'], label: '', command: 'down', description: 'select next stage', showInFooter: false },
  { keys: ['enter'], label: '⏎', command: 'open', description: 'open the stage view', hint: 'open', showInFooter: true },
  { keys: ['r'], label: 'r', command: 'run', description: 'run the selected stage\'s checks on every host', hint: 'run', showInFooter: true },
  { keys: ['a'], label: 'a', command: 'runAll', description: 'run every implemented stage\'s checks', hint: 'run all', showInFooter: true },
  { keys: ['s'], label: 's', command: 'setup', description: 'edit hosts (setup)', hint: 'hosts', showInFooter: true },
];

export const stageBindings: Binding<'back' | 'run' | 'cancel' | 'left' | 'right' | 'prev' | 'next' | 'details' | 'plan'>[] = [
  { keys: ['escape', 'b'], label: 'esc', command: 'back', description: 'back to the pipeline', hint: 'back', showInFooter: true },
  { keys: ['d', 'enter'], label: 'd', command: 'details', description: 'verdict details: evidence and fix of every check', hint: 'details', showInFooter: true },
  { keys: ['r'], label: 'r', command: 'run', description: 'run this stage\'s checks on every host', hint: 'run', showInFooter: true },
  { keys: ['a', 'p'], label: 'a', command: 'plan', description: 'apply: preview every step\'s commands and diffs per host, then y to apply', hint: 'apply', showInFooter: true },
  { keys: ['c'], label: 'c', command: 'cancel', description: 'cancel running commands', hint: 'cancel', showInFooter: true },
  { keys: ['['], label: '[', command: 'left', description: 'show another host in the left pane', hint: 'left host', showInFooter: true },
  { keys: [']'], label: ']', command: 'right', description: 'show another host in the right pane', hint: 'right host', showInFooter: true },
  { keys: ['left', 'h'], label: '←→', command: 'prev', description: 'previous stage', hint: 'stage', showInFooter: true },
  { keys: ['right', 'l'], label: '', command: 'next', description: 'next stage', showInFooter: false },
];

/**
 * The stage view's host grid (more than two hosts). ←→ already step through stages and [ ] cycle
 * the panes, so the cursor takes tab and ↑↓ (free in the stage view), and { } — shifted [ ] —
 * put the cursor's host into the left or right pane. The stage footer is already full at 120
 * columns, so the grid's header line shows these (its "footer" entries) and the App's footer not.
 */
export const hostGridBindings: Binding<'gridNext' | 'gridPrev' | 'gridUp' | 'gridDown' | 'showLeft' | 'showRight'>[] = [
  { keys: ['tab'], label: 'tab↑↓', command: 'gridNext', description: 'host grid: cursor to the next host (hosts are worst first)', hint: 'host', showInFooter: true },
  { keys: ['shift+tab'], label: 'S-tab', command: 'gridPrev', description: 'host grid: cursor to the previous host', showInFooter: false },
  { keys: ['up', 'k'], label: '↑', command: 'gridUp', description: 'host grid: cursor a row up', showInFooter: false },
  { keys: ['down', 'j'], label: '↓', command: 'gridDown', description: 'host grid: cursor a row down', showInFooter: false },
  { keys: ['{'], label: '{}', command: 'showLeft', description: 'show the grid cursor\'s host in the left pane', hint: 'into left/right pane', showInFooter: true },
  { keys: ['}'], label: '}', command: 'showRight', description: 'show the grid cursor\'s host in the right pane', showInFooter: false },
];

/** From every screen but the monitor itself (and setup only while no field is being edited). */
export const monitorKey: Binding<'monitor'> = {
  keys: ['m'], label: 'm', command: 'monitor', description: 'live monitor: GPUs, ports, vLLM and alerts of every host (m again comes back)', hint: 'monitor', showInFooter: true,
};

export const monitorBindings: Binding<'back' | 'timebase' | 'metric' | 'prevHost' | 'nextHost' | 'showLeft' | 'showRight'>[] = [
  { keys: ['m', 'escape'], label: 'esc', command: 'back', description: 'back to the screen the monitor was opened from (sampling goes on)', hint: 'back', showInFooter: true },
  { keys: ['t'], label: 't', command: 'timebase', description: 'sparkline timebase: last minute → 10 minutes → hour', hint: 'timebase', showInFooter: true },
  { keys: ['s'], label: 's', command: 'metric', description: 'GPU sparkline: util → mem → power → temp → SM clock', hint: 'gpu metric', showInFooter: true },
  { keys: ['left', 'h'], label: '←→', command: 'prevHost', description: 'move the host picker\'s cursor (more than two hosts)', hint: 'host', showInFooter: true },
  { keys: ['right', 'l'], label: '', command: 'nextHost', description: 'move the host picker\'s cursor right', showInFooter: false },
  { keys: ['['], label: '[', command: 'showLeft', description: 'show the cursor\'s host in the left column', hint: 'left', showInFooter: true },
  { keys: [']'], label: ']', command: 'showRight', description: 'show the cursor\'s host in the right column', hint: 'right', showInFooter: true },
];

export const setupBindings: Binding<'up' | 'down' | 'edit' | 'add' | 'delete' | 'test' | 'save' | 'back' | 'design' | 'monitor'>[] = [
  { keys: ['up', 'k'], label: '↑↓', command: 'up', description: 'select field', hint: 'field', showInFooter: true },
  { keys: ['down', 'j'], label: '', command: 'down', description: 'select next field', showInFooter: false },
  { keys: ['enter'], label: '⏎', command: 'edit', description: 'edit the field (⏎ again to keep, esc to undo)', hint: 'edit', showInFooter: true },
  { keys: ['+'], label: '+', command: 'add', description: 'add a host', hint: 'add', showInFooter: true },
  { keys: ['-'], label: '-', command: 'delete', description: 'remove the selected host', hint: 'remove', showInFooter: true },
  { keys: ['t'], label: 't', command: 'test', description: 'test the connection of every host', hint: 'test', showInFooter: true },
  { keys: ['n'], label: 'n', command: 'design', description: 'network design: A (default), B or tutorial — its consequences are shown below', hint: 'design', showInFooter: true },
  { keys: ['w'], label: 'w', command: 'save', description: 'save the inventory', hint: 'save', showInFooter: true },
  { keys: ['escape'], label: 'esc', command: 'back', description: 'back to the pipeline', hint: 'back', showInFooter: true },
  monitorKey,
];

export function footerText(bindings: ReadonlyArray<Binding>): string {
  return bindings
    .filter((b) => b.showInFooter)
    .map((b) => `${b.label} ${b.hint ?? b.description}`)
    .join('  ');
}

export const planBindings: Binding<'up' | 'down' | 'yes' | 'no'>[] = [
  { keys: ['y'], label: 'y', command: 'yes', description: 'apply the previewed plan / confirm the dangerous step', hint: 'yes', showInFooter: true },
  { keys: ['n', 'escape'], label: 'esc', command: 'no', description: 'close the preview / refuse the step (it is skipped)', hint: 'no', showInFooter: true },
  { keys: ['up', 'k'], label: '↑↓', command: 'up', description: 'scroll the plan', hint: 'scroll', showInFooter: true },
  { keys: ['down', 'j'], label: '', command: 'down', description: 'scroll down', showInFooter: false },
];

/** The pipeline's modal for an interrupted apply found at start. */
export const journalBindings: Binding<'resume' | 'rollback' | 'later'>[] = [
  { keys: ['r'], label: 'r', command: 'resume', description: 'resume: apply the interrupted stage and the stages after it', hint: 'resume', showInFooter: true },
  { keys: ['b'], label: 'b', command: 'rollback', description: 'roll back the steps that were in flight, then stop', hint: 'roll back', showInFooter: true },
  { keys: ['escape'], label: 'esc', command: 'later', description: 'decide later (the journal stays) / close', hint: 'later', showInFooter: true },
];

export const detailsBindings: Binding<'up' | 'down' | 'close'>[] = [
  { keys: ['up', 'k'], label: '↑↓', command: 'up', description: 'previous check', hint: 'check', showInFooter: true },
  { keys: ['down', 'j'], label: '', command: 'down', description: 'next check', showInFooter: false },
  { keys: ['escape', 'd', 'b'], label: 'esc', command: 'close', description: 'back to the panes', hint: 'back', showInFooter: true },
];

/** From the pipeline and the stage panes: the troubleshoot screen on the symptom catalog. */
export const troubleshootKey: Binding<'troubleshoot'> = {
  keys: ['x'], label: 'x', command: 'troubleshoot', description: 'troubleshoot: pick a symptom, probe both hosts, see the cause and fix it', hint: 'troubleshoot', showInFooter: true,
};

/** From a check (details: the selected one; stage panes: the worst): the symptom whose causes it shows. */
export const troubleshootCheckKey: Binding<'troubleshootCheck'> = {
  keys: ['T'], label: 'T', command: 'troubleshootCheck', description: 'troubleshoot this check: open the symptom it belongs to and probe it', hint: 'troubleshoot', showInFooter: true,
};

// ↑↓ move between symptoms and j/k scroll the evidence: both are needed at once (read a diagnosis,
// step to the next symptom), so they cannot share keys the way other screens' ↑↓ and j/k do.
export const troubleshootBindings: Binding<'up' | 'down' | 'scrollUp' | 'scrollDown' | 'pageUp' | 'pageDown' | 'run' | 'runAll' | 'fix' | 'cancel' | 'back'>[] = [
  { keys: ['up'], label: '↑↓', command: 'up', description: 'select symptom', hint: 'symptom', showInFooter: true },
  { keys: ['down'], label: '', command: 'down', description: 'select next symptom', showInFooter: false },
  { keys: ['enter'], label: '⏎', command: 'run', description: 'run the symptom\'s probes on every host and diagnose', hint: 'run', showInFooter: true },
  { keys: ['a'], label: 'a', command: 'runAll', description: 'run every symptom in turn', hint: 'run all', showInFooter: true },
  { keys: ['f'], label: 'f', command: 'fix', description: 'fix: the fix stage\'s plan preview (diff per host), y applies, then the symptom runs again', hint: 'fix', showInFooter: true },
  { keys: ['k'], label: 'jk', command: 'scrollUp', description: 'scroll the diagnosis and evidence up', hint: 'scroll', showInFooter: true },
  { keys: ['j'], label: '', command: 'scrollDown', description: 'scroll the diagnosis and evidence down', showInFooter: false },
  { keys: ['pageup'], label: 'PgUp', command: 'pageUp', description: 'scroll the diagnosis up a page', showInFooter: false },
  { keys: ['pagedown'], label: 'PgDn', command: 'pageDown', description: 'scroll the diagnosis down a page', showInFooter: false },
  { keys: ['c'], label: 'c', command: 'cancel', description: 'cancel the running probes', hint: 'cancel', showInFooter: true },
  { keys: ['escape', 'b'], label: 'esc', command: 'back', description: 'back to the screen troubleshoot was opened from', hint: 'back', showInFooter: true },
];
