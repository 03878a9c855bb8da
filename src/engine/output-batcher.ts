/**
 * Batches a command's output at the source: chunks are split into clean lines immediately, but
 * published at most every `intervalMs` (or at once when a batch grows large), so a host pouring out
 * output costs one event per interval, not one per SSH packet.
 */
import { LineSplitter, type CleanText } from '../util/sanitize.js';

type Stream = 'stdout' | 'stderr';

export class OutputBatcher {
  private readonly splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };
  /** Each chunk's lines as the splitter returned them, joined only when published (no copy per line). */
  private pending: Record<Stream, CleanText[][]> = { stdout: [], stderr: [] };
  private counts: Record<Stream, number> = { stdout: 0, stderr: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly publish: (stream: Stream, lines: CleanText[]) => void,
    private readonly intervalMs = 80,
    private readonly maxBatchLines = 2000,
  ) {}

  push(stream: Stream, chunk: string): void {
    this.add(stream, this.splitters[stream].push(chunk));
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    for (const stream of ['stdout', 'stderr'] as const) {
      const chunks = this.pending[stream];
      if (chunks.length === 0) continue;
      this.pending[stream] = [];
      this.counts[stream] = 0;
      this.publish(stream, chunks.length === 1 ? (chunks[0] as CleanText[]) : chunks.flat());
    }
  }

  /** End of the command: publish everything, including a last line without newline. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) this.add(stream, this.splitters[stream].flush(), false);
    this.flush();
  }

  private add(stream: Stream, lines: CleanText[], schedule = true): void {
    if (lines.length === 0) return;
    this.pending[stream].push(lines);
    this.counts[stream] += lines.length;
    if (!schedule) return;
    if (this.counts[stream] >= this.maxBatchLines) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }
}
