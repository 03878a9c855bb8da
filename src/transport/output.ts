/**
 * Shared pieces of the two Host implementations: stream collection (UTF-8 decoding across chunk
 * boundaries, a bounded tail buffer) and the error built when a transport-internal command fails.
 */
import { StringDecoder } from 'node:string_decoder';
import { sanitize } from '../util/sanitize.js';
import { scrub, StreamScrubber } from '../util/secrets.js';
import { CommandFailedError, type RunResult } from './types.js';

export const DEFAULT_MAX_BUFFER_BYTES = 64 * 1024 * 1024;

/**
 * Collects one output stream: forwards decoded text to `onText` as it arrives (a StringDecoder keeps a
 * multi-byte character split across chunks whole) and keeps at most `maxBytes` of the stream's tail.
 * This is where a command's output enters the process: both what `onText` sees and the kept text are
 * scrubbed of the secrets the process holds (util/secrets.ts), so no log, screen or file downstream has them.
 */
export class StreamCollector {
  private readonly decoder = new StringDecoder('utf8');
  private readonly scrubber = new StreamScrubber();
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  totalBytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onText?: (text: string) => void,
  ) {}

  push(chunk: Buffer | string): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (buf.length === 0) return;
    this.totalBytes += buf.length;
    if (this.onText) {
      const text = this.scrubber.push(this.decoder.write(buf));
      if (text !== '') this.safeCallback(text);
    }
    this.chunks.push(buf);
    this.size += buf.length;
    while (this.size > this.maxBytes && this.chunks.length > 0) {
      const head = this.chunks[0] as Buffer;
      const excess = this.size - this.maxBytes;
      this.truncated = true;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.size -= excess;
      }
    }
  }

  /** Flushes the decoder to the callback and returns the kept tail as text. */
  finish(): string {
    if (this.onText) {
      const rest = this.scrubber.push(this.decoder.end()) + this.scrubber.end();
      if (rest !== '') this.safeCallback(rest);
    }
    let buf = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks);
    this.chunks = [];
    if (this.truncated) {
      // The cut may have landed inside a multi-byte character: drop its continuation bytes.
      let skip = 0;
      while (skip < 3 && skip < buf.length && ((buf[skip] as number) & 0xc0) === 0x80) skip++;
      buf = buf.subarray(skip);
    }
    return scrub(buf.toString('utf8'));
  }

  private safeCallback(text: string): void {
    try {
      this.onText?.(text);
    } catch {
      // A throwing listener must not break the transport.
    }
  }
}

/** How a run stops and restarts the flow of a command's output. */
export interface OutputFlow {
  stop(): void;
  start(): void;
}

/** Pausing and resuming the output streams themselves. */
export function pauseStreams(
  streams: ReadonlyArray<{ pause(): unknown; resume(): unknown } | null | undefined>,
): OutputFlow {
  return {
    stop: () => streams.forEach((s) => s?.pause()),
    start: () => streams.forEach((s) => s?.resume()),
  };
}

/**
 * Stops the flow while `backpressure` (RunOptions) says the output's consumer is behind, and starts it again
 * once it has caught up; `afterChunk` is called after each chunk. `waiting()` tells a run's end handling that
 * output held back is still to come.
 */
export function outputGate(
  flow: OutputFlow,
  backpressure: (() => Promise<void> | undefined) | undefined,
): { afterChunk: () => void; waiting: () => boolean } {
  let waiting = false;
  const start = () => {
    waiting = false;
    flow.start();
  };
  return {
    afterChunk: () => {
      if (waiting || !backpressure) return;
      const wait = backpressure();
      if (!wait) return;
      waiting = true;
      flow.stop();
      wait.then(start, start);
    },
    waiting: () => waiting,
  };
}

/** The last `max` non-empty lines of `text`, sanitized for display. */
export function tailLines(text: string, max = 20): string[] {
  const lines = text
    .split('\n')
    .map((l) => sanitize(l.replace(/\r/g, '')))
    .filter((l) => l.trim() !== '');
  return lines.slice(-max);
}

/** A CommandFailedError for a transport-internal command that did not succeed. */
export function commandFailed(host: string, what: string, result: RunResult): CommandFailedError {
  const stderrLines = tailLines(result.stderr);
  const stdoutLines = tailLines(result.stdout, 5);
  const status = result.timedOut
    ? 'timed out'
    : result.cancelled
      ? 'was cancelled'
      : result.exitCode !== null
        ? `exited ${result.exitCode}`
        : `was killed by ${result.signal ?? 'a signal'}`;
  const detail = stderrLines.length > 0 ? `: ${stderrLines.slice(-3).join(' / ')}` : '';
  return new CommandFailedError(
    `${host}: ${what} failed (\`${result.commandLine}\` ${status})${detail}`,
    host,
    result.commandLine,
    result.exitCode,
    result.signal,
    stderrLines,
    stdoutLines,
  );
}

/**
 * The result of a command that ran, from its collected output. Both Host implementations settle a run
 * through this, so the two cannot drift apart in what a RunResult reports.
 */
export function finishedResult(
  commandLine: string,
  started: number,
  stdout: StreamCollector,
  stderr: StreamCollector,
  exit: { exitCode: number | null; signal: string | null },
  stopped: 'timedOut' | 'cancelled' | null,
): RunResult {
  return {
    commandLine,
    exitCode: exit.exitCode,
    signal: exit.signal,
    stdout: stdout.finish(),
    stderr: stderr.finish(),
    durationMs: Date.now() - started,
    timedOut: stopped === 'timedOut',
    cancelled: stopped === 'cancelled',
    truncated: stdout.truncated || stderr.truncated,
  };
}

/** A result for a command that was never started because it was cancelled first. */
export function notStartedResult(commandLine: string, reason: 'cancelled' | 'timedOut'): RunResult {
  return {
    commandLine,
    exitCode: null,
    signal: null,
    stdout: '',
    stderr: '',
    durationMs: 0,
    timedOut: reason === 'timedOut',
    cancelled: reason === 'cancelled',
    truncated: false,
  };
}
