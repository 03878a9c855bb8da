/**
 * Simulated time, one clock per lab (every machine of a cluster reads the same one, as NTP-synced
 * servers would). Operations declare how long they take on a real machine:
 *
 * - numeric speed F: the clock runs at F × real time, continuously; a modelled wait of `ms`
 *   takes `ms / F` real milliseconds and the clock has advanced `ms` when it ends.
 * - 'max': the clock only moves by jumps — a modelled wait advances it by `ms` at once — so
 *   output is deterministic (the same commands always print the same timestamps).
 *
 * Timers (`at`) fire when the simulated time reaches them: at numeric speeds after the scaled
 * real delay, at 'max' when a jump (a modelled wait, `advance`) passes them, in due order. Waits
 * are abortable and are all cancelled when the lab closes, so a `sleep 30` never keeps the process
 * alive.
 */
export type Speed = number | 'max';

/** 2025-01-06T09:00:00Z: the fixed epoch every lab starts from (determinism). */
export const LAB_EPOCH_MS = Date.UTC(2025, 0, 6, 9, 0, 0);

export interface ClockTimer {
  /** Simulated time (ms since the Unix epoch) it fires at. */
  readonly due: number;
  cancel(): void;
}

interface TimerEntry {
  due: number;
  seq: number;
  fire: () => void;
  real?: NodeJS.Timeout;
  cancelled: boolean;
}

export class SimClock {
  /** Jumps taken (modelled waits at 'max', `advance`). */
  private offsetMs = 0;
  /** performance.now() at the instant the simulated time started to flow. */
  private readonly realStart: number;
  private readonly pending = new Set<{ timer: NodeJS.Timeout; finish: () => void }>();
  private readonly timers = new Set<TimerEntry>();
  private timerSeq = 0;
  private closed = false;
  private advancing: Promise<void> = Promise.resolve();

  /**
   * `startedAt`: the wall-clock instant (ms since the Unix epoch) the simulated time starts to
   * flow at; default now. Processes that serve one lab between them pass the same instant, so
   * their hosts' clocks agree as one NTP-synced cluster's do.
   */
  constructor(
    readonly speed: Speed = 1,
    private readonly epochMs = LAB_EPOCH_MS,
    startedAt?: number,
  ) {
    this.realStart = startedAt === undefined ? performance.now() : startedAt - performance.timeOrigin;
  }

  /** Simulated wall-clock time in ms since the Unix epoch. */
  now(): number {
    const flowing = this.speed === 'max' ? 0 : (performance.now() - this.realStart) * this.speed;
    return this.epochMs + this.offsetMs + flowing;
  }

  /** Simulated seconds since the lab started (machines keep their own boot time). */
  uptimeSeconds(): number {
    return (this.now() - this.epochMs) / 1000;
  }

  /** Real milliseconds a modelled duration takes at this speed. */
  realMs(modelledMs: number): number {
    if (this.speed === 'max' || modelledMs <= 0) return 0;
    return modelledMs / this.speed;
  }

