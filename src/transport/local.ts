/**
 * LocalHost: the Host contract on this machine, via execa. The line from buildCommand runs as
 * `/bin/sh -c LINE` (execa with shell: false), exactly as a remote sshd would run it, in its own process
 * group (detached) so a timeout or cancellation can signal the whole group: TERM, then KILL after a grace
 * period if it is still there.
 */
import { execa } from 'execa';
import { buildCommand, type BuiltCommand } from './quote.js';
import { DEFAULT_BACKUP_ROOT, backupRunId, readFileVia, writeFileAtomicVia } from './files.js';
import {
  DEFAULT_MAX_BUFFER_BYTES,
  StreamCollector,
  finishedResult,
  notStartedResult,
  outputGate,
  pauseStreams,
} from './output.js';
import {
  TransportError,
  type Command,
  type Host,
  type HostConnectionState,
  type RunOptions,
  type RunResult,
  type WriteFileOptions,
  type WriteFileResult,
} from './types.js';
import { StateEmitter, type StateListener } from './state-emitter.js';
import { registerSecret } from '../util/secrets.js';

export interface LocalHostOptions {
  /** Inventory name (default "local"). */
  name?: string;
  /** Password for `sudo -S`, sent on stdin only when sudo asks for one. Never logged. */
  sudoPassword?: string;
  /** After TERM, wait this long before KILLing the process group (default 2000 ms). */
  killGraceMs?: number;
  /** Backup folder for writeFileAtomic (default /var/lib/l20-setup/backup/<UTC timestamp of this object>). */
  defaultBackupDir?: string;
}

/** Process groups still running, killed if this process exits first. */
const runningGroups = new Set<number>();
let exitHookInstalled = false;
function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const pgid of runningGroups) killGroup(pgid, 'SIGKILL');
    });
  }
  runningGroups.add(pid);
}

function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // the group is gone
  }
}

export class LocalHost implements Host {
  readonly name: string;
  readonly address = 'localhost';
  private state: HostConnectionState = 'idle';
  private readonly stateListeners = new StateEmitter();
  private readonly killGraceMs: number;
  private readonly defaultBackupDir: string;
  private readonly mine = new Set<number>();
  private sudoNeedsPassword: Promise<boolean> | undefined;

  constructor(private readonly opts: LocalHostOptions = {}) {
    this.name = opts.name ?? 'local';
    this.killGraceMs = opts.killGraceMs ?? 2000;
    this.defaultBackupDir = opts.defaultBackupDir ?? `${DEFAULT_BACKUP_ROOT}/${backupRunId()}`;
    // Held from here on: scrubbed from whatever a command prints back (util/secrets.ts).
    if (opts.sudoPassword !== undefined) registerSecret(opts.sudoPassword, 'sudo-password');
  }

  onStateChange(listener: StateListener): () => void {
    return this.stateListeners.add(listener);
  }

  private setState(state: HostConnectionState, detail?: string): void {
    if (this.state === state) return;
    this.state = state;
    this.stateListeners.emit(state, detail);
  }

  async connect(): Promise<void> {
    this.setState('connected', 'local commands');
  }

  private async sudoPasswordFor(options: RunOptions): Promise<string | undefined> {
    const password = this.opts.sudoPassword;
    if (!options.sudo || password === undefined) return undefined;
    this.sudoNeedsPassword ??= this.runBuilt(buildCommand({ argv: ['true'] }, { sudo: true }), {}).then(
      (r) => r.exitCode !== 0,
    );
    return (await this.sudoNeedsPassword) ? password : undefined;
  }

  async run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    if (this.state === 'idle' || this.state === 'closed') this.setState('connected', 'local commands');
    const built = buildCommand(command, options, await this.sudoPasswordFor(options));
    return this.runBuilt(built, options);
  }

  private async runBuilt(built: BuiltCommand, options: RunOptions): Promise<RunResult> {
    const line = built.line;
    const signal = options.signal;
    if (signal?.aborted) return notStartedResult(line, 'cancelled');
    const maxBuffer = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
    const stdout = new StreamCollector(maxBuffer, options.onStdout);
    const stderr = new StreamCollector(maxBuffer, options.onStderr);
    const started = Date.now();

    const subprocess = execa('/bin/sh', ['-c', line], {
      shell: false,
      detached: true,
      buffer: false,
      reject: false,
      stripFinalNewline: false,
      ...(built.stdin !== undefined ? { input: built.stdin } : { stdin: 'ignore' as const }),
    });
    const pid = subprocess.pid;
    options.onStart?.(line);
    if (pid !== undefined) {
      trackGroup(pid);
      this.mine.add(pid);
    }
    const gate = outputGate(pauseStreams([subprocess.stdout, subprocess.stderr]), options.backpressure);
    subprocess.stdout?.on('data', (chunk: Buffer | string) => {
      stdout.push(chunk);
      gate.afterChunk();
    });
    subprocess.stderr?.on('data', (chunk: Buffer | string) => {
      stderr.push(chunk);
      gate.afterChunk();
    });

    let stopped: 'timedOut' | 'cancelled' | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    const stop = (why: 'timedOut' | 'cancelled') => {
      if (stopped || pid === undefined) return;
      stopped = why;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), this.killGraceMs);
    };
    const timeoutTimer =
      options.timeoutMs !== undefined && options.timeoutMs > 0
        ? setTimeout(() => stop('timedOut'), options.timeoutMs)
        : undefined;
    const onAbort = () => stop('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });

    try {
      const result = await subprocess;
      if (result.failed && result.exitCode === undefined && result.signal === undefined && !stopped) {
        // Could not start /bin/sh at all.
        throw new TransportError(
          `${this.name}: cannot run \`${line}\`: ${result.shortMessage}`,
          this.name,
          line,
          result,
        );
      }
      return finishedResult(
        line,
        started,
        stdout,
        stderr,
        { exitCode: result.exitCode ?? null, signal: result.signal ?? null },
        stopped,
      );
    } finally {
      if (timeoutTimer) clearTimeout(timeoutTimer);
      signal?.removeEventListener('abort', onAbort);
      if (pid !== undefined) {
        if (stopped) {
          // The shell is gone; make sure nothing it started survives the grace period.
          if (killTimer) clearTimeout(killTimer);
          killGroup(pid, 'SIGKILL');
        }
        runningGroups.delete(pid);
        this.mine.delete(pid);
      }
    }
  }

  readFile(path: string, options: { sudo?: boolean } = {}): Promise<string> {
    return readFileVia(this, path, options);
  }

  writeFileAtomic(path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    return writeFileAtomicVia(this, path, content, options, this.defaultBackupDir);
  }

  async close(): Promise<void> {
    for (const pid of this.mine) killGroup(pid, 'SIGTERM');
    this.setState('closed', 'closed');
  }
}
