/**
 * Between the engine and the store in the TUI. The engine's output events carry every line (the session log
 * records them all); a pane shows only its last PANE_LINES. Every store update re-renders and re-lays out the
 * screen, so a host pouring out output would spend its time there: the coalescer turns a burst into at most
 * one update per host every `intervalMs`, carrying only the lines a pane can still show and the count of those
 * left out. The first output after a quiet interval goes through at once, so a slow command's lines are not held.
 * A flood (more lines in an interval than a pane holds: nobody reads that) is shown every `floodIntervalMs`:
 * the screen still scrolls, and the renders it no longer needs leave the keys quick.
 */
import { PANE_LINES } from './store.js';
import type { PaneOutputAction } from './store-types.js';
import type { StageId } from './types.js';

type OutputEvent = {
  host: string;
  stage: StageId;
  probe: string;
  stream: 'stdout' | 'stderr';
  lines: readonly string[];
};
type Batch = PaneOutputAction['batches'][number];

interface Pending {
  omitted: number;
  size: number;
  batches: Batch[];
}

export class PaneOutputCoalescer {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private lastFlush = Number.NEGATIVE_INFINITY;
  /** The last flush carried a flood (lines left out). */
  private flooded = false;

  constructor(
    private readonly dispatch: (action: PaneOutputAction) => void,
    private readonly intervalMs = 100,
    private readonly floodIntervalMs = 250,
    private readonly keep = PANE_LINES,
    private readonly now: () => number = () => performance.now(),
  ) {}

  push(e: OutputEvent): void {
    if (e.lines.length === 0) return;
    let p = this.pending.get(e.host);
    if (!p) this.pending.set(e.host, (p = { omitted: 0, size: 0, batches: [] }));
    // Lines past the newest `keep` of one event can never be shown: only counted.
    const lines = e.lines.length > this.keep ? e.lines.slice(-this.keep) : e.lines;
    p.omitted += e.lines.length - lines.length;
    const last = p.batches[p.batches.length - 1];
    if (last && last.stage === e.stage && last.probe === e.probe && last.stream === e.stream)
      last.lines = last.lines.concat(lines);
    else p.batches.push({ stage: e.stage, probe: e.probe, stream: e.stream, lines });
    p.size += lines.length;
    this.trim(p);
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
    this.flooded = all.some(([, p]) => p.omitted > 0);
    for (const [host, p] of all) this.dispatch({ type: 'pane.output', host, omitted: p.omitted, batches: p.batches });
  }

  /** Flushes and stops the timer (the session detaches from its engine). */
  stop(): void {
    this.flush();
  }

  /** Keeps the newest `keep` lines; older ones are only counted. */
  private trim(p: Pending): void {
    while (p.size > this.keep && p.batches.length > 0) {
      const first = p.batches[0] as Batch;
      const excess = p.size - this.keep;
      if (first.lines.length <= excess) {
        p.batches.shift();
        p.omitted += first.lines.length;
        p.size -= first.lines.length;
      } else {
        first.lines = first.lines.slice(excess);
        p.omitted += excess;
        p.size -= excess;
      }
    }
  }

  private schedule(): void {
    if (this.timer) return;
    const wait = this.lastFlush + (this.flooded ? this.floodIntervalMs : this.intervalMs) - this.now();
    if (wait <= 0) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }
}
