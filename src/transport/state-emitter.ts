/** Connection-state listeners shared by the SSH and local hosts: a throwing listener never breaks the transport. */
import type { HostConnectionState } from './types.js';

export type StateListener = (state: HostConnectionState, detail?: string) => void;

export class StateEmitter {
  private readonly listeners = new Set<StateListener>();

  add(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(state: HostConnectionState, detail?: string): void {
    for (const l of [...this.listeners]) {
      try {
        l(state, detail);
      } catch {
        // listeners must not break the transport
      }
    }
  }
}
