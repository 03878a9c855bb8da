/** The store and the controller reach views through context; views subscribe to slices. */
import React, { createContext, useContext, useSyncExternalStore } from 'react';
import type { Controller } from '../src/engine/controller.js';
import type { AppStore } from './state/app-store.js';
import type { AppState } from './state/ui-types.js';

const StoreContext = createContext<AppStore | null>(null);
const ControllerContext = createContext<Controller | null>(null);

export function Providers(props: { store: AppStore; controller: Controller; children: React.ReactNode }) {
  return (
    <StoreContext.Provider value={props.store}>
      <ControllerContext.Provider value={props.controller}>{props.children}</ControllerContext.Provider>
    </StoreContext.Provider>
  );
}

export function useStore(): AppStore {
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
