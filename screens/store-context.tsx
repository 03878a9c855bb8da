/** The store and the controller reach views through context; views subscribe to slices. */
import React, { createContext, useContext, useSyncExternalStore } from 'react';
import type { AppState, Store } from '../src/engine/store.js';
import type { StageId } from '../src/engine/types.js';
import type { HostConfig } from '../src/config/schema.js';

/** What views may ask for; implemented outside the view layer (no SSH here). */
export interface Controller {
  runStage(stage: StageId): void;
  runAll(): void;
  cancel(): void;
  quit(): void;
  /** Setup screen: connect to a host and report, without saving anything. */
  testConnection(host: HostConfig): Promise<{ ok: boolean; message: string }>;
  /** Setup screen: validate and save; resolves with an error message or undefined on success. */
  saveHosts(hosts: HostConfig[]): Promise<string | undefined>;
  /** Stages that have checks implemented. */
  implementedStages: readonly StageId[];
  stageTitle(stage: StageId): string;
  stagePurpose(stage: StageId): string;
  initialHosts: HostConfig[];
}

const StoreContext = createContext<Store | null>(null);
const ControllerContext = createContext<Controller | null>(null);

export function Providers(props: { store: Store; controller: Controller; children: React.ReactNode }) {
  return (
    <StoreContext.Provider value={props.store}>
      <ControllerContext.Provider value={props.controller}>{props.children}</ControllerContext.Provider>
    </StoreContext.Provider>
  );
}

export function useStore(): Store {
  const s = useContext(StoreContext);
  if (!s) throw new Error('useStore outside Providers');
  return s;
}

export function useController(): Controller {
  const c = useContext(ControllerContext);
  if (!c) throw new Error('useController outside Providers');
  return c;
}

/** Subscribes to one slice; the component re-renders only when the selected value changes identity. */
export function useSelector<T>(selector: (s: AppState) => T): T {
  const store = useStore();
  return useSyncExternalStore(store.subscribe, () => selector(store.getState()));
}
