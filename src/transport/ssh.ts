/**
 * SshHost: a Host over one ssh2 connection.
 *
 * - Host keys are checked against known_hosts files before authentication (ssh2's async hostVerifier):
 *   known → accept; unknown → ask `onUnknownHostKey` (refuse without one) and record the key when trusted;
 *   changed or revoked → refuse, `connect()` rejects with HostKeyError naming both fingerprints, nothing is
 *   ever sent, and later runs fail with the same error (no automatic retry).
 * - One connection; exec channels are queued so at most `maxSessions` are open. A server that refuses a
 *   channel ("open failed": OpenSSH's MaxSessions) makes the command wait for a free slot and retry; the
 *   limit drops to what the server accepted.
 * - Timeout and cancellation send a TERM signal request for the channel (OpenSSH ≥ 7.9 signals the
 *   session's process group), then close the channel; the run resolves with timedOut/cancelled.
 * - A connection lost mid-command rejects those runs with TransportError; commands that were not sent yet
 *   and later runs reconnect (once per run, after a backoff).
 *
 * Here: the connection life cycle (connect, backoff, loss, close) and the Host methods. Beside it: ssh-host-key.ts,
 * ssh-auth.ts, ssh-channel-queue.ts, ssh-exec.ts and ssh-options-from-config.ts, each saying what it does.
 */
// ssh2 is CommonJS: Node's ESM loader exposes only its default export at run time.
import ssh2, { type ConnectConfig } from 'ssh2';

