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
 * - Jump hosts (`jump`, ProxyJump): each hop is an SshHost of its own (its own host-key check, keys, keepalives,
 *   failures named as the hop's), kept for the target's lifetime; the target's connection runs over a
 *   `forwardOut` channel of the last hop, which reaches its predecessors the same way. One readyTimeout covers
 *   the chain. A hop's loss is the target's; a reconnect rebuilds whatever part of the chain is gone.
 * - ProxyCommand: the child's stdio is the connection (ssh-tunnel.ts); its exit is a loss, reported with its
 *   stderr; it is killed with its connection.
 *
 * Here: the connection life cycle (connect, backoff, loss, close) and the Host methods. Beside it: ssh-host-key.ts,
 * ssh-auth.ts, ssh-channel-queue.ts, ssh-exec.ts, ssh-tunnel.ts and ssh-options-from-config.ts, each saying what
 * it does.
 */
// ssh2 is CommonJS: Node's ESM loader exposes only its default export at run time.
import ssh2, { type ConnectConfig } from 'ssh2';
import type { Duplex } from 'node:stream';

const { Client } = ssh2;
import { buildCommand, type BuiltCommand } from './quote.js';
import { DEFAULT_BACKUP_ROOT, backupRunId, readFileVia, writeFileAtomicVia } from './files.js';
import { loadAuthMethods, type AuthMethods } from './ssh-auth.js';
import { unreadableKnownHostsFile } from './known-hosts.js';
import { ChannelSlots, NotSentError, type Connection } from './ssh-channel-queue.js';
import { Reconnect, SudoPasswordProbe, probeFreshConnectionWith, runConnected } from './host-lifecycle.js';
import { execOnConnection } from './ssh-exec.js';
import { HostKeyVerifier } from './ssh-host-key.js';
import {
  expandProxyCommand,
  HandshakeClock,
  isDirectProxyCommand,
  spawnProxyCommand,
  type ProxyProcess,
} from './ssh-tunnel.js';
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
import { ConnectionState, type StateListener } from './state-emitter.js';
import type { SshHostOptions } from './ssh-options.js';
import { registerSecret } from '../util/secrets.js';

export class SshHost implements Host {
  readonly name: string;
  readonly address: string;
  private readonly opts: SshHostOptions;
  private readonly port: number;
  private readonly maxSessions: number;
  private readonly defaultBackupDir: string;
  private readonly status = new ConnectionState();
  private conn: Connection | undefined;
  private readonly reconnect: Reconnect<Connection>;
  /** A host key problem: never retried automatically. */
  private permanentError: HostKeyError | undefined;
  private closedByUser = false;
  /** Outlives each connection, so a key trusted once is not asked about again on reconnect. */
  private readonly hostKeys: HostKeyVerifier;
  private readonly sudo: SudoPasswordProbe;
  /** The last jump host, through which this host is reached (it reaches its own predecessors the same way). */
  private readonly via: SshHost | undefined;
  /** Set on a jump host: the inventory host it serves, which its errors name first. */
  private jumpHostFor: string | undefined;
  /** What each connection runs over, to end with it: its ProxyCommand child, its watch on the jump host. */
  private readonly tunnels = new WeakMap<Connection, { proxy?: ProxyProcess; unwatch?: () => void }>();

  constructor(options: SshHostOptions) {
    this.opts = options;
    this.name = options.name;
    this.port = options.port ?? 22;
    this.address = `${options.host}:${this.port}`;
    this.maxSessions = Math.max(1, options.maxSessions ?? 10);
    this.defaultBackupDir = options.defaultBackupDir ?? `${DEFAULT_BACKUP_ROOT}/${backupRunId()}`;
    this.hostKeys = new HostKeyVerifier(this.name, this.address, this.port, options);
    this.reconnect = new Reconnect(options.reconnectBackoffMs ?? 1000);
    this.sudo = new SudoPasswordProbe(options.sudoPassword, (probe) => this.runBuilt(probe, {}));
    const hops = options.jump ?? [];
    const last = hops[hops.length - 1];
    if (last) {
      this.via = new SshHost({ ...last, jump: hops.slice(0, -1), readyTimeoutMs: options.readyTimeoutMs ?? 20_000 });
      // Every hop's errors are this host's, naming it first (the chain's inner hops were built by the outer ones).
      for (let hop: SshHost | undefined = this.via; hop; hop = hop.via) hop.jumpHostFor = this.name;
    }
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
    return this.status.value;
  }

  onStateChange(listener: StateListener): () => void {
    return this.status.onChange(listener);
  }

  async connect(): Promise<void> {
    this.closedByUser = false;
    // An explicit connect re-checks the host keys (e.g. after ssh-keygen -R), the jump hosts' too.
    this.permanentError = undefined;
    for (let hop = this.via; hop; hop = hop.via) hop.permanentError = undefined;
    await this.ensureConnected(undefined, true);
  }

  /** The live connection, connecting (after the backoff, when reconnecting) if needed. */
  private ensureConnected(signal?: AbortSignal, explicit = false, clock?: HandshakeClock): Promise<Connection> {
    if (this.closedByUser) {
      return Promise.reject(new TransportError(`${this.name}: the connection was closed`, this.owner));
    }
    if (this.permanentError) return Promise.reject(this.permanentError);
    if (this.conn && !this.conn.gone) return Promise.resolve(this.conn);
    return this.reconnect.attempt(() => this.openConnection(clock), signal, explicit);
  }

  /** How this host's connection failures start: the inventory host's name, and the hop's when this is a jump host. */
  private failurePrefix(): string {
    const { user } = this.opts;
    if (this.jumpHostFor === undefined) return `${this.name}: cannot connect to ${user}@${this.address}`;
    return `${this.jumpHostFor}: cannot connect via jump host ${this.name} (${user}@${this.address})`;
  }

  /** Which inventory host an error belongs to: a jump host's errors are its target's. */
  private get owner(): string {
    return this.jumpHostFor ?? this.name;
  }

  private failure(what: string, cause?: unknown): TransportError {
    return this.connectFailed(new TransportError(`${this.failurePrefix()}: ${what}`, this.owner, undefined, cause));
  }

  private async openConnection(clock = new HandshakeClock(this.opts.readyTimeoutMs ?? 20_000)): Promise<Connection> {
    const { host, user } = this.opts;
    const port = this.port;
    const proxied = !isDirectProxyCommand(this.opts.proxyCommand);
    const route = this.via ? ` via jump host ${this.via.name}` : proxied ? ' via ProxyCommand' : '';
    this.status.set('connecting', `connecting to ${user}@${this.address}${route}`);

    let auth: AuthMethods;
    try {
      auth = await loadAuthMethods(this.opts);
    } catch (err) {
      throw this.failure(`cannot load keys: ${(err as Error).message}`, err);
    }
    const unreadable = await unreadableKnownHostsFile(this.opts.knownHostsFiles);
    if (unreadable !== undefined) throw this.failure(`cannot check the host key: known_hosts ${unreadable}`);
    if (auth.methods.length === 0) {
      const why = auth.notes.length > 0 ? ` (${auth.notes.join('; ')})` : '';
      throw this.failure(`no usable SSH key or agent${why}`);
    }

    // What the SSH connection runs over: a tunnel through the jump host, a ProxyCommand, or TCP (ssh2's own).
    let sock: Duplex | undefined;
    let proxy: ProxyProcess | undefined;
    let proxyLine = '';
    if (this.via) {
      try {
        sock = await this.via.tunnelTo(host, port, clock);
      } catch (err) {
        // The hop's error already names this host and the hop; it is this host's failure too (state, backoff).
        if (err instanceof HostKeyError) {
          this.status.set('failed', err.message);
          throw err; // the hop keeps it as its permanent error: every later attempt gets the same refusal
        }
        throw err instanceof TransportError ? this.connectFailed(err) : this.failure(String(err), err);
      }
    } else if (!isDirectProxyCommand(this.opts.proxyCommand)) {
      const tokens = { host, port, user, originalHost: this.opts.originalHost ?? host };
      try {
        proxyLine = expandProxyCommand(this.opts.proxyCommand as string, tokens);
      } catch (err) {
        throw this.failure(`ProxyCommand ${this.opts.proxyCommand}: ${(err as Error).message}`, err);
      }
      proxy = spawnProxyCommand(proxyLine);
      sock = proxy.sock;
    }

    return new Promise<Connection>((resolve, reject) => {
      const client = new Client();
      let settled = false;
      let hostKeyError: HostKeyError | undefined;
      let lastError: Error | undefined;
      let timer: NodeJS.Timeout | undefined;
      let timedOut: Error | undefined;

      const startTimer = () => {
        clock.resume();
        const left = clock.remaining();
        if (left === Infinity) return;
        timer = setTimeout(() => {
          lastError = timedOut = new Error(`timed out after ${clock.limitMs} ms waiting for the SSH handshake`);
          client.destroy();
        }, left);
      };
      const stopTimer = () => {
        clock.pause();
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
          void proxy?.kill();
          const err =
            this.jumpHostFor === undefined
              ? hostKeyError
              : new HostKeyError(
                  `${this.jumpHostFor}: jump host ${hostKeyError.message}`,
                  this.jumpHostFor,
                  hostKeyError.kind,
                  hostKeyError.presentedFingerprint,
                  hostKeyError.knownFingerprint,
                );
          this.permanentError = err;
          this.status.set('failed', err.message);
          reject(err);
          return;
        }
        const reason = lastError?.message ?? 'connection closed during the handshake';
        const authHint =
          /authentication methods failed/i.test(reason) && auth.notes.length > 0 ? ` (${auth.notes.join('; ')})` : '';
        // The ProxyCommand's own words explain most failures (its ssh could not connect, a typo): wait for them.
        void (proxy ? proxy.kill() : Promise.resolve()).then(() => {
          const why = proxy ? proxyReport(proxyLine, proxy) : '';
          reject(this.failure(`${reason}${authHint}${why}`, lastError));
        });
      };

      client.on('error', (err) => {
        lastError = timedOut ?? err; // destroying a stalled socket raises its own error: the timeout is the news
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
        // At once, not after the proxy has gone: the runs must fail before ssh2 closes their channels.
        // A ProxyCommand that exited has done so by now (its socket closes when it does): its words are kept.
        const lost = (reason: string) =>
          this.connectionLost(conn, `${reason}${proxy ? proxyReport(proxyLine, proxy) : ''}`);
        client.on('error', (err) => lost(err.message));
        client.on('close', () => lost('connection closed'));
        // The jump host's loss is this connection's (its tunnel went with it), said with the jump host's reason.
        const via = this.via;
        const unwatch = via?.onStateChange((state, detail) => {
          if (state === 'lost' || state === 'closed') lost(`jump host ${via.name}: ${detail ?? state}`);
        });
        this.tunnels.set(conn, { ...(proxy ? { proxy } : {}), ...(unwatch ? { unwatch } : {}) });
        this.conn = conn;
        this.reconnect.succeeded();
        this.status.set('connected', `connected to ${user}@${this.address}`);
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
        algorithms: {
          serverHostKey: this.hostKeys.algorithms() as NonNullable<
            NonNullable<ConnectConfig['algorithms']>['serverHostKey']
          >,
        },
      };
      if (sock) config.sock = sock;
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

  /**
   * As a jump host: a channel to `host:port` from this host (OpenSSH's direct-tcpip, what `ssh -W` asks for),
   * connecting first if needed. Failures name this hop and belong to the inventory host it serves.
   */
  private async tunnelTo(host: string, port: number, clock: HandshakeClock): Promise<Duplex> {
    this.closedByUser = false; // a jump host lives and dies with its target: the target's connect reopens it
    const conn = await this.ensureConnected(undefined, true, clock);
    clock.resume();
    return new Promise<Duplex>((resolve, reject) => {
      let timedOut = false;
      const left = clock.remaining();
      const timer =
        left === Infinity
          ? undefined
          : setTimeout(() => {
              timedOut = true;
              reject(this.failure(`timed out after ${clock.limitMs} ms opening a channel to ${host}:${port}`));
            }, left);
      const refused = (err: Error) => {
        const why = CHANNEL_OPEN_FAILURES[(err as { reason?: number }).reason ?? 0];
        reject(this.failure(`cannot open a channel to ${host}:${port}: ${err.message}${why ? ` (${why})` : ''}`, err));
      };
      try {
        conn.client.forwardOut('127.0.0.1', 0, host, port, (err, stream) => {
          if (timer) clearTimeout(timer);
          if (timedOut)
            stream?.destroy(); // nobody is waiting for it any more
          else if (err) refused(err);
          else resolve(stream);
        });
      } catch (err) {
        if (timer) clearTimeout(timer);
        refused(err as Error);
      }
    });
  }

  private connectFailed(err: TransportError): TransportError {
    this.reconnect.failed();
    this.status.set('failed', err.message);
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
    const tunnel = this.tunnels.get(conn);
    tunnel?.unwatch?.();
    void tunnel?.proxy?.kill(); // no orphan ProxyCommand
    const err = new ConnectionLostError(`${this.name}: connection to ${this.address} lost: ${reason}`, this.owner);
    conn.slots.dispose(err);
    for (const run of [...conn.active]) run.onLost(err);
    conn.active.clear();
    if (this.closedByUser) {
      this.status.set('closed', 'closed');
    } else {
      this.reconnect.lost();
      this.status.set('lost', `connection to ${this.address} lost: ${reason}`);
    }
  }

  async run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    const built = buildCommand(command, options, await this.sudo.passwordFor(options));
    return this.runBuilt(built, options);
  }

  private runBuilt(built: BuiltCommand, options: RunOptions): Promise<RunResult> {
    return runConnected(
      this.name,
      built.line,
      options.signal,
      () => this.ensureConnected(options.signal),
      (conn) => execOnConnection(conn, built, options, this),
      // A command not sent because the connection had just gone is retried once on a new one.
      (err, conn) => {
        if (!(err instanceof NotSentError)) return undefined;
        return { error: err.error, canRetry: conn.gone && !this.closedByUser };
      },
    );
  }

  readFile(path: string, options: { sudo?: boolean } = {}): Promise<string> {
    return readFileVia(this, path, options);
  }

  writeFileAtomic(path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    return writeFileAtomicVia(this, path, content, options, this.defaultBackupDir);
  }

  async probeFreshConnection(timeoutMs: number): Promise<void> {
    // A sibling with the same options: same keys, same host-key policy, its own TCP connection.
    await probeFreshConnectionWith(new SshHost({ ...this.opts, readyTimeoutMs: timeoutMs }), this.name, timeoutMs);
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
      await this.tunnels.get(conn)?.proxy?.kill();
    }
    this.conn = undefined;
    // The target first, then the hops it ran through (each closes its own predecessors).
    await this.via?.close();
    if (this.status.value !== 'closed') this.status.set('closed', 'closed');
  }
}

/** RFC 4254 §5.1's reason codes, which ssh2 gives as a number beside the server's own (often terse) text. */
const CHANNEL_OPEN_FAILURES: Readonly<Record<number, string>> = {
  1: 'administratively prohibited: the jump host does not allow forwarding (AllowTcpForwarding)',
  2: 'connect failed: the jump host cannot reach it',
  3: 'unknown channel type',
  4: 'resource shortage',
};

/** What a ProxyCommand said and how it ended, for the error that reports a failed or lost connection. */
function proxyReport(line: string, proxy: ProxyProcess): string {
  const stderr = proxy.stderr();
  const status = proxy.exitStatus();
  if (status === undefined && !stderr) return '';
  return `; ProxyCommand \`${line}\`${status === undefined ? '' : ` ${status}`}${stderr ? `: ${stderr}` : ''}`;
}
