/** A Controller for UI tests: every action a vi.fn(), the catalog answers fixed; override what a test needs. */
import { vi } from 'vitest';
import type { Controller } from '../../src/engine/controller.js';
import { STAGE_TITLES } from '../../checks/stages.js';
import type { StageId } from '../../src/engine/types.js';

export function fakeController(
  over: Partial<Controller> = {},
  implementedStages: readonly StageId[] = ['inventory'],
): Controller {
  return {
    runStage: vi.fn(),
    runAll: vi.fn(),
    cancel: vi.fn(),
    quit: vi.fn(),
    answerTrust: vi.fn(),
    planStage: vi.fn(),
    answerPlan: vi.fn(),
    answerConfirm: vi.fn(),
    answerJournal: vi.fn(),
    openMonitor: vi.fn(),
    closeMonitor: vi.fn(),
    monitorTimebase: vi.fn(),
    openTroubleshoot: vi.fn(),
    runSymptom: vi.fn(),
    runAllSymptoms: vi.fn(),
    fixSymptom: vi.fn(),
    testConnection: vi.fn(async () => ({ ok: true, message: '' })),
    saveHosts: vi.fn(async () => undefined),
    describeAddress: vi.fn(() => undefined),
    describePath: vi.fn(() => undefined),
    implementedStages,
    stageTitle: (s) => STAGE_TITLES[s],
    stagePurpose: (s) => `purpose of ${s}`,
    initialHosts: [],
    ...over,
  };
}