const { Client } = ssh2;
import { buildCommand, type BuiltCommand } from './quote.js';
import { DEFAULT_BACKUP_ROOT, backupRunId, readFileVia, writeFileAtomicVia } from './files.js';
import { notStartedResult } from './output.js';
import { loadAuthMethods, type AuthMethods } from './ssh-auth.js';
import { unreadableKnownHostsFile } from './known-hosts.js';
import { ChannelSlots, NotSentError, sleep, type Connection } from './ssh-channel-queue.js';
import { execOnConnection } from './ssh-exec.js';
import { HostKeyVerifier, type UnknownHostKeyInfo } from './ssh-host-key.js';
import {
  ConnectionLostError,
  HostKeyError,
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
import { clean } from '../util/sanitize.js';

export type { UnknownHostKeyInfo } from './ssh-host-key.js';
export { sshHostOptionsFromConfig } from './ssh-options-from-config.js';
export type { SshHostOptions } from './ssh-options.js';
import type { SshHostOptions } from './ssh-options.js';
import { registerSecret } from '../util/secrets.js';



export class SshHost implements Host {
  readonly name: string;
  readonly address: string;
  private readonly opts: SshHostOptions;
  private readonly port: number;
  private readonly maxSessions: number;
  private readonly defaultBackupDir: string;
  private state: HostConnectionState = 'idle';
  private readonly stateListeners = new StateEmitter();
  private conn: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  /** A host key problem: never retried automatically. */
  private permanentError: HostKeyError | undefined;
  private closedByUser = false;
  private nextAttemptAt = 0;
  private failedAttempts = 0;
  /** Outlives each connection, so a key trusted once is not asked about again on reconnect. */
  private readonly hostKeys: HostKeyVerifier;
  private sudoNeedsPassword: Promise<boolean> | undefined;

  constructor(options: SshHostOptions) {
    this.opts = options;
    this.name = options.name;
    this.port = options.port ?? 22;
    this.address = `${options.host}:${this.port}`;
    this.maxSessions = Math.max(1, options.maxSessions ?? 10);
    this.defaultBackupDir = options.defaultBackupDir ?? `${DEFAULT_BACKUP_ROOT}/${backupRunId()}`;
    this.hostKeys = new HostKeyVerifier(this.name, this.address, this.port, options);
    // Held from here on: scrubbed from whatever any host prints back (util/secrets.ts).
    if (options.sudoPassword !== undefined) registerSecret(options.sudoPassword, 'sudo-password');
    if (options.passphrase !== undefined) registerSecret(options.passphrase, 'ssh-passphrase');
  }

  /** See Host.lostBoundMs; without keepalives a silent host is noticed by the handshake timeout at best. */
  get lostBoundMs(): number {
    const interval = this.keepaliveIntervalMs();
    if (interval <= 0) return this.opts.readyTimeoutMs ?? 20_000;
    return interval * (this.keepaliveCountMax() + 1) + 1000;
  }

  private keepaliveIntervalMs(): number {
    return this.opts.keepaliveIntervalMs ?? 5000;
  }

  private keepaliveCountMax(): number {
    return this.opts.keepaliveCountMax ?? 3;
  }

  /** Host key fingerprints known for this host before connecting (ssh-host-key.ts). */
  knownHostKeys(): string[] {
    return this.hostKeys.knownFingerprints();
  }

  get connectionState(): HostConnectionState {
    return this.state;
  }

  onStateChange(listener: StateListener): () => void {
    return this.stateListeners.add(listener);
  }

  private setState(state: HostConnectionState, detail?: string): void {
    if (this.state === state && detail === undefined) return;
    this.state = state;
    // The detail quotes what the other end sent (ssh2's error for a disconnect): inert before anyone sees it.
    this.stateListeners.emit(state, detail === undefined ? undefined : clean(detail));
  }

  async connect(): Promise<void> {
    this.closedByUser = false;
    this.permanentError = undefined; // an explicit connect re-checks the host key (e.g. after ssh-keygen -R)
    await this.ensureConnected(undefined, true);
  }

  /** The live connection, connecting (after the backoff, when reconnecting) if needed. */
  private ensureConnected(signal?: AbortSignal, explicit = false): Promise<Connection> {
    if (this.closedByUser) return Promise.reject(new TransportError(`${this.name}: the connection was closed`, this.name));
    if (this.permanentError) return Promise.reject(this.permanentError);
    if (this.conn && !this.conn.gone) return Promise.resolve(this.conn);
    if (!this.connecting) {
      const wait = explicit ? 0 : this.nextAttemptAt - Date.now();
      const attempt = (async () => {
        await sleep(wait);
        return this.openConnection();
      })().finally(() => {
        if (this.connecting === attempt) this.connecting = undefined;
      });
      attempt.catch(() => undefined); // callers that gave up (aborted) must not leave it unhandled
      this.connecting = attempt;
    }
    const attempt = this.connecting;
    if (!signal) return attempt;
    return new Promise<Connection>((resolve, reject) => {
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

  private async openConnection(): Promise<Connection> {
    const { host, user } = this.opts;
    const port = this.port;
    const readyTimeoutMs = this.opts.readyTimeoutMs ?? 20_000;
    this.setState('connecting', `connecting to ${user}@${this.address}`);

    let auth: AuthMethods;
    try {
      auth = await loadAuthMethods(this.opts);
    } catch (err) {
      return Promise.reject(this.connectFailed(new TransportError(`${this.name}: cannot load keys: ${(err as Error).message}`, this.name, undefined, err)));
    }
    const unreadable = await unreadableKnownHostsFile(this.opts.knownHostsFiles);
    if (unreadable !== undefined) {
      const message = `${this.name}: cannot check the host key of ${this.address}: known_hosts ${unreadable}`;
      return Promise.reject(this.connectFailed(new TransportError(message, this.name)));
    }
    if (auth.methods.length === 0) {
      const why = auth.notes.length > 0 ? ` (${auth.notes.join('; ')})` : '';
      return Promise.reject(
        this.connectFailed(new TransportError(`${this.name}: no usable SSH key or agent for ${user}@${this.address}${why}`, this.name)),
      );
    }

    return new Promise<Connection>((resolve, reject) => {
      const client = new Client();
      let settled = false;
      let hostKeyError: HostKeyError | undefined;
      let lastError: Error | undefined;
      let timer: NodeJS.Timeout | undefined;

      const startTimer = () => {
        if (readyTimeoutMs > 0) {
          timer = setTimeout(() => {
            lastError = new Error(`timed out after ${readyTimeoutMs} ms waiting for the SSH handshake`);
            client.destroy();
          }, readyTimeoutMs);
        }
      };
      const stopTimer = () => {
        if (timer) clearTimeout(timer);
        timer = undefined;
      };

      const fail = () => {
        if (settled) return;
        settled = true;
        stopTimer();
        client.removeAllListeners();
        client.on('error', () => undefined);
        client.destroy();
        if (hostKeyError) {
          this.permanentError = hostKeyError;
          this.setState('failed', hostKeyError.message);
          reject(hostKeyError);
          return;
        }
        const reason = lastError?.message ?? 'connection closed during the handshake';
        const authHint = /authentication methods failed/i.test(reason) && auth.notes.length > 0 ? ` (${auth.notes.join('; ')})` : '';
        reject(this.connectFailed(new TransportError(`${this.name}: cannot connect to ${user}@${this.address}: ${reason}${authHint}`, this.name, undefined, lastError)));
      };

      client.on('error', (err) => {
        lastError = err;
        if (!settled) fail();
      });
      client.on('close', () => {
        if (!settled) fail();
      });
      client.once('ready', () => {
        if (settled) return;
        settled = true;
        stopTimer();
        client.removeAllListeners('error');
        client.removeAllListeners('close');
        const conn: Connection = { client, slots: new ChannelSlots(this.maxSessions), active: new Set(), gone: false };
        client.on('error', (err) => this.connectionLost(conn, err.message));
        client.on('close', () => this.connectionLost(conn, 'connection closed'));
        this.conn = conn;
        this.failedAttempts = 0;
        this.nextAttemptAt = 0;
        this.setState('connected', `connected to ${user}@${this.address}`);
        resolve(conn);
      });

      const hostVerifier = this.hostKeys.hostVerifier(
        {
          pause: stopTimer, // the operator may take a while to answer
          resume: () => {
            if (!settled) startTimer();
          },
        },
        (err) => {
          hostKeyError = err instanceof HostKeyError ? err : undefined;
          if (!hostKeyError) lastError = err instanceof Error ? err : new Error(String(err));
        },
      );

      const config: ConnectConfig = {
        host,
        port,
        username: user,
        readyTimeout: 0, // our own timer, paused while the operator decides about a host key
        keepaliveInterval: this.keepaliveIntervalMs(),
        keepaliveCountMax: this.keepaliveCountMax(),
        hostVerifier,
        authHandler: auth.methods,
        algorithms: { serverHostKey: this.hostKeys.algorithms() as NonNullable<NonNullable<ConnectConfig['algorithms']>['serverHostKey']> },
      };
      if (this.opts.debug) config.debug = this.opts.debug;
      startTimer();
      try {
        client.connect(config);
        // Many small request/reply packets per command: Nagle + delayed ACKs would add ~40 ms to each.
        client.setNoDelay(true);
      } catch (err) {
        lastError = err as Error;
        fail();
      }
    });
  }

  private connectFailed(err: TransportError): TransportError {
    this.failedAttempts++;
    const base = this.opts.reconnectBackoffMs ?? 1000;
    this.nextAttemptAt = Date.now() + Math.min(30_000, base * 2 ** (this.failedAttempts - 1));
    this.setState('failed', err.message);
    return err;
  }

  private connectionLost(conn: Connection, reason: string): void {
    if (conn.gone) return;
    conn.gone = true;
    if (this.conn === conn) this.conn = undefined;
    try {
      conn.client.destroy();
    } catch {
      // already gone
    }
    const err = new ConnectionLostError(`${this.name}: connection to ${this.address} lost: ${reason}`, this.name);
    conn.slots.dispose(err);
    for (const run of [...conn.active]) run.onLost(err);
    conn.active.clear();
    if (this.closedByUser) {
      this.setState('closed', 'closed');
    } else {
      this.nextAttemptAt = Date.now() + (this.opts.reconnectBackoffMs ?? 1000);
      this.setState('lost', `connection to ${this.address} lost: ${reason}`);
    }
  }

  /**
   * With a sudo password configured, first ask `sudo -n true`: when sudo needs no password the password
   * must not be sent, or it would land on the command's stdin.
   */
  private async sudoPasswordFor(options: RunOptions): Promise<string | undefined> {
    const password = this.opts.sudoPassword;
    if (!options.sudo || password === undefined) return undefined;
    if (!this.sudoNeedsPassword) {
      const probe = buildCommand({ argv: ['true'] }, { sudo: true });
      this.sudoNeedsPassword = this.runBuilt(probe, {}).then(
        (r) => r.exitCode !== 0,
        (err: unknown) => {
          this.sudoNeedsPassword = undefined;
          throw err;
        },
      );
    }
    return (await this.sudoNeedsPassword) ? password : undefined;
  }

  async run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    const built = buildCommand(command, options, await this.sudoPasswordFor(options));
    return this.runBuilt(built, options);
  }

  private async runBuilt(built: BuiltCommand, options: RunOptions): Promise<RunResult> {
    const signal = options.signal;
    let retried = false;
    for (;;) {
      if (signal?.aborted) return notStartedResult(built.line, 'cancelled');
      let conn: Connection;
      try {
        conn = await this.ensureConnected(signal);
      } catch (err) {
        if (signal?.aborted) return notStartedResult(built.line, 'cancelled');
        if (err instanceof HostKeyError) throw err;
        const e = err instanceof TransportError ? err : new TransportError(String(err), this.name, undefined, err);
        throw new ConnectionLostError(`${e.message} (command not sent: ${built.line})`, this.name, built.line, e);
      }
      try {
        return await execOnConnection(conn, built, options, this);
      } catch (err) {
        if (err instanceof NotSentError) {
          if (!retried && conn.gone && !this.closedByUser) {
            retried = true;
            continue;
          }
          throw new ConnectionLostError(`${err.error.message} (command not sent: ${built.line})`, this.name, built.line, err.error);
        }
        throw err;
      }
    }
  }

  readFile(path: string, options: { sudo?: boolean } = {}): Promise<string> {
    return readFileVia(this, path, options);
  }

  writeFileAtomic(path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    return writeFileAtomicVia(this, path, content, options, this.defaultBackupDir);
  }

  async probeFreshConnection(timeoutMs: number): Promise<void> {
    // A sibling with the same options: same keys, same host-key policy, its own TCP connection.
    const probe = new SshHost({ ...this.opts, readyTimeoutMs: timeoutMs });
    try {
      await probe.connect();
      const r = await probe.run({ argv: ['true'] }, { timeoutMs });
      if (r.exitCode !== 0) throw new TransportError(`${this.name}: \`true\` over a new connection exited ${r.exitCode}`, this.name, r.commandLine);
    } finally {
      await probe.close();
    }
  }

  async close(): Promise<void> {
    this.closedByUser = true;
    const conn = this.conn;
    if (conn && !conn.gone) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          conn.client.destroy();
          resolve();
        }, 2000);
        conn.client.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        conn.client.end();
      });
      this.connectionLost(conn, 'closed'); // reports 'closed' (closedByUser)
    }
    this.conn = undefined;
    if (this.state !== 'closed') this.setState('closed', 'closed');
  }
}
