/**
 * The SSH face of one simulated server: an ssh2 Server on 127.0.0.1 (or the address `lab serve --address`
 * names) that accepts only the lab's
 * client key for the modelled user, limits concurrently open session channels per connection as
 * OpenSSH's MaxSessions does, and runs exec requests in the machine's shell. Keepalive global
 * requests are answered by ssh2 itself (REQUEST_FAILURE, like OpenSSH).
 */
import { setMaxListeners } from 'node:events';
// ssh2 is CommonJS: under Node's ESM loader only its default export carries Server and utils.
import ssh2, { type Connection, type ParsedKey, type ServerChannel, type Session } from 'ssh2';
import { runInteractive } from './interactive.js';
import { connectionRefused, managementCut, onManagementChange, UNREACHABLE_ATTEMPT_MS } from './tools/mgmt-path.js';
import type { Machine } from './model/types.js';
import type { Shell } from './shell/shell.js';
import { rng, type Rng } from './util/prng.js';

export interface LabHostStats {
  channelOpens: number;
  /** Connections dropped by fault injection (dropAt). */
  injectedDrops: number;
  execs: number;
  maxConcurrentSessions: number;
  refusedChannels: number;
}

export interface HostServerOptions {
  machine: Machine;
  shell: Shell;
  hostPrivateKey: string;
  clientPublicKey: ParsedKey;
  maxSessions: number;
  /** The local address to listen on. */
  address: string;
}

const { Server, utils } = ssh2;

/** Ubuntu sshd_config `AcceptEnv LANG LC_*`. */
const ACCEPT_ENV = /^(LANG|LC_[A-Z_]+)$/;

const CHUNK = 64 * 1024;

export class HostServer {
  readonly stats: LabHostStats = {
    channelOpens: 0,
    injectedDrops: 0,
    execs: 0,
    maxConcurrentSessions: 0,
    refusedChannels: 0,
  };
  private readonly server: InstanceType<typeof Server>;
  private readonly clients = new Set<Connection>();
  private concurrent = 0;
  private sessionSeq = 0;
  private readonly timing: Rng;
  private port = 0;
  /** The machine is down (rebooting): connections are refused. */
  private down = false;
  private closed = false;
  /** An armed fault: drop the connections at the `remaining`-th command from now. */
  private drop: { remaining: number; phase: 'before' | 'after' } | undefined;

