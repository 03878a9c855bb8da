/**
 * What a key asks for: screen actions for the store, and requests to the session (the Controller). The
 * key handler only returns them (handle-key.ts is pure); App runs them here, in order.
 */
import type { Controller } from '../../src/engine/controller.js';
import type { Answers } from '../../src/engine/prompts.js';
import type { StageId } from '../../src/engine/types.js';
import type { HostConfig } from '../../src/config/schema.js';
import type { AppStore } from '../state/app-store.js';
import type { Design } from '../state/setup-draft.js';
import type { UiAction } from '../state/ui-types.js';

export type SessionCommand =
  | { type: 'do.runStage'; stage: StageId }
  | { type: 'do.runAll' }
  | { type: 'do.planStage'; stage: StageId }
  | { type: 'do.answerTrust'; id: number; yes: boolean }
  | { type: 'do.answerPlan'; id: number; yes: boolean }
  | { type: 'do.answerConfirm'; id: number; yes: boolean }
  | { type: 'do.answerJournal'; id: number; choice: Answers['journal'] }
  | { type: 'do.cancel' }
  | { type: 'do.quit' }
  | { type: 'do.openMonitor' }
  | { type: 'do.closeMonitor' }
  | { type: 'do.monitorTimebase' }
  | { type: 'do.openTroubleshoot'; symptom?: string }
  | { type: 'do.runSymptom'; symptom: string }
  | { type: 'do.runAllSymptoms' }
  | { type: 'do.fixSymptom'; symptom: string }
  /** Setup: test every host's connection; each result lands in the draft as it comes. */
  | { type: 'do.testConnections'; hosts: HostConfig[] }
  /** Setup: validate and save; saved, the pipeline opens on the new hosts. */
  | { type: 'do.saveHosts'; hosts: HostConfig[]; design: Design };

export type Command = UiAction | SessionCommand;

function isSessionCommand(c: Command): c is SessionCommand {
  return c.type.startsWith('do.');
}

export function runCommands(commands: readonly Command[], store: AppStore, controller: Controller): void {
  for (const c of commands) {
    if (isSessionCommand(c)) runSessionCommand(c, store, controller);
    else store.dispatch(c);
  }
}

function runSessionCommand(c: SessionCommand, store: AppStore, controller: Controller): void {
  switch (c.type) {
    case 'do.runStage':
      return controller.runStage(c.stage);
    case 'do.runAll':
      return controller.runAll();
    case 'do.planStage':
      return controller.planStage(c.stage);
    case 'do.answerTrust':
      return controller.answerTrust(c.id, c.yes);
    case 'do.answerPlan':
      return controller.answerPlan(c.id, c.yes);
    case 'do.answerConfirm':
      return controller.answerConfirm(c.id, c.yes);
    case 'do.answerJournal':
      return controller.answerJournal(c.id, c.choice);
    case 'do.cancel':
      return controller.cancel();
    case 'do.quit':
      return controller.quit();
    case 'do.openMonitor':
      return controller.openMonitor();
    case 'do.closeMonitor':
      return controller.closeMonitor();
    case 'do.monitorTimebase':
      return controller.monitorTimebase();
    case 'do.openTroubleshoot':
      return controller.openTroubleshoot(...(c.symptom !== undefined ? [c.symptom] : []));
    case 'do.runSymptom':
      return controller.runSymptom(c.symptom);
    case 'do.runAllSymptoms':
      return controller.runAllSymptoms();
    case 'do.fixSymptom':
      return controller.fixSymptom(c.symptom);
    case 'do.testConnections':
      void Promise.all(
        c.hosts.map(async (h) => {
          const r = await controller.testConnection(h);
          store.dispatch({ type: 'setup.result', host: h.name, text: `${r.ok ? '✔' : '✘'} ${r.message}` });
        }),
      ).then(() => store.dispatch({ type: 'setup.message', text: 'connection tests finished' }));
      return;
    case 'do.saveHosts':
      void controller.saveHosts(c.hosts, { design: c.design }).then((err) => {
        store.dispatch({ type: 'setup.message', text: err ?? 'saved' });
        if (err === undefined) store.dispatch({ type: 'ui.screen', screen: 'pipeline' });
      });
      return;
    default: {
      const unreachable: never = c;
      throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
    }
  }
}
