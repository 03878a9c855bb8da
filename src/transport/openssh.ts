/**
 * OpensshHost: a Host over the system `ssh`, with one ControlMaster per host (and one per jump host), for
 * what the ssh2 transport cannot do: the user's own ~/.ssh/config applies through `sshAlias` (certificates,
 * Match exec, GSSAPI, PKCS#11, FIDO keys, their ProxyCommand), while the host-key policy stays ours
 * (openssh-host-key.ts) and nothing ever prompts (BatchMode, and no ssh child has a terminal).
 *
 * Here: the connection life cycle (connect, backoff, loss, close) and the Host methods, as in SshHost. Beside
 * it: openssh-args.ts (the argv), openssh-master.ts (a master's start, watch and exit), openssh-exec.ts (one
 * command), openssh-host-key.ts (unknown / changed keys). Control sockets live in the state directory's
 * `ssh/` (0700), named by a short hash: a socket path is limited to ~104 bytes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir } from '../engine/session-log.js';
import { buildCommand, type BuiltCommand } from './quote.js';
import { DEFAULT_BACKUP_ROOT, backupRunId, readFileVia, writeFileAtomicVia } from './files.js';
import { tailLines } from './output.js';
import { checkedSshName, muxClientArgs, type SshDestination } from './openssh-args.js';
import { MasterStartError, OpensshMaster } from './openssh-master.js';
import { MuxNotSentError, runOverMaster } from './openssh-exec.js';
import { acceptPresentedKey, isHostKeyRefusal } from './openssh-host-key.js';
import { ChannelSlots } from './ssh-channel-queue.js';
import { Reconnect, SudoPasswordProbe, probeFreshConnectionWith, runConnected } from './host-lifecycle.js';
import { HostKeyVerifier } from './ssh-host-key.js';
import type { SshHostOptions } from './ssh-options.js';
import { ConnectionState, type StateListener } from './state-emitter.js';
import {
  HostKeyError,
  TransportError,
  type Command,
  type Host,
  type RunOptions,
  type RunResult,
  type WriteFileOptions,
  type WriteFileResult,
} from './types.js';
import { registerSecret } from '../util/secrets.js';

export interface OpensshHostOptions extends SshHostOptions {
  /** The name given to `ssh`, so the user's own ~/.ssh/config applies (the inventory's address). */
  sshAlias: string;
  /**
   * Jump hosts in order, the first reached directly, each with its own host-key policy (the same field H1
   * adds to SshHostOptions; declared here too so this transport stands on its own). Empty: `jump: none`.
   */
  jump?: readonly SshHostOptions[];
  /** Where the control sockets go (default: the state directory's `ssh/`, created 0700). */
  controlDir?: string;
  /** The ssh client (default `ssh` on PATH). */
  sshBinary?: string;
  /**
   * What the inventory itself sets, given to ssh as -p / -l / IdentityFile; everything else ssh resolves from
   * the user's config (our own resolution of it may not see what Match exec or an Include decides).
   */
  inventory?: { port?: number; user?: string; identityFiles?: readonly string[] };
  /** `ssh -F`: this config file instead of ~/.ssh/config (tests). */
  sshConfigFile?: string;
  /** ControlPersist: how long a master with no session left lives on, e.g. after this process died (default 30 s). */
  idleExitS?: number;
}

const DEFAULT_IDLE_EXIT_S = 30;
let instances = 0;

/** One master with what it needs to be started again and judged. */
interface Leg {
  master: OpensshMaster;
  verifier: HostKeyVerifier;
}

export class OpensshHost implements Host {
  readonly name: string;
  readonly address: string;
  private readonly opts: OpensshHostOptions;
  private readonly binary: string;
  private readonly dir: string;
  /** Unique to this object: two hosts (or a probe) never share a socket. */
  private readonly stem: string;
  private readonly defaultBackupDir: string;
  private readonly hops: Leg[];
  private readonly target: Leg;
  private readonly slots: ChannelSlots;
  private readonly status = new ConnectionState();
  private live: OpensshMaster | undefined;
  private readonly reconnect: Reconnect<OpensshMaster>;
  private permanentError: HostKeyError | undefined;
  private closedByUser = false;
  private readonly sudo: SudoPasswordProbe;