  constructor(private readonly opts: HostServerOptions) {
    this.timing = rng(opts.machine.seed, opts.machine.hostname, 'timing');
    this.server = new Server({ hostKeys: [opts.hostPrivateKey] }, (client, info) =>
      this.onConnection(client, info.port),
    );
    // Management lost its address or link (netplan apply, ip): every session's TCP path is gone.
    onManagementChange(opts.machine, () => {
      if (managementCut(opts.machine)) for (const c of this.clients) c.end();
    });
  }

  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      this.server.once('error', onError);
      this.server.listen(port, this.opts.address, () => {
        this.server.off('error', onError);
        const addr = this.server.address();
        this.port = typeof addr === 'object' && addr ? addr.port : 0;
        resolve(this.port);
      });
    });
  }

  close(): Promise<void> {
    this.closed = true;
    for (const c of this.clients) c.end();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /**
   * The machine went down (reboot): every session ends with its connection, as when sshd and
   * the network go away, and the port refuses connections until resume().
   */
  suspend(): void {
    if (this.down || this.closed) return;
    this.down = true;
    for (const c of this.clients) c.end();
    this.server.close();
  }

  /** The machine is up again: listen on the same port. */
  async resume(): Promise<void> {
    if (!this.down || this.closed) return;
    this.down = false;
    // The port was ours a moment ago; retry briefly should the OS still hold it.
    for (let attempt = 0; ; attempt++) {
      try {
        await this.listen(this.port);
        return;
      } catch (e) {
        if (attempt >= 50 || this.closed) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /**
   * Fault injection: every connection of this host drops (as when a path goes away mid-session) at the
   * `n`-th command from now — `before` it runs (it never ran) or `after` it ran, before its output and exit
   * status reach the client (it ran, and the client cannot know). The port keeps listening, so a
   * reconnect works. One fault at a time; arming again replaces it.
   */
  dropAt(n: number, phase: 'before' | 'after'): void {
    if (!Number.isInteger(n) || n < 1) throw new Error(`dropAt: n must be a positive integer, got ${n}`);
    this.drop = { remaining: n, phase };
  }

  cancelDrop(): void {
    this.drop = undefined;
  }

  dropArmed(): boolean {
    return this.drop !== undefined;
  }

  /** True when this command is the one the armed fault waits for, in this phase (then the fault is spent). */
  private dropNow(phase: 'before' | 'after', counted: boolean): boolean {
    const d = this.drop;
    if (!d) return false;
    if (counted) d.remaining--;
    if (d.remaining > 0 || d.phase !== phase) return false;
    this.drop = undefined;
    this.stats.injectedDrops++;
    for (const c of this.clients) c.end();
    return true;
  }

  private onConnection(client: Connection, clientPort: number): void {
    if (this.down || this.closed) {
      client.on('error', () => undefined);
      client.end();
      return;
    }
    if (connectionRefused(this.opts.machine)) {
      // Management cut or firewalled: the client waits out its connect timeout. At 'max' only
      // modelled waits move the clock, and this wait is what lets a rollback timer come due.
      const clock = this.opts.machine.clock;
      if (clock.speed === 'max') void clock.sleep(UNREACHABLE_ATTEMPT_MS);
      client.on('error', () => undefined);
      client.end();
      return;
    }
    this.clients.add(client);
    const user = this.opts.machine.user.name;
    const allowed = this.opts.clientPublicKey;
    const allowedBlob = allowed.getPublicSSH();
    const open = new Set<Session>();
    const sessionId = ++this.sessionSeq;
    const signalTargets = new Map<number, (name: string) => void>();
    interceptSignals(client, signalTargets);
    client.on('authentication', (ctx) => {
      if (
        ctx.method === 'publickey' &&
        ctx.username === user &&
        ctx.key.algo === allowed.type &&
        ctx.key.data.equals(allowedBlob)
      ) {
        // Without a signature the client only asks whether the key would do.
        if (!ctx.signature || !ctx.blob) return ctx.accept();
        if (allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo)) return ctx.accept();
      }
      ctx.reject(['publickey']);
    });
    client.on('ready', () => {
      client.on('session', (accept, reject) => {
        if (open.size >= this.opts.maxSessions) {
          this.stats.refusedChannels++;
          reject();
          return;
        }
        const session = accept();
        this.stats.channelOpens++;
        open.add(session);
        this.concurrent++;
        this.stats.maxConcurrentSessions = Math.max(this.stats.maxConcurrentSessions, this.concurrent);
        session.once('close', () => {
          if (open.delete(session)) this.concurrent--;
        });
        this.onSession(session, clientPort, sessionId, signalTargets);
      });
    });
    client.on('error', () => undefined);
    client.on('close', () => {
      this.clients.delete(client);
      this.concurrent -= open.size;
      open.clear();
    });
  }

  private onSession(
    session: Session,
    clientPort: number,
    sessionId: number,
    signalTargets: Map<number, (name: string) => void>,
  ): void {
    const env: Record<string, string> = {};
    session.on('env', (accept, reject, info) => {
      if (ACCEPT_ENV.test(info.key)) {
        env[info.key] = info.val;
        accept?.();
      } else reject?.();
    });
    let pty = false;
    session.on('pty', (accept, _reject, info) => {
      pty = true;
      env.TERM = info.term || 'xterm';
      accept?.();
    });
    session.on('window-change', (accept) => accept?.());
    session.on('shell', (accept) => {
      const channel = accept();
      this.stats.execs++;
      channel.on('error', () => undefined);
      runInteractive({
        channel,
        pty,
        machine: this.opts.machine,
        shell: this.opts.shell,
        id: sessionId,
        env: { ...this.sessionEnv(env, clientPort, sessionId), ...(pty ? { TERM: env.TERM ?? 'xterm' } : {}) },
      });
    });
    session.on('subsystem', (_accept, reject) => reject());
    session.on('sftp', (_accept, reject) => reject());
    session.on('auth-agent', (_accept, reject) => reject());
    session.on('x11', (_accept, reject) => reject());
    session.on('exec', (accept, _reject, info) => {
      const channel = accept();
      const ac = new AbortController();
      // Every nested shell and command of a script listens on this one signal.
      setMaxListeners(0, ac.signal);
      let signalName: string | undefined;
      const localId = (channel as unknown as { incoming?: { id?: number } }).incoming?.id;
      if (localId !== undefined) {
        signalTargets.set(localId, (name) => {
          signalName = name;
          ac.abort();
        });
        channel.once('close', () => signalTargets.delete(localId));
      }
      void this.runExec(channel, info.command, { ...env }, clientPort, sessionId, ac, () => signalName);
    });
  }

  private sessionEnv(extra: Record<string, string>, clientPort: number, sessionId: number): Record<string, string> {
    const m = this.opts.machine;
    const u = m.user;
    return {
      LANG: 'C.UTF-8',
      USER: u.name,
      LOGNAME: u.name,
      HOME: u.home,
      PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games:/usr/local/games:/snap/bin',
      SHELL: '/bin/bash',
      MAIL: `/var/mail/${u.name}`,
      SSH_CLIENT: `${m.mgmt.clientAddress} ${clientPort} ${m.mgmt.sshPort}`,
      SSH_CONNECTION: `${m.mgmt.clientAddress} ${clientPort} ${m.mgmt.address} ${m.mgmt.sshPort}`,
      XDG_SESSION_ID: String(sessionId),
      XDG_SESSION_TYPE: 'tty',
      XDG_SESSION_CLASS: 'user',
      XDG_RUNTIME_DIR: `/run/user/${u.uid}`,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=/run/user/${u.uid}/bus`,
      ...extra,
    };
  }

  private async runExec(
    channel: ServerChannel,
    command: string,
    extraEnv: Record<string, string>,
    clientPort: number,
    sessionId: number,
    ac: AbortController,
    signalName: () => string | undefined,
  ): Promise<void> {
    this.stats.execs++;
    let closed = false;
    channel.once('close', () => {
      closed = true;
      ac.abort();
    });
    channel.on('error', () => undefined);
    // A command that ends by draining its stdin runs its first part at once, as sshd would start it.
    const drain = stdinDrain(command);
    if (drain) command = drain.first;
    const stdin = drain ? Buffer.alloc(0) : await collectStdin(channel, readsStdin(command));
    if (closed) return;
    if (this.dropNow('before', true)) return;
    const m = this.opts.machine;
    // Probes take 20–150 ms of modelled time (seeded), overlapping the interpreter's own time.
    const delay = m.clock.sleep(this.timing.int(20, 150), ac.signal);
    // Output the command produces while it runs goes out at once (system/live.ts).
    const live =
      (stream: NodeJS.WritableStream) =>
      (chunk: Buffer): Promise<void> =>
        writeAll(channel, stream, chunk, () => closed);
    // The session's shell, which `kill -- -PID` from another session ends (system/sessions.ts).
    let killedBy: string | undefined;
    const shell = m.system.sessions.start(m.user.uid, (signal) => {
      killedBy ??= signal;
      ac.abort();
    });
    let result;
    try {
      result = await this.opts.shell.run({
        commandLine: command,
        env: this.sessionEnv(extraEnv, clientPort, sessionId),
        stdin,
        signal: ac.signal,
        stdout: live(channel),
        stderr: live(channel.stderr),
        pid: shell.pid,
      });
    } catch (e) {
      // A lab bug must not leave the client waiting on a channel that never closes.
      result = {
        stdout: Buffer.alloc(0),
        stderr: Buffer.from(`l20-setup lab: internal error: ${(e as Error).message}\n`),
        exitCode: 255,
      };
    }
    await delay;
    if (closed) return;
    if (this.dropNow('after', false)) return;
    // An aborted run keeps what it printed before the signal, minus the interpreter's own notice.
    const stderr = ac.signal.aborted
      ? Buffer.from(result.stderr.toString('utf8').replace(/bash: execution aborted\n$/, ''))
      : result.stderr;
    await writeAll(channel, channel, result.stdout, () => closed);
    await writeAll(channel, channel.stderr, stderr, () => closed);
    if (closed) return;
    if (drain && !ac.signal.aborted && (drain.always || result.exitCode === 0)) {
      // `cat >/dev/null` until the client's EOF (or a signal); cat exits 0 at EOF.
      await untilEof(channel, ac.signal);
      if (closed) return;
      if (!ac.signal.aborted) result = { ...result, exitCode: 0 };
    }
    shell.end();
    const sig = killedBy ?? signalName();
    if (ac.signal.aborted && sig) channel.exit(sig, false, '');
    else channel.exit(result.exitCode);
    channel.end();
  }
}

/**
 * ssh2 hands `signal` requests to the Session only before exec starts; afterwards the request
 * targets the exec channel and ssh2 refuses it without telling anyone. The lab wraps the
 * connection's CHANNEL_REQUEST handler (ssh2 1.x internals, checked defensively) so a signal
 * for a running command reaches it, as sshd delivers it to the process.
 */
function interceptSignals(client: Connection, targets: Map<number, (name: string) => void>): void {
  const proto = (client as unknown as { _protocol?: { _handlers?: Record<string, unknown> } })._protocol;
  const handlers = proto?._handlers;
  const orig = handlers?.CHANNEL_REQUEST;
  if (!handlers || typeof orig !== 'function') return;
  handlers.CHANNEL_REQUEST = (
    p: unknown,
    recipient: number,
    type: string,
    wantReply: boolean,
    data: unknown,
  ): unknown => {
    const target = type === 'signal' ? targets.get(recipient) : undefined;
    if (target) {
      target(String(data).replace(/^SIG/, ''));
      return undefined;
    }
    return (orig as (...a: unknown[]) => unknown)(p, recipient, type, wantReply, data);
  };
}

/**
 * Commands that certainly read their input from stdin (a script for `bash -s`, a password for
 * `sudo -S`, file content for `install /dev/stdin` or `dd of=`): the lab waits for EOF, however long
 * the client takes, as the real command would.
 */
const READS_STDIN = /(^|[\s;&|(])(ba)?sh\s+-s(\s|$)|\bsudo\s+(-k\s+)?-S\b|\/dev\/stdin|\bdd\b[^|;&]*\bof=/;

export function readsStdin(command: string): boolean {
  return READS_STDIN.test(command);
}

/** `FIRST && exec cat >/dev/null` or `FIRST; cat >/dev/null`: a session held open until the client's EOF. */
const DRAIN = /^(?<first>[^]*\S)\s*(?<op>&&|;)\s*(?:exec\s+)?cat\s*>\s*\/dev\/null\s*$/;

/**
 * A command whose only reading of stdin is a final drain: FIRST runs without input (it must not read stdin
 * itself), then the drain holds the session until EOF; after `&&` only when FIRST succeeded.
 */
export function stdinDrain(command: string): { first: string; always: boolean } | undefined {
  const m = DRAIN.exec(command);
  const first = m?.groups?.first;
  if (first === undefined || readsStdin(first) || /\bcat\b|\bread\b/.test(first)) return undefined;
  return { first, always: m?.groups?.op === ';' };
}

/** Resolves at the channel's EOF or close, or when `signal` aborts. */
function untilEof(channel: ServerChannel, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      channel.off('end', done);
      channel.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    channel.on('data', () => undefined); // what the client sends is discarded, as cat >/dev/null does
    channel.once('end', done);
    channel.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Stdin is whatever the client sends up to EOF. Once data has arrived we wait for EOF: input sent in
 * pieces must never be cut. A client that sends neither data nor EOF (plain `ssh host cmd` from a
 * terminal keeps stdin open) gets the command run after 2 s of silence — unless the command reads
 * stdin for certain. The silence timer re-checks after one I/O poll (setImmediate), because on a
 * loaded machine a timer can fire before socket data that has already arrived is processed.
 */
function collectStdin(channel: ServerChannel, waitForEof: boolean): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    let timer: NodeJS.Timeout | undefined = waitForEof
      ? undefined
      : setTimeout(() => setImmediate(() => chunks.length === 0 && finish()), 2000);
    const finish = (): void => {
      if (done) return;
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      channel.off('data', onData);
      channel.off('end', finish);
      channel.off('close', finish);
      channel.on('data', () => undefined); // keep the window open for late input
      resolve(Buffer.concat(chunks));
    };
    const onData = (d: Buffer): void => {
      chunks.push(d);
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    channel.on('data', onData);
    channel.once('end', finish);
    channel.once('close', finish);
  });
}

/** Writes in chunks and waits for 'drain' whenever ssh2's window is full. */
async function writeAll(
  channel: ServerChannel,
  stream: NodeJS.WritableStream,
  data: Buffer,
  isClosed: () => boolean,
): Promise<void> {
  for (let off = 0; off < data.length; off += CHUNK) {
    if (isClosed()) return;
    if (!stream.write(data.subarray(off, off + CHUNK))) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          stream.removeListener('drain', done);
          channel.removeListener('close', done);
          resolve();
        };
        stream.once('drain', done);
        channel.once('close', done);
      });
    }
  }
}

export function parsePublicKey(openssh: string): ParsedKey {
  const parsed = utils.parseKey(openssh);
  if (parsed instanceof Error) throw parsed;
  return parsed;
}
