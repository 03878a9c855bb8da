/**
 * A command's output as clean lines: each chunk is split at once by LineSplitter (which also strips terminal
 * control sequences) and its complete lines are published with it; a partial last line waits for the next chunk
 * of its stream, or for the end. Nothing waits for a timer: the session log takes the lines as they arrive (its
 * backpressure holds the SSH window, so a flood is read no faster than the disk takes it), and the TUI coalesces
 * only what it draws (output-coalescer.ts).
 */
import { LineSplitter, type CleanText } from '../util/sanitize.js';

type Stream = 'stdout' | 'stderr';

export class OutputLines {
  private readonly splitters = { stdout: new LineSplitter(), stderr: new LineSplitter() };

  constructor(private readonly publish: (stream: Stream, lines: CleanText[]) => void) {}

  push(stream: Stream, chunk: string): void {
    const lines = this.splitters[stream].push(chunk);
    if (lines.length > 0) this.publish(stream, lines);
  }

  /** End of the command: publishes a last line without newline. */
  end(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const lines = this.splitters[stream].flush();
      if (lines.length > 0) this.publish(stream, lines);
    }
  }
}
