/**
 * A transport Host that passes everything to another one and keeps what the product sent through it: every
 * command (probe, step, cluster run) and every file written. The transport's own plumbing (writeFileAtomic's
 * install/mv, readFile's cat) runs on the inner host and is not kept: it is not the product's scripts.
 */
import type {
  Command,
  Host,
  HostConnectionState,
  RunOptions,
  RunResult,
  WriteFileOptions,
  WriteFileResult,
} from '../../src/transport/types.js';

export interface SentCommand {
  host: string;
  command: Command;
  sudo: boolean;
}

export interface WrittenFile {
  host: string;
  path: string;
  content: string;
  mode: number | undefined;
}

/** What every RecordingHost of one test saw, in order. */
export interface Recording {
  commands: SentCommand[];
  files: WrittenFile[];
}

export const newRecording = (): Recording => ({ commands: [], files: [] });

export class RecordingHost implements Host {
  readonly probeFreshConnection?: (timeoutMs: number) => Promise<void>;

  /** `beforeRun`: called with each command before it is passed on (a test's tripwire: kill the host now). */
  constructor(
    private readonly inner: Host,
    private readonly recording: Recording,
    private readonly beforeRun?: (sent: SentCommand) => void,
  ) {
    const fresh = inner.probeFreshConnection?.bind(inner);
    if (fresh) this.probeFreshConnection = fresh;
  }

  get name(): string {
    return this.inner.name;
  }

  get address(): string {
    return this.inner.address;
  }

  connect(): Promise<void> {
    return this.inner.connect();
  }

  get lostBoundMs(): number | undefined {
    return this.inner.lostBoundMs;
  }

  run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    const sent = { host: this.name, command, sudo: options.sudo === true };
    this.recording.commands.push(sent);
    this.beforeRun?.(sent);
    return this.inner.run(command, options);
  }

  readFile(path: string, options?: { sudo?: boolean }): Promise<string> {
    return this.inner.readFile(path, options);
  }

  writeFileAtomic(path: string, content: string, options?: WriteFileOptions): Promise<WriteFileResult> {
    this.recording.files.push({ host: this.name, path, content, mode: options?.mode });
    return this.inner.writeFileAtomic(path, content, options);
  }

  onStateChange(listener: (state: HostConnectionState, detail?: string) => void): () => void {
    return this.inner.onStateChange(listener);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
