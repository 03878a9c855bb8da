/**
 * Batches a command's output at the source: chunks are split into clean lines immediately, but
 * published at most every `intervalMs` (or at once when a batch grows large), so a host pouring out
 * output costs one event per interval, not one per SSH packet.
 */
import { LineSplitter } from '../util/sanitize.js';

export class OutputBatcher {
  private readonly splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
  private pending: { stdout: string[]; stderr: string[] } = { stdout: [], stderr: [] };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly publish: (stream: 'stdout' | 'stderr', lines: string[]) => void,
    private readonly intervalMs = 80,
    private readonly maxBatchLines = 2000,
  ) {}

  push(stream: 'stdout' | 'stderr', chunk: string): void {
    const lines = this.splitters[stream].push(chunk);
    if (lines.length === 0) return;
    const target = this.pending[stream];
    for (const l of lines) target.push(l);
    if (target.length >= this.maxBatchLines) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.pending[stream].length > 0) {
        const lines = this.pending[stream];
        this.pending[stream] = [];
        this.publish(stream, lines);
      }
    }
  }

  /** End of the command: publish everything, including a last line without newline. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) this.pending[stream].push(...this.splitters[stream].flush());
    this.flush();
  }
}
