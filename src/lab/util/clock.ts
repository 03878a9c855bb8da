/**
 * Simulated time. Operations declare how long they take on a real machine; the clock advances
 * the simulated "now" by that much and waits `ms / speed` of real time (nothing with 'max').
 * Waits are abortable and are all cancelled when the lab closes, so a `sleep 30` never keeps
 * the process alive.
 */
export type Speed = number | 'max';

/** 2025-01-06T09:00:00Z: the fixed boot epoch every lab starts from (determinism). */
export const LAB_EPOCH_MS = Date.UTC(2025, 0, 6, 9, 0, 0);

export class SimClock {
  private simulatedMs = 0;
  private readonly pending = new Set<{ timer: NodeJS.Timeout; finish: () => void }>();
  private closed = false;

  constructor(readonly speed: Speed = 1, private readonly epochMs = LAB_EPOCH_MS) {}

  /** Simulated wall-clock time in ms since the Unix epoch. */
  now(): number {
    return this.epochMs + this.simulatedMs;
  }

  /** Simulated seconds since boot. */
  uptimeSeconds(): number {
    return this.simulatedMs / 1000;
  }

  /** Real milliseconds a modelled duration takes at this speed. */
  realMs(modelledMs: number): number {
    if (this.speed === 'max' || modelledMs <= 0) return 0;
    return modelledMs / this.speed;
  }

  /**
   * Let `ms` of modelled time pass. Resolves false if aborted (or the lab closed) first; the
   * simulated clock only advances by the time that really passed. `wallClock` waits the full
   * `ms` whatever the speed: the shell's `sleep` is a request for real time (clients time out on
   * it), while modelled operation durations shrink with the speed.
   */
  sleep(ms: number, signal?: AbortSignal, wallClock = false): Promise<boolean> {
    const real = wallClock ? Math.max(0, ms) : this.realMs(ms);
    if (real === 0 || this.closed) {
      if (!this.closed) this.simulatedMs += Math.max(0, ms);
      return Promise.resolve(!this.closed && !signal?.aborted);
    }
    if (signal?.aborted) return Promise.resolve(false);
    const started = Date.now();
    return new Promise<boolean>((resolve) => {
      const entry = {
        timer: setTimeout(() => done(true), real),
        finish: () => done(false),
      };
      const onAbort = (): void => done(false);
      const done = (completed: boolean): void => {
        if (!this.pending.delete(entry)) return;
        clearTimeout(entry.timer);
        signal?.removeEventListener('abort', onAbort);
        const elapsedReal = completed ? real : Date.now() - started;
        this.simulatedMs += wallClock ? elapsedReal : this.speed === 'max' ? ms : elapsedReal * this.speed;
        resolve(completed);
      };
      this.pending.add(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Waits in flight (tests use it to see that an aborted command really stopped). */
  get activeWaits(): number {
    return this.pending.size;
  }

  /** Cancels every pending wait (lab shutdown). */
  close(): void {
    this.closed = true;
    for (const entry of [...this.pending]) entry.finish();
  }
}
