/**
 * What the two connection-based hosts (SshHost over ssh2, OpensshHost over the system ssh) share about a
 * connection's life cycle, so the two cannot drift apart: one connection attempt at a time, which a caller
 * may stop waiting for; the backoff after failed attempts and losses; the error a run throws when no
 * connection could be had; the sudo-password probe; the fresh-connection probe.
 */
import { buildCommand, type BuiltCommand } from './quote.js';
import { notStartedResult } from './output.js';
import { sleep } from './ssh-channel-queue.js';
import {
  ConnectionLostError,
  HostKeyError,
  TransportError,
  type Host,
  type RunOptions,
  type RunResult,
} from './types.js';

/** `attempt`, unless `signal` aborts first (then an AbortError; the attempt itself goes on). */
export function untilAborted<T>(attempt: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return attempt;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DOMException('aborted', 'AbortError'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    attempt.then(
      (c) => {
        signal.removeEventListener('abort', onAbort);
        resolve(c);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * One connection attempt at a time, started after the backoff: `baseMs` after a loss, doubling after each
 * failed attempt (at most 30 s); an explicit connect does not wait.
 */
export class Reconnect<C> {
  private connecting: Promise<C> | undefined;
  private failedAttempts = 0;
  private nextAttemptAt = 0;

  constructor(private readonly baseMs: number) {}

  /** The attempt under way, if any. */
  get pending(): Promise<C> | undefined {
    return this.connecting;
  }

  attempt(open: () => Promise<C>, signal?: AbortSignal, explicit = false): Promise<C> {
    if (!this.connecting) {
      const wait = explicit ? 0 : this.nextAttemptAt - Date.now();
      const attempt = (async () => {
        await sleep(wait);
        return open();
      })().finally(() => {
        if (this.connecting === attempt) this.connecting = undefined;
      });
      attempt.catch(() => undefined); // callers that gave up (aborted) must not leave it unhandled
      this.connecting = attempt;
    }
    return untilAborted(this.connecting, signal);
  }

  failed(): void {
    this.failedAttempts++;
    this.nextAttemptAt = Date.now() + Math.min(30_000, this.baseMs * 2 ** (this.failedAttempts - 1));
  }

  succeeded(): void {
    this.failedAttempts = 0;
    this.nextAttemptAt = 0;
  }

  lost(): void {
    this.nextAttemptAt = Date.now() + this.baseMs;
  }
}

/** What a run throws when connecting for it failed: a host key problem as it is, else the command was not sent. */
function notSentError(err: unknown, host: string, line: string): HostKeyError | ConnectionLostError {
  if (err instanceof HostKeyError) return err;
  const e = err instanceof TransportError ? err : new TransportError(String(err), host, undefined, err);
  return new ConnectionLostError(`${e.message} (command not sent: ${line})`, host, line, e);
}

/** An error from `exec` that says the command never reached the host, and whether a new connection may retry it. */
export interface NotSent {
  error: TransportError;
  canRetry: boolean;
}

/**
 * One run on a connection-based host: waits for the connection (connecting after the backoff), executes, and
 * when the command was not sent because the connection had just gone (`notSent` says so), retries it once on
 * a new connection; otherwise it fails as not sent. Cancelled before it starts: a not-started result.
 */
export async function runConnected<C>(
  host: string,
  line: string,
  signal: AbortSignal | undefined,
  connect: () => Promise<C>,
  exec: (connection: C) => Promise<RunResult>,
  notSent: (err: unknown, connection: C) => NotSent | undefined,
): Promise<RunResult> {
  let retried = false;
  for (;;) {
    if (signal?.aborted) return notStartedResult(line, 'cancelled');
    let connection: C;
    try {
      connection = await connect();
    } catch (err) {
      if (signal?.aborted) return notStartedResult(line, 'cancelled');
      throw notSentError(err, host, line);
    }
    try {
      return await exec(connection);
    } catch (err) {
      const why = notSent(err, connection);
      if (why === undefined) throw err;
      if (!retried && why.canRetry) {
        retried = true;
        continue;
      }
      throw new ConnectionLostError(`${why.error.message} (command not sent: ${line})`, host, line, why.error);
    }
  }
}

/**
 * With a sudo password configured, first ask `sudo -n true`: when sudo needs no password the password must
 * not be sent, or it would land on the command's stdin. Asked once; a transport failure lets the next run ask.
 */
export class SudoPasswordProbe {
  private needsPassword: Promise<boolean> | undefined;

  constructor(
    private readonly password: string | undefined,
    private readonly runProbe: (built: BuiltCommand) => Promise<RunResult>,
  ) {}

  async passwordFor(options: RunOptions): Promise<string | undefined> {
    const password = this.password;
    if (!options.sudo || password === undefined) return undefined;
    if (!this.needsPassword) {
      this.needsPassword = this.runProbe(buildCommand({ argv: ['true'] }, { sudo: true })).then(
        (r) => r.exitCode !== 0,
        (err: unknown) => {
          this.needsPassword = undefined;
          throw err;
        },
      );
    }
    return (await this.needsPassword) ? password : undefined;
  }
}

/** Host.probeFreshConnection over `probe`, a sibling host with its own connection: connect, `true`, close. */
export async function probeFreshConnectionWith(probe: Host, name: string, timeoutMs: number): Promise<void> {
  try {
    await probe.connect();
    const r = await probe.run({ argv: ['true'] }, { timeoutMs });
    if (r.exitCode !== 0) {
      throw new TransportError(`${name}: \`true\` over a new connection exited ${r.exitCode}`, name, r.commandLine);
    }
  } finally {
    await probe.close();
  }
}
