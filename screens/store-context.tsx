/** The store and the controller reach views through context; views subscribe to slices. */
import React, { createContext, useContext, useSyncExternalStore } from 'react';
import type { AppState, Store } from '../src/engine/store.js';
import type { Controller } from '../src/engine/controller.js';

export type { Controller };

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
