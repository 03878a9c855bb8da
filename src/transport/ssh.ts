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
 */
import { readFileSync } from 'node:fs';
import { Client, utils, type AnyAuthMethod, type ClientChannel, type ConnectConfig, type ParsedKey } from 'ssh2';
import { buildCommand, type BuiltCommand } from './quote.js';
import type { ResolvedSshConfig } from './ssh-config.js';
import { appendKnownHost, fingerprintSha256, keyTypeOfBlob, knownKeyTypes, verifyHostKey } from './known-hosts.js';
import { DEFAULT_BACKUP_ROOT, backupRunId, readFileVia, writeFileAtomicVia } from './files.js';
import { DEFAULT_MAX_BUFFER_BYTES, StreamCollector, notStartedResult } from './output.js';
import {
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

export interface UnknownHostKeyInfo {
  host: string;
  port: number;
  /** `SHA256:…` as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  keyType: string;
}

export interface SshHostOptions {
  /** Inventory name (used in errors, logs and state details). */
  name: string;
  host: string;
  port?: number;
  user: string;
  /** A private key (OpenSSH/PEM text or buffer). Tried before `identityFiles`. */
  privateKey?: Buffer | string;
  /** Passphrase for an encrypted `privateKey` / identity file. */
  passphrase?: string;
  /** Private key files, tried in order; missing or unreadable ones are skipped. */
  identityFiles?: readonly string[];
  /** ssh-agent socket (e.g. process.env.SSH_AUTH_SOCK); tried first when set. */
  agent?: string;
  /** known_hosts files to check, in order; a trusted new key is appended to the first. */
  knownHostsFiles: readonly string[];
  /**
   * A pinned host key fingerprint (`SHA256:…`, e.g. from the inventory). A different key is refused as
   * 'changed'; the pinned key is accepted even when no known_hosts file lists it.
   */
  expectedFingerprint?: string;
  /** Asked when the host key is not in any known_hosts file: resolve true to trust (and record) it. */
  onUnknownHostKey?: (info: UnknownHostKeyInfo) => Promise<boolean>;
  /** SSH keepalive interval (default 5000 ms); 0 disables. */
  keepaliveIntervalMs?: number;
  /** Unanswered keepalives before the connection counts as lost (default 3). */
  keepaliveCountMax?: number;
  /** Most exec channels open at once (default 10, OpenSSH's MaxSessions default). */
  maxSessions?: number;
  /** Handshake + authentication limit (default 20000 ms); time spent in onUnknownHostKey is not counted. */
  readyTimeoutMs?: number;
  /** Password for `sudo -S`, sent on stdin only when the host's sudo asks for one. Never logged. */
  sudoPassword?: string;
  /** Wait before reconnecting after a loss (default 1000 ms; doubles after each failed attempt, max 30 s). */
  reconnectBackoffMs?: number;
  /** Backup folder for writeFileAtomic (default /var/lib/l20-setup/backup/<UTC timestamp of this host object>). */
  defaultBackupDir?: string;
  /** ssh2 debug output (may include key-exchange details; never includes passwords). */
  debug?: (message: string) => void;
}

type StateListener = (state: HostConnectionState, detail?: string) => void;

/** The server refused the channel or the connection went away before the exec request was sent. */
class NotSentError extends Error {
  constructor(readonly error: TransportError) {
    super(error.message);
  }
}

const DEFAULT_HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

function hostKeyAlgorithmsFor(keyType: string): string[] {
  if (keyType === 'ssh-rsa') return ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];
  return DEFAULT_HOST_KEY_ALGORITHMS.includes(keyType) ? [keyType] : [];
}

/** Slots for exec channels on one connection: a counting semaphore whose limit can shrink. */
class ChannelSlots {
  inUse = 0;
  private waiters: Array<{ grant: () => void; fail: (err: Error) => void }> = [];
  private releaseWatchers: Array<() => void> = [];
  private disposedWith: Error | undefined;

  constructor(public limit: number) {}

  acquire(signal: AbortSignal | undefined, front = false): Promise<void> {
    if (this.disposedWith) return Promise.reject(this.disposedWith);
    if (this.inUse < this.limit && this.waiters.length === 0) {
      this.inUse++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        fail: (err: Error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
        reject(new DOMException('aborted', 'AbortError'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (front) this.waiters.unshift(waiter);
      else this.waiters.push(waiter);
    });
  }

  release(): void {
    this.inUse = Math.max(0, this.inUse - 1);
    this.pump();
    const watchers = this.releaseWatchers;
    this.releaseWatchers = [];
    for (const w of watchers) w();
  }

  /** Resolves at the next release or after `ms`, whichever is first. */
  nextReleaseOr(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.releaseWatchers.push(done);
    });
  }

