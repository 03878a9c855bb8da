/**
 * The transport contract: a Host runs commands and moves files. SSH (ssh2) and local (execa)
 * implement it; the engine and checks only ever see this interface.
 */
import { clean, type CleanText } from '../util/sanitize.js';

/** What to run. `argv` is quoted word by word; `script` is sent on stdin to `bash -s`. */
export type Command = { argv: readonly string[] } | { script: string; args?: readonly string[] };

export interface RunOptions {
  /** Run as root through `sudo -n` (or `sudo -S` with a password sent on stdin). */
  sudo?: boolean;
  /** Bytes for the command's stdin (argv commands only; scripts use stdin themselves). */
  stdin?: string | Buffer;
  /** Kill the command after this many milliseconds (default: none). */
  timeoutMs?: number;
  /** Cancels the command: the remote process group is signalled and the promise settles. */
  signal?: AbortSignal;
  /** Extra environment, passed as quoted `NAME=value` assignments before the command. */
  env?: Readonly<Record<string, string>>;
  /** Raw chunks as they arrive (not normalised; the engine normalises once). */
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  /** Called when the command actually starts (after waiting in the channel queue), with its line. */
  onStart?: (commandLine: string) => void;
  /** Keep at most this many bytes of each stream in the result (default 64 MiB); the callbacks still see all. */
  maxBufferBytes?: number;
  /**
   * Asked after each output chunk: a promise when whoever takes the output is behind (the session log writing to
   * disk). Reading this command's output pauses until it settles; over SSH the unread data holds the channel's
   * window, so the remote command waits instead of our memory growing.
   */
  backpressure?: () => Promise<void> | undefined;
}

export interface RunResult {
  /** The exact command line that was sent (for evidence and the session log). */
  commandLine: string;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  timedOut: boolean;
  cancelled: boolean;
  /** True when a stream was longer than maxBufferBytes and its head was dropped. */
  truncated: boolean;
}

export interface WriteFileOptions {
  mode?: number;
  sudo?: boolean;
  /** Directory to copy the previous version into (default /var/lib/l20-setup/backup/<run-id>). */
  backupDir?: string;
}

export interface WriteFileResult {
  changed: boolean;
  backupPath?: string;
}

export type HostConnectionState = 'idle' | 'connecting' | 'connected' | 'lost' | 'failed' | 'closed';

export interface Host {
  readonly name: string;
  /** `address:port` for reports. */
  readonly address: string;
  connect(): Promise<void>;
  run(command: Command, options?: RunOptions): Promise<RunResult>;
  readFile(path: string, options?: { sudo?: boolean }): Promise<string>;
  writeFileAtomic(path: string, content: string, options?: WriteFileOptions): Promise<WriteFileResult>;
  onStateChange(listener: (state: HostConnectionState, detail?: string) => void): () => void;
  /**
   * Opens a brand-new connection, runs `true` over it and closes it; rejects when that fails. Proves
   * the management path after a network change (an existing connection can outlive a broken path).
   */
  probeFreshConnection?(timeoutMs: number): Promise<void>;
  /**
   * The keepalive bound: how long a connection to a host that stopped answering can take to be declared
   * lost (interval × (count + 1) + 1 s), and the grace the armed network procedures give a lost host to
   * answer again before they report it lost. Absent where the transport has no keepalive (local runs).
   */
  readonly lostBoundMs?: number;
  /** SHA256 fingerprints of the host keys this host is known by before connecting (none for a local host). */
  knownHostKeys?(): readonly string[];
  close(): Promise<void>;
}

/**
 * Raised for transport failures (not for non-zero exits, which are results). Its message quotes what the
 * other end sent (a pre-KEX SSH_MSG_DISCONNECT description, a channel-open failure, a command's output): it is
 * made clean here, once, so every verb and screen that shows `err.message` shows inert text.
 */
export class TransportError extends Error {
  declare readonly message: CleanText;

  constructor(
    message: string,
    readonly host: string,
    readonly commandLine?: string,
    override readonly cause?: unknown,
  ) {
    super(clean(message));
    this.name = 'TransportError';
  }
}

/**
 * The connection went away while the command ran, or no connection could be had to send it: the host
 * may answer again, and whether a command that was running finished is unknown. (Not for non-zero exits,
 * nor host key problems.)
 */
export class ConnectionLostError extends TransportError {
  constructor(message: string, host: string, commandLine?: string, cause?: unknown) {
    super(message, host, commandLine, cause);
    this.name = 'ConnectionLostError';
  }
}

/** Raised when a host key is unknown (asks for trust) or has changed (refused). Its message is clean, as above. */
export class HostKeyError extends Error {
  declare readonly message: CleanText;

  constructor(
    message: string,
    readonly host: string,
    readonly kind: 'unknown' | 'changed' | 'revoked',
    readonly presentedFingerprint: string,
    readonly knownFingerprint?: string,
  ) {
    super(clean(message));
    this.name = 'HostKeyError';
  }
}

/**
 * A command the transport ran for itself (readFile, writeFileAtomic's steps) exited non-zero or was killed.
 * Carries the exit status and the last output lines (sanitized) for the report.
 */
export class CommandFailedError extends TransportError {
  constructor(
    message: string,
    host: string,
    commandLine: string,
    readonly exitCode: number | null,
    readonly signal: string | null,
    readonly stderrLines: readonly string[],
    readonly stdoutLines: readonly string[] = [],
  ) {
    super(message, host, commandLine);
    this.name = 'CommandFailedError';
  }
}