  constructor(options: OpensshHostOptions) {
    this.opts = options;
    this.name = options.name;
    this.address = `${options.host}:${options.port ?? 22}`;
    this.binary = options.sshBinary ?? 'ssh';
    this.dir = options.controlDir ?? join(stateDir(), 'ssh');
    const seed = `${process.pid}:${instances++}:${options.name}:${randomBytes(8).toString('hex')}`;
    this.stem = createHash('sha256').update(seed).digest('base64url').slice(0, 16);
    this.defaultBackupDir = options.defaultBackupDir ?? `${DEFAULT_BACKUP_ROOT}/${backupRunId()}`;
    // One of the master's sessions is its watch (openssh-master.ts).
    this.slots = new ChannelSlots(Math.max(1, (options.maxSessions ?? 10) - 1));
    const idle = options.idleExitS ?? DEFAULT_IDLE_EXIT_S;
    let via: { controlPath: string; alias: string } | undefined;
    this.hops = (options.jump ?? []).map((hop, i) => {
      const dest = this.destination(hop, checkedSshName(hop.host, 'the jump host'), `h${i}`, via, {
        ...(hop.port !== undefined ? { port: hop.port } : {}),
        user: hop.user,
        ...(hop.identityFilesDefaulted ? {} : { identityFiles: hop.identityFiles ?? [] }),
      });
      const leg = this.leg(dest, `h${i}`, idle, false);
      via = { controlPath: leg.master.controlPath, alias: dest.alias };
      return leg;
    });
    const inv = options.inventory ?? {};
    const target = this.destination(options, checkedSshName(options.sshAlias, 'the ssh destination'), 't', via, {
      ...(inv.port !== undefined ? { port: inv.port } : {}),
      ...(inv.user !== undefined ? { user: inv.user } : {}),
      ...(inv.identityFiles !== undefined ? { identityFiles: inv.identityFiles } : {}),
    });
    // `jump: none` (an empty hop list) reaches the host directly whatever the user's config says.
    if (options.jump !== undefined && options.jump.length === 0) target.direct = true;
    this.target = this.leg(target, 't', idle, true);
    const master = this.target.master;
    master.onGone((why) => this.masterLost(master, why));
    this.reconnect = new Reconnect(options.reconnectBackoffMs ?? 1000);
    this.sudo = new SudoPasswordProbe(options.sudoPassword, (probe) => this.runBuilt(probe, {}));
    if (options.sudoPassword !== undefined) registerSecret(options.sudoPassword, 'sudo-password');
  }

  private destination(
    opts: SshHostOptions,
    alias: string,
    tag: string,
    via: { controlPath: string; alias: string } | undefined,
    set: Pick<SshDestination, 'port' | 'user' | 'identityFiles'>,
  ): SshDestination {
    return {
      alias,
      opts,
      ...set,
      sessionKnownHosts: join(this.dir, `${this.stem}.${tag}.kh`),
      ...(via ? { viaControlPath: via.controlPath, viaAlias: via.alias } : {}),
      ...(this.opts.sshConfigFile !== undefined ? { configFile: this.opts.sshConfigFile } : {}),
    };
  }

  private leg(dest: SshDestination, tag: string, idle: number, watched: boolean): Leg {
    const port = dest.opts.port ?? 22;
    const address = `${dest.opts.host}:${port}`;
    return {
      master: new OpensshMaster(this.binary, dest, join(this.dir, `${this.stem}.${tag}`), idle, watched),
      verifier: new HostKeyVerifier(dest.opts.name, address, port, dest.opts, 'openssh'),
    };
  }

  /** See Host.lostBoundMs: ssh's ServerAlive settings come from the same options as SshHost's keepalives. */
  get lostBoundMs(): number {
    const interval = this.opts.keepaliveIntervalMs ?? 5000;
    if (interval <= 0) return this.opts.readyTimeoutMs ?? 20_000;
    const intervalMs = Math.max(1, Math.round(interval / 1000)) * 1000; // ssh counts whole seconds
    return intervalMs * ((this.opts.keepaliveCountMax ?? 3) + 1) + 1000;
  }

  knownHostKeys(): string[] {
    return this.target.verifier.knownFingerprints();
  }

  onStateChange(listener: StateListener): () => void {
    return this.status.onChange(listener);
  }

  async connect(): Promise<void> {
    this.closedByUser = false;
    this.permanentError = undefined; // an explicit connect re-checks the host key
    await this.ensureConnected(undefined, true);
  }

  private ensureConnected(signal?: AbortSignal, explicit = false): Promise<OpensshMaster> {
    if (this.closedByUser) {
      return Promise.reject(new TransportError(`${this.name}: the connection was closed`, this.name));
    }
    if (this.permanentError) return Promise.reject(this.permanentError);
    if (this.live) return Promise.resolve(this.live);
    return this.reconnect.attempt(() => this.openMasters(), signal, explicit);
  }

