/** A transport Host that replays recorded outputs per command line: for engine and check tests. */
import type {
  Command,
  Host,
  HostConnectionState,
  RunOptions,
  RunResult,
  WriteFileResult,
} from '../../src/transport/types.js';
import { buildCommand } from '../../src/transport/quote.js';

export interface Recorded {
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  /** Resolve only when the test says so (to observe running state or cancellation). */
  gate?: Promise<void>;
}

export class FakeHost implements Host {
  readonly address: string;
  readonly ran: string[] = [];
  private listeners = new Set<(s: HostConnectionState, d?: string) => void>();
  connectError?: Error;

  constructor(
    readonly name: string,
    private readonly respond: (line: string, command: Command) => Recorded | undefined,
  ) {
    this.address = `${name}.test:22`;
  }

  async connect(): Promise<void> {
    this.emit('connecting');
    if (this.connectError) {
      this.emit('failed', this.connectError.message);
      throw this.connectError;
    }
    this.emit('connected');
  }

  private emit(s: HostConnectionState, d?: string) {
    for (const l of this.listeners) l(s, d);
  }

  async run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    const { line } = buildCommand(command, options);
    this.ran.push(line);
    options.onStart?.(line);
    const rec = this.respond(line, command) ?? { stderr: `bash: command not found\n`, exitCode: 127 };
    const started = Date.now();
    if (rec.gate) {
      const aborted = new Promise<'aborted'>((resolve) =>
        options.signal?.addEventListener('abort', () => resolve('aborted'), { once: true }),
      );
      if ((await Promise.race([rec.gate.then(() => 'done' as const), aborted])) === 'aborted') {
        return {
          commandLine: line,
          exitCode: null,
          signal: 'TERM',
          stdout: '',
          stderr: '',
          durationMs: Date.now() - started,
          timedOut: false,
          cancelled: true,
          truncated: false,
        };
      }
    }
    if (rec.stdout) options.onStdout?.(rec.stdout);
    if (rec.stderr) options.onStderr?.(rec.stderr);
    return {
      commandLine: line,
      exitCode: rec.exitCode ?? 0,
      signal: null,
      stdout: rec.stdout ?? '',
      stderr: rec.stderr ?? '',
      durationMs: Date.now() - started,
      timedOut: false,
      cancelled: false,
      truncated: false,
    };
  }

  async readFile(): Promise<string> {
    throw new Error('not used');
  }

  async writeFileAtomic(): Promise<WriteFileResult> {
    throw new Error('not used');
  }

  onStateChange(listener: (s: HostConnectionState, d?: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.emit('closed');
  }
}