  /**
   * Let `ms` of modelled time pass. Resolves false if aborted (or the lab closed) first. At
   * 'max' the clock jumps by `ms` (firing the timers it passes). `wallClock` waits the full `ms`
   * of real time whatever the speed: the shell's `sleep` is a request for real time (clients time
   * out on it), while modelled operation durations shrink with the speed.
   */
  sleep(ms: number, signal?: AbortSignal, wallClock = false): Promise<boolean> {
    // A NaN or infinite wait is a modelling bug; at 'max' it would push the clock past any valid date.
    if (!Number.isFinite(ms))
      return Promise.reject(new Error(`lab clock: a wait of ${ms} ms (a bug in the lab model)`));
    if (this.closed || signal?.aborted) return Promise.resolve(false);
    const real = wallClock ? Math.max(0, ms) : this.realMs(ms);
    if (real === 0) {
      if (this.speed === 'max' && ms > 0) return this.advance(ms).then(() => !this.closed && !signal?.aborted);
      return Promise.resolve(true);
    }
    const started = performance.now();
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
        // At 'max' only a wall-clock wait takes real time; the clock jumps by what really passed.
        if (this.speed === 'max' && !this.closed)
          void this.advance(completed ? real : performance.now() - started).then(() => resolve(completed));
        else resolve(completed);
      };
      this.pending.add(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Waits until `ms` of simulated time have passed without driving the clock: at numeric speeds
   * the same as sleep(), at 'max' it ends when jumps made by others (modelled operations,
   * advance()) pass it. Loops in background programs (a daemon's heartbeat, a restart delay) use
   * this; with sleep() such a loop would spin and race the clock ahead at 'max'.
   */
  idle(ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.speed !== 'max') return this.sleep(ms, signal);
    if (this.closed || signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const entry = {
        timer: undefined as unknown as NodeJS.Timeout,
        finish: () => done(false),
      };
      const onAbort = (): void => done(false);
      const t = this.at(this.now() + Math.max(0, ms), () => done(true));
      const done = (completed: boolean): void => {
        if (!this.pending.delete(entry)) return;
        t.cancel();
        signal?.removeEventListener('abort', onAbort);
        resolve(completed);
      };
      this.pending.add(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Calls `fire` when the simulated time reaches `due` (ms since the epoch; a past time fires
   * on the next tick). `fire` must not block: it starts work and returns.
   */
  at(due: number, fire: () => void): ClockTimer {
    const entry: TimerEntry = { due, seq: this.timerSeq++, fire, cancelled: false };
    if (!this.closed) {
      this.timers.add(entry);
      this.arm(entry);
    }
    return {
      due,
      cancel: () => {
        entry.cancelled = true;
        if (entry.real) clearTimeout(entry.real);
        this.timers.delete(entry);
      },
    };
  }

  /**
   * Jumps the clock forward by `ms`, firing every timer it passes in due order. After each timer
   * the event loop gets a turn, so work the timer started (a daemon's next heartbeat) can arm
   * further timers inside the jump. Jumps run one after another.
   */
  advance(ms: number): Promise<void> {
    if (!Number.isFinite(ms))
      return Promise.reject(new Error(`lab clock: a jump of ${ms} ms (a bug in the lab model)`));
    const run = this.advancing.then(async () => {
      if (this.closed || !(ms > 0)) return;
      const target = this.now() + ms;
      for (;;) {
        const next = [...this.timers].filter((t) => t.due <= target).sort((a, b) => a.due - b.due || a.seq - b.seq)[0];
        if (!next) break;
        // The clock reads the timer's due time while it fires, as it would at any speed.
        this.offsetMs += Math.max(0, next.due - this.now());
        this.fireTimer(next);
        await new Promise<void>((r) => setImmediate(r));
        await new Promise<void>((r) => setImmediate(r));
        if (this.closed) return;
      }
      this.offsetMs += Math.max(0, target - this.now());
      // At numeric speeds the remaining timers' real delays shrank with the jump.
      for (const t of this.timers) this.arm(t);
    });
    this.advancing = run.catch(() => undefined);
    return run;
  }

  private arm(entry: TimerEntry): void {
    if (entry.real) clearTimeout(entry.real);
    entry.real = undefined;
    const delay = entry.due - this.now();
    if (delay <= 0) {
      entry.real = setTimeout(() => this.fireTimer(entry), 0);
      return;
    }
    if (this.speed === 'max') return;
    entry.real = setTimeout(() => this.fireTimer(entry), delay / this.speed);
  }

  private fireTimer(entry: TimerEntry): void {
    if (entry.cancelled || !this.timers.delete(entry)) return;
    if (entry.real) clearTimeout(entry.real);
    // A real timeout can end a hair early: the clock never reads before a timer's due time.
    const early = entry.due - this.now();
    if (early > 0) this.offsetMs += early;
    entry.fire();
  }

  /** Timers armed and not yet fired (tests, `systemctl list-timers`). */
  get activeTimers(): number {
    return this.timers.size;
  }

  /** Waits in flight (tests use it to see that an aborted command really stopped). */
  get activeWaits(): number {
    return this.pending.size;
  }

  /** Cancels every pending wait and timer (lab shutdown). */
  close(): void {
    this.closed = true;
    for (const entry of [...this.pending]) entry.finish();
    for (const t of this.timers) if (t.real) clearTimeout(t.real);
    this.timers.clear();
  }
}
