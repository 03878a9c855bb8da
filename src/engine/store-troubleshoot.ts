/**
 * The troubleshoot screen's part of the one reducer (store.ts dispatches `troubleshoot.*` here): the
 * symptom list and cursor, the latest diagnosis of each symptom, the fix waiting to be verified.
 */
import type { AppState, TroubleshootUi, UiAction } from './store-types.js';

export type TroubleshootAction = Extract<UiAction, { type: `troubleshoot.${string}` }>;

export function reduceTroubleshoot(state: AppState, action: TroubleshootAction): AppState {
  const t = state.troubleshoot;
  /** The cursor moved or a diagnosis arrived: show the cursor's latest diagnosis from its top. */
  const show = (next: TroubleshootUi): TroubleshootUi => {
    const id = next.symptoms[next.cursor]?.id;
    const diagnosis = (id !== undefined ? next.diagnoses[id] : undefined) ?? null;
    return diagnosis === next.diagnosis ? next : { ...next, diagnosis, scroll: 0 };
  };
  switch (action.type) {
    case 'troubleshoot.open': {
      const symptoms = action.symptoms ?? t.symptoms;
      const selected = action.select !== undefined ? symptoms.findIndex((s) => s.id === action.select) : -1;
      const cursor = selected >= 0 ? selected : Math.min(t.cursor, Math.max(0, symptoms.length - 1));
      // Back from a fix's plan/apply in the stage view, esc still leads where troubleshooting began.
      const returnTo = state.ui.screen === 'troubleshoot' || t.fixing ? t.returnTo : state.ui.screen;
      return { ...state, troubleshoot: show({ ...t, symptoms, cursor, returnTo }), ui: { ...state.ui, screen: 'troubleshoot', details: null } };
    }
    case 'troubleshoot.close':
      return state.ui.screen === 'troubleshoot' ? { ...state, ui: { ...state.ui, screen: t.returnTo } } : state;
    case 'troubleshoot.cursor': {
      const n = t.symptoms.length;
      if (n === 0) return state;
      return { ...state, troubleshoot: show({ ...t, cursor: Math.max(0, Math.min(n - 1, t.cursor + action.delta)) }) };
    }
    case 'troubleshoot.running':
      return { ...state, troubleshoot: { ...t, running: action.symptom } };
    case 'troubleshoot.diagnosis':
      return { ...state, troubleshoot: show({ ...t, diagnoses: { ...t.diagnoses, [action.diagnosis.symptom]: action.diagnosis } }) };
    case 'troubleshoot.scroll':
      return { ...state, troubleshoot: { ...t, scroll: Math.max(0, t.scroll + action.delta) } };
    case 'troubleshoot.fixing':
      return { ...state, troubleshoot: { ...t, fixing: action.fixing } };
    default: {
      const unreachable: never = action;
      throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
    }
  }
}
