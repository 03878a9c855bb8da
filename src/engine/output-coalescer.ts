/**
 * Between the engine and the store in the TUI, and the TUI's only output timer. The engine publishes a command's
 * lines as they arrive (the session log records them all); a pane shows only its last PANE_LINES. Every store
 * update re-renders and re-lays out the screen, so a host pouring out output would spend its time there: the
 * coalescer gathers a burst per host as the store would (withCommandOutput: per stage, the lines a pane can still
 * show and a count of all of them) and hands it over at most once every `intervalMs`. The first output after a
 * quiet interval goes through at once, so a slow command's lines are not held. A flood (more lines in an interval
 * than a pane holds: nobody reads that) is shown every `floodIntervalMs`: the screen still scrolls, and the
 * renders it no longer needs leave the keys quick.
 */
import { withCommandOutput } from './store.js';
import type { PaneOutput, PaneOutputAction, StageOutput } from './store-types.js';
import type { StageId } from './types.js';

type OutputEvent = {
  host: string;
  stage: StageId;
  probe: string;
  stream: 'stdout' | 'stderr';
  lines: readonly string[];
};

export class PaneOutputCoalescer {
  /** Per host, the burst gathered since the last flush. */
  private readonly pending = new Map<string, PaneOutput>();
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = Number.NEGATIVE_INFINITY;
  /** The last flush carried a flood (lines left out). */
  private flooded = false;

  constructor(
    private readonly dispatch: (action: PaneOutputAction) => void,
    private readonly intervalMs = 100,
    private readonly floodIntervalMs = 250,
    private readonly now: () => number = () => performance.now(),
  ) {}

  push(e: OutputEvent): void {
    if (e.lines.length === 0) return;
    this.pending.set(e.host, withCommandOutput(this.pending.get(e.host) ?? {}, e));
    this.schedule();
  }

  /** Hands everything pending to the store now (before any other event, so the store sees events in order). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return;
    this.lastFlush = this.now();
    const all = [...this.pending];
    this.pending.clear();
    const kept = (o: StageOutput) => o.runs.reduce((n, r) => n + r.lines.length, 0);
    this.flooded = all.some(([, output]) => Object.values(output).some((o) => o.totalLines > kept(o)));
    for (const [host, output] of all) this.dispatch({ type: 'pane.output', host, output });
  }

  /** Flushes and stops the timer (the session detaches from its engine). */
  stop(): void {
    this.flush();
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = this.lastFlush + (this.flooded ? this.floodIntervalMs : this.intervalMs) - this.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }
}
