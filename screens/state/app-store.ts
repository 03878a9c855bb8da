/**
 * The TUI's one store: the engine's state (src/engine/store.ts) and the screens' state (ui-reducer.ts)
 * side by side, one dispatch for engine events, the session's events and the screens' actions. The
 * session sees it as an EngineStore; the views subscribe to slices of it.
 */
import { initialState, reduce as reduceEngine, ReducerStore } from '../../src/engine/store.js';
import type { EngineStore } from '../../src/engine/store-types.js';
import { initialUi, reduceUi, type UiOptions } from './ui-reducer.js';
import { isUiAction, type AppAction, type AppState } from './ui-types.js';

export function appState(hosts: ReadonlyArray<{ name: string; address: string }>, o: UiOptions = {}): AppState {
  return { ...initialState(hosts), ui: initialUi(hosts, o) };
}

export function reduceApp(state: AppState, action: AppAction): AppState {
  // The engine's reducer spreads what it is given: its answer still carries `ui`, replaced below.
  const engine = isUiAction(action) ? state : reduceEngine(state, action);
  const ui = reduceUi(state.ui, action, state, engine);
  if (engine === state && ui === state.ui) return state;
  return { ...engine, ui };
}

/** The TUI's store: the engine's and the screens' state behind one reducer. */
export class AppStore extends ReducerStore<AppState, AppAction> implements EngineStore {
  constructor(initial: AppState) {
    super(initial, reduceApp);
  }
}