  private pump(): void {
    while (this.inUse < this.limit && this.waiters.length > 0) {
      const next = this.waiters.shift();
      this.inUse++;
      next?.grant();
    }
  }

  dispose(err: Error): void {
    this.disposedWith = err;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.fail(err);
    const watchers = this.releaseWatchers;
    this.releaseWatchers = [];
    for (const w of watchers) w();
  }
}

interface ActiveRun {
  /** Called when the connection is lost while this command runs. */
  onLost(err: TransportError): void;
}

/** One live ssh2 connection with its channel slots and running commands. */
interface Connection {
  client: Client;
  slots: ChannelSlots;
  active: Set<ActiveRun>;
  gone: boolean;
}

function isChannelOpenFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return typeof (err as { reason?: unknown }).reason === 'number' || /Channel open failure/i.test(err.message);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Sends a signal request for the channel. ssh2's `channel.signal()` is a no-op once our side has sent EOF
 * (which we do right after writing stdin), although the protocol allows it; fall back to the protocol
 * object then (ssh2 1.x internals, feature-checked).
 */
function sendSignal(channel: ClientChannel, name: string): void {
  try {
    if (channel.writable) {
      channel.signal(name);
      return;
    }
    const c = channel as unknown as {
      outgoing?: { state?: string; id?: number };
      _client?: { _protocol?: { signal?: (id: number, signal: string) => void } };
    };
    const state = c.outgoing?.state;
    const id = c.outgoing?.id;
    const protocol = c._client?._protocol;
    if ((state === 'open' || state === 'eof') && typeof id === 'number' && typeof protocol?.signal === 'function') {
      protocol.signal(id, name);
    }
  } catch {
    // A closed channel or connection: nothing left to signal.
  }
}

export class SshHost implements Host {
  readonly name: string;
  readonly address: string;
  private readonly opts: SshHostOptions;
  private readonly port: number;
  private readonly maxSessions: number;
  private readonly defaultBackupDir: string;
  private state: HostConnectionState = 'idle';
  private readonly listeners = new Set<StateListener>();
  private conn: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  /** A host key problem: never retried automatically. */
  private permanentError: HostKeyError | undefined;
  private closedByUser = false;
  private nextAttemptAt = 0;
  private failedAttempts = 0;
  /** Keys the operator trusted in this session (in case recording them failed). */
  private readonly trustedKeys: Buffer[] = [];
  private sudoNeedsPassword: Promise<boolean> | undefined;

  constructor(options: SshHostOptions) {
    this.opts = options;
    this.name = options.name;
    this.port = options.port ?? 22;
    this.address = `${options.host}:${this.port}`;
    this.maxSessions = Math.max(1, options.maxSessions ?? 10);
    this.defaultBackupDir = options.defaultBackupDir ?? `${DEFAULT_BACKUP_ROOT}/${backupRunId()}`;
  }

  get connectionState(): HostConnectionState {
    return this.state;
  }

