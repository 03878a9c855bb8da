/** Connection-state listeners shared by the SSH and local hosts: a throwing listener never breaks the transport. */
import type { HostConnectionState } from './types.js';
import { clean } from '../util/sanitize.js';

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

/**
 * A connection-based host's state and its listeners. A detail quotes what the other end sent (a disconnect
 * reason, ssh's last words): it is made inert here, before anyone sees it. The same state again without a
 * detail is not reported twice.
 */
export class ConnectionState {
  private current: HostConnectionState = 'idle';
  private readonly listeners = new StateEmitter();

  get value(): HostConnectionState {
    return this.current;
  }

  onChange(listener: StateListener): () => void {
    return this.listeners.add(listener);
  }

  set(state: HostConnectionState, detail?: string): void {
    if (this.current === state && detail === undefined) return;
    this.current = state;
    this.listeners.emit(state, detail === undefined ? undefined : clean(detail));
  }
}