  private controlDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700); // sockets and session known_hosts: ours alone
  }

  private async openMasters(): Promise<OpensshMaster> {
    const userAt = `${this.opts.inventory?.user ?? this.opts.user}@${this.address}`;
    this.status.set('connecting', `connecting to ${userAt} (OpenSSH)`);
    try {
      this.controlDir();
      for (const hop of this.hops) {
        if (!(await hop.master.check())) await this.startLeg(hop, ' through');
      }
      await this.startLeg(this.target, '');
    } catch (err) {
      if (err instanceof HostKeyError) {
        this.permanentError = err;
        this.status.set('failed', err.message);
        throw err;
      }
      const e = err instanceof TransportError ? err : new TransportError(String(err), this.name, undefined, err);
      this.reconnect.failed();
      this.status.set('failed', e.message);
      throw e;
    }
    const master = this.target.master;
    this.live = master;
    this.reconnect.succeeded();
    this.status.set('connected', `connected to ${userAt} (OpenSSH)`);
    return master;
  }

  /**
   * Starts one master under our host-key policy: a pinned key is checked first; a key ssh refuses is put to
   * the verifier (which refuses, or asks and records), then the master is tried once more.
   */
  private async startLeg(leg: Leg, role: string): Promise<void> {
    const dest = leg.master.dest;
    const scratch = `${leg.master.controlPath}.scan`;
    const timeoutMs = (dest.opts.readyTimeoutMs ?? 20_000) + 5000;
    if (dest.opts.expectedFingerprint !== undefined) await acceptPresentedKey(this.binary, dest, leg.verifier, scratch);
    for (let attempt = 0; ; attempt++) {
      try {
        await leg.master.start(timeoutMs);
        return;
      } catch (err) {
        if (!(err instanceof MasterStartError)) throw err;
        const said = tailLines(err.stderr, 4).join(' / ');
        const address = `${dest.opts.host}:${dest.opts.port ?? 22}`;
        const where = `${dest.opts.name}: cannot connect${role} to ${dest.alias} (${address})`;
        if (!isHostKeyRefusal(err.stderr)) throw new TransportError(`${where}: ${said || err.message}`, this.name);
        if (attempt > 0) {
          const why = `${where}: ssh still refuses the host key our known_hosts accepts: ${said}`;
          throw new TransportError(why, this.name);
        }
        await acceptPresentedKey(this.binary, dest, leg.verifier, scratch);
      }
    }
  }

  private masterLost(master: OpensshMaster, why: string): void {
    if (this.live !== master) return;
    this.live = undefined;
    if (this.closedByUser) {
      this.status.set('closed', 'closed');
      return;
    }
    this.reconnect.lost();
    this.status.set('lost', `connection to ${this.address} lost: ${why}`);
  }

  async run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    const built = buildCommand(command, options, await this.sudo.passwordFor(options));
    return this.runBuilt(built, options);
  }

  private runBuilt(built: BuiltCommand, options: RunOptions): Promise<RunResult> {
    const exec = (master: OpensshMaster) => {
      const target = {
        hostName: this.name,
        binary: this.binary,
        clientArgs: muxClientArgs(master.dest, master.controlPath),
        slots: this.slots,
        masterAlive: () => master.check(),
      };
      return runOverMaster(target, built, options);
    };
    const notSent = (err: unknown, master: OpensshMaster) => {
      if (!(err instanceof MuxNotSentError)) return undefined;
      // No master answered the client: it is gone, whatever its watch has said so far.
      this.masterLost(master, err.detail || 'the master does not answer');
      const error = new TransportError(`${this.name}: no connection to ${this.address}: ${err.detail}`, this.name);
      return { error, canRetry: !this.closedByUser };
    };
    const connect = () => this.ensureConnected(options.signal);
    return runConnected(this.name, built.line, options.signal, connect, exec, notSent);
  }

  readFile(path: string, options: { sudo?: boolean } = {}): Promise<string> {
    return readFileVia(this, path, options);
  }

  writeFileAtomic(path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    return writeFileAtomicVia(this, path, content, options, this.defaultBackupDir);
  }

  async probeFreshConnection(timeoutMs: number): Promise<void> {
    // A sibling with the same options: its own masters (its own sockets), the same host-key policy.
    await probeFreshConnectionWith(new OpensshHost({ ...this.opts, readyTimeoutMs: timeoutMs }), this.name, timeoutMs);
  }

  async close(): Promise<void> {
    this.closedByUser = true;
    await this.reconnect.pending?.catch(() => undefined);
    this.live = undefined;
    for (const leg of [this.target, ...[...this.hops].reverse()]) {
      await leg.master.exit();
      rmSync(leg.master.dest.sessionKnownHosts, { force: true });
    }
    if (this.status.value !== 'closed') this.status.set('closed', 'closed');
  }
}