  onStateChange(listener: StateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setState(state: HostConnectionState, detail?: string): void {
    if (this.state === state && detail === undefined) return;
    this.state = state;
    for (const l of [...this.listeners]) {
      try {
        l(state, detail);
      } catch {
        // listeners must not break the transport
      }
    }
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

  private loadAuthMethods(): { methods: AnyAuthMethod[]; notes: string[] } {
    const { user } = this.opts;
    const methods: AnyAuthMethod[] = [];
    const notes: string[] = [];
    if (this.opts.agent) methods.push({ type: 'agent', username: user, agent: this.opts.agent });
    const addKey = (data: Buffer | string, label: string) => {
      const parsed = utils.parseKey(data, this.opts.passphrase);
      if (parsed instanceof Error) {
        notes.push(`${label}: ${parsed.message}`);
        return;
      }
      const key = (Array.isArray(parsed) ? parsed[0] : parsed) as ParsedKey | undefined;
      if (!key || key.getPrivatePEM() === null) {
        notes.push(`${label}: not a private key`);
        return;
      }
      methods.push({ type: 'publickey', username: user, key });
    };
    if (this.opts.privateKey !== undefined) addKey(this.opts.privateKey, 'privateKey');
    for (const file of this.opts.identityFiles ?? []) {
      let data: Buffer;
      try {
        data = readFileSync(file);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT') notes.push(`${file}: ${(err as Error).message}`);
        continue;
      }
      addKey(data, file);
    }
    return { methods, notes };
  }

  private hostKeyAlgorithms(): string[] {
    // Like OpenSSH: prefer the key types already recorded for this host, so a server with several host keys
    // presents the one we know.
    const known = knownKeyTypes(this.opts.knownHostsFiles, this.opts.host, this.port);
    const preferred = known.flatMap(hostKeyAlgorithmsFor);
    return [...new Set([...preferred, ...DEFAULT_HOST_KEY_ALGORITHMS])];
  }

  private openConnection(): Promise<Connection> {
    const { host, user } = this.opts;
    const port = this.port;
    const readyTimeoutMs = this.opts.readyTimeoutMs ?? 20_000;
    this.setState('connecting', `connecting to ${user}@${this.address}`);

    let auth: { methods: AnyAuthMethod[]; notes: string[] };
    try {
      auth = this.loadAuthMethods();
    } catch (err) {
      return Promise.reject(this.connectFailed(new TransportError(`${this.name}: cannot load keys: ${(err as Error).message}`, this.name, undefined, err)));
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

      const hostVerifier = (key: Buffer, verify: (valid: boolean) => void): void => {
        stopTimer(); // the operator may take a while to answer
        this.checkHostKey(key).then(
          (ok) => {
            if (!settled) startTimer();
            verify(ok);
          },
          (err: unknown) => {
            hostKeyError = err instanceof HostKeyError ? err : undefined;
            if (!hostKeyError) lastError = err instanceof Error ? err : new Error(String(err));
            verify(false);
          },
        );
      };

      const config: ConnectConfig = {
        host,
        port,
        username: user,
        readyTimeout: 0, // our own timer, paused while the operator decides about a host key
        keepaliveInterval: this.opts.keepaliveIntervalMs ?? 5000,
        keepaliveCountMax: this.opts.keepaliveCountMax ?? 3,
        hostVerifier,
        authHandler: auth.methods,
        algorithms: { serverHostKey: this.hostKeyAlgorithms() as NonNullable<NonNullable<ConnectConfig['algorithms']>['serverHostKey']> },
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

  /** Resolves true to accept the key; throws HostKeyError to refuse. */
  private async checkHostKey(key: Buffer): Promise<boolean> {
    const { host } = this.opts;
    const port = this.port;
    const keyType = keyTypeOfBlob(key) ?? 'unknown';
    const fingerprint = fingerprintSha256(key);
    if (this.trustedKeys.some((k) => k.equals(key))) return true;
    const pinned = this.opts.expectedFingerprint?.trim();
    if (pinned && pinned.replace(/=+$/, '') !== fingerprint) {
      throw new HostKeyError(
        `${this.name}: the host key of ${this.address} does not match the inventory: the server presented ${keyType} ${fingerprint}, ` +
          `the inventory pins ${pinned}. Someone could be intercepting the connection, or the server was reinstalled; refusing to connect.`,
        this.name,
        'changed',
        fingerprint,
        pinned,
      );
    }
    const verdict = verifyHostKey(this.opts.knownHostsFiles, host, port, keyType, key);
    if (verdict.status === 'known') return true;
    if (verdict.status === 'changed') {
      const what = verdict.revoked
        ? `the host key ${fingerprint} presented by ${this.address} is marked @revoked in ${verdict.file}:${verdict.line}`
        : `the host key of ${this.address} has CHANGED: the server presented ${keyType} ${fingerprint}, but ${verdict.file}:${verdict.line} records ${verdict.knownFingerprint}`;
      throw new HostKeyError(
        `${this.name}: ${what}. Someone could be intercepting the connection, or the server was reinstalled; refusing to connect. ` +
          `If the change is expected, remove the old key (ssh-keygen -R ${port === 22 ? host : `'[${host}]:${port}'`}) and connect again.`,
        this.name,
        'changed',
        fingerprint,
        verdict.knownFingerprint,
      );
    }
    if (pinned) return true; // matches the pinned fingerprint; known_hosts has nothing for this key type
    const refuse = (why: string) =>
      new HostKeyError(`${this.name}: the host key of ${this.address} (${keyType} ${fingerprint}) is not known: ${why}`, this.name, 'unknown', fingerprint);
    if (!this.opts.onUnknownHostKey) throw refuse('no known_hosts entry and no one to ask; refusing');
    const trusted = await this.opts.onUnknownHostKey({ host, port, fingerprint, keyType });
    if (!trusted) throw refuse('not trusted');
    this.trustedKeys.push(Buffer.from(key));
    const file = this.opts.knownHostsFiles[0];
    if (file !== undefined) {
      try {
        appendKnownHost(file, host, port, keyType, key);
      } catch (err) {
        this.opts.debug?.(`could not record the host key in ${file}: ${(err as Error).message}`);
      }
    }
    return true;
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
    const err = new TransportError(`${this.name}: connection to ${this.address} lost: ${reason}`, this.name);
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
        throw new TransportError(`${e.message} (command not sent: ${built.line})`, this.name, built.line, e);
      }
      try {
        return await this.execOn(conn, built, options);
      } catch (err) {
        if (err instanceof NotSentError) {
          if (!retried && conn.gone && !this.closedByUser) {
            retried = true;
            continue;
          }
          throw new TransportError(`${err.error.message} (command not sent: ${built.line})`, this.name, built.line, err.error);
        }
        throw err;
      }
    }
  }

  private async execOn(conn: Connection, built: BuiltCommand, options: RunOptions): Promise<RunResult> {
    const signal = options.signal;
    const line = built.line;
    let refusalsWithNothingOpen = 0;
    let front = false;
    let channel: ClientChannel;
    for (;;) {
      try {
        await conn.slots.acquire(signal, front);
      } catch (err) {
        if (signal?.aborted) return notStartedResult(line, 'cancelled');
        throw new NotSentError(err instanceof TransportError ? err : new TransportError(String(err), this.name, line, err));
      }
      if (signal?.aborted) {
        conn.slots.release();
        return notStartedResult(line, 'cancelled');
      }
      try {
        channel = await new Promise<ClientChannel>((resolve, reject) => {
          try {
            conn.client.exec(line, (err, ch) => (err ? reject(err) : resolve(ch)));
          } catch (err) {
            reject(err);
          }
        });
        break;
      } catch (err) {
        conn.slots.release();
        if (conn.gone) {
          const lost = new TransportError(`${this.name}: connection to ${this.address} lost`, this.name, line, err);
          // "Unable to exec": the exec request may have reached the server; do not run it twice.
          if (err instanceof Error && /Unable to exec/.test(err.message)) throw lost;
          throw new NotSentError(lost);
        }
        if (!isChannelOpenFailure(err)) {
          throw new TransportError(`${this.name}: cannot start \`${line}\`: ${(err as Error).message}`, this.name, line, err);
        }
        // The server has fewer session slots than we thought (OpenSSH MaxSessions): shrink the limit to what
        // it accepts, wait for one of our channels to close, and try again at the head of the queue.
        conn.slots.limit = Math.max(1, Math.min(conn.slots.limit, conn.slots.inUse));
        front = true;
        if (conn.slots.inUse === 0) {
          refusalsWithNothingOpen++;
          if (refusalsWithNothingOpen > 8) {
            throw new NotSentError(
              new TransportError(`${this.name}: ${this.address} refuses to open a session channel: ${(err as Error).message}`, this.name, line, err),
            );
          }
          await sleep(Math.min(2000, 50 * 2 ** refusalsWithNothingOpen), signal);
        } else {
          refusalsWithNothingOpen = 0;
        }
      }
    }
    return this.driveChannel(conn, channel, built, options);
  }

  private driveChannel(conn: Connection, channel: ClientChannel, built: BuiltCommand, options: RunOptions): Promise<RunResult> {
    const line = built.line;
    const signal = options.signal;
    const started = Date.now();
    const maxBuffer = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
    const stdout = new StreamCollector(maxBuffer, options.onStdout);
    const stderr = new StreamCollector(maxBuffer, options.onStderr);

    return new Promise<RunResult>((resolve, reject) => {
      let exitCode: number | null = null;
      let exitSignal: string | null = null;
      let stopped: 'timedOut' | 'cancelled' | null = null;
      let done = false;
      let timeoutTimer: NodeJS.Timeout | undefined;
      let closeFallback: NodeJS.Timeout | undefined;

      const cleanup = () => {
        done = true;
        if (timeoutTimer) clearTimeout(timeoutTimer);
        if (closeFallback) clearTimeout(closeFallback);
        signal?.removeEventListener('abort', onAbort);
        conn.active.delete(active);
        conn.slots.release();
      };
      const finish = () => {
        if (done) return;
        cleanup();
        resolve({
          commandLine: line,
          exitCode,
          signal: exitSignal,
          stdout: stdout.finish(),
          stderr: stderr.finish(),
          durationMs: Date.now() - started,
          timedOut: stopped === 'timedOut',
          cancelled: stopped === 'cancelled',
          truncated: stdout.truncated || stderr.truncated,
        });
      };
      const stop = (why: 'timedOut' | 'cancelled') => {
        if (done || stopped) return;
        stopped = why;
        sendSignal(channel, 'TERM');
        try {
          channel.close();
        } catch {
          // already closing
        }
        // A server that never answers the close must not hang the caller.
        closeFallback = setTimeout(finish, 5000);
      };
      const onAbort = () => stop('cancelled');
      const active: ActiveRun = {
        onLost: (err) => {
          if (done) return;
          if (stopped) return finish();
          cleanup();
          stdout.finish();
          stderr.finish();
          reject(new TransportError(`${err.message} while running \`${line}\``, this.name, line, err));
        },
      };
      conn.active.add(active);

      channel.on('data', (chunk: Buffer) => stdout.push(chunk));
      channel.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      channel.on('exit', (code: number | null, sig?: string) => {
        if (typeof code === 'number') exitCode = code;
        else if (sig) exitSignal = sig.startsWith('SIG') ? sig : `SIG${sig}`;
      });
      channel.on('error', () => undefined); // reported through 'close' / connection loss
      channel.on('close', () => {
        // 'close' follows stdout's 'end'; stderr's 'end' may still be queued behind it.
        if (channel.stderr.readableEnded || channel.stderr.destroyed) finish();
        else {
          channel.stderr.once('end', finish);
          setImmediate(() => {
            if (!done && !conn.gone) finish();
          });
        }
      });

      if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
        timeoutTimer = setTimeout(() => stop('timedOut'), options.timeoutMs);
      }
      if (signal) {
        if (signal.aborted) stop('cancelled');
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      if (built.stdin !== undefined) channel.end(built.stdin);
      else channel.end();
    });
  }

  readFile(path: string, options: { sudo?: boolean } = {}): Promise<string> {
    return readFileVia(this, path, options);
  }

  writeFileAtomic(path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    return writeFileAtomicVia(this, path, content, options, this.defaultBackupDir);
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
      this.connectionLost(conn, 'closed');
    }
    this.conn = undefined;
    this.setState('closed', 'closed');
  }
}

/**
 * SshHost options from a resolved ~/.ssh/config entry. `unsupported` lists what the transport cannot do
 * (ProxyJump, ProxyCommand): the caller should refuse or explain rather than connect directly.
 * StrictHostKeyChecking: `yes` refuses unknown keys (no prompt), `accept-new` trusts and records them without
 * asking, `ask`/`no` ask `onUnknownHostKey`. A changed key is always refused.
 */
export function sshHostOptionsFromConfig(
  name: string,
  cfg: ResolvedSshConfig,
  extra: Partial<Pick<SshHostOptions, 'onUnknownHostKey' | 'sudoPassword' | 'maxSessions' | 'readyTimeoutMs' | 'privateKey' | 'passphrase'>> & {
    /** Environment for SSH_AUTH_SOCK (default process.env). */
    env?: Readonly<Record<string, string | undefined>>;
  } = {},
): { options: SshHostOptions; unsupported: string[] } {
  const env = extra.env ?? process.env;
  const unsupported: string[] = [];
  if (cfg.proxyJump !== undefined) unsupported.push(`ProxyJump ${cfg.proxyJump}`);
  if (cfg.proxyCommand !== undefined) unsupported.push(`ProxyCommand ${cfg.proxyCommand}`);
  let agent: string | undefined;
  if (cfg.identityAgent === undefined || cfg.identityAgent === 'SSH_AUTH_SOCK') agent = env.SSH_AUTH_SOCK;
  else if (cfg.identityAgent === 'none') agent = undefined;
  else if (cfg.identityAgent.startsWith('$')) agent = env[cfg.identityAgent.slice(1)];
  else agent = cfg.identityAgent;

  const options: SshHostOptions = {
    name,
    host: cfg.hostName,
    port: cfg.port,
    user: cfg.user,
    identityFiles: cfg.identityFiles,
    knownHostsFiles: [...cfg.userKnownHostsFiles, ...cfg.globalKnownHostsFiles],
  };
  if (agent) options.agent = agent;
  if (cfg.serverAliveInterval > 0) {
    options.keepaliveIntervalMs = cfg.serverAliveInterval * 1000;
    options.keepaliveCountMax = cfg.serverAliveCountMax;
  }
  if (cfg.strictHostKeyChecking === 'accept-new') options.onUnknownHostKey = async () => true;
  else if (cfg.strictHostKeyChecking !== 'yes' && extra.onUnknownHostKey) options.onUnknownHostKey = extra.onUnknownHostKey;
  for (const key of ['sudoPassword', 'maxSessions', 'readyTimeoutMs', 'privateKey', 'passphrase'] as const) {
    if (extra[key] !== undefined) (options as unknown as Record<string, unknown>)[key] = extra[key];
  }
  return { options, unsupported };
}
