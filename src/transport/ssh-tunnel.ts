/**
 * What an SshHost's connection runs over when it is not a plain TCP socket: a ProxyCommand child's stdio, or
 * (built by ssh.ts) a `forwardOut` channel of a jump host's connection. Also the handshake clock that lets one
 * readyTimeout cover a whole chain of hops, paused while the operator answers a host-key question.
 *
 * ProxyCommand is run as OpenSSH runs it (sshconnect.c ssh_proxy_connect): `$SHELL -c "exec CMD"` with the
 * tokens %h %p %r %n %% expanded and any other token refused. We use /bin/sh rather than $SHELL so the
 * behaviour does not depend on the operator's login shell. Token values are quoted as shell words (a HostName
 * from a config file must not become shell syntax); the usual values (names, addresses, numbers) need no
 * quotes and come out exactly as ssh writes them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Duplex } from 'node:stream';
import { percentExpand } from './ssh-config-parse.js';
import { quoteWord } from './quote.js';
import { clean, type CleanText } from '../util/sanitize.js';

/** The ProxyCommand that means "connect directly", as ssh reads it. */
export function isDirectProxyCommand(command: string | undefined): boolean {
  return command === undefined || command.trim().toLowerCase() === 'none';
}

export interface ProxyTokens {
  /** %h: the host name to reach (HostName). */
  host: string;
  /** %p */
  port: number;
  /** %r: the remote user. */
  user: string;
  /** %n: the name as given (the alias). */
  originalHost: string;
}

/**
 * ProxyCommand with OpenSSH's tokens expanded (%h %p %r %n %%); throws SshSyntaxError on any other token or a
 * trailing `%`, as ssh refuses them ("unknown key %x").
 */
export function expandProxyCommand(command: string, t: ProxyTokens): string {
  return percentExpand(command, {
    h: quoteWord(t.host),
    p: String(t.port),
    r: quoteWord(t.user),
    n: quoteWord(t.originalHost),
  });
}

/** Most of a ProxyCommand's stderr kept for error messages: its last lines are what explains a failure. */
const STDERR_KEEP = 4096;

/** A running ProxyCommand: its stdio as one Duplex for ssh2's `sock`. */
export interface ProxyProcess {
  readonly sock: Duplex;
  readonly pid: number | undefined;
  /** The last STDERR_KEEP bytes of its stderr, cleaned, trimmed; '' when it wrote none. */
  stderr(): CleanText;
  /** How it ended ("exited 255", "killed by SIGTERM", "could not start: …"), or undefined while running. */
  exitStatus(): string | undefined;
  /** Called once when it exits (or cannot start). */
  onExit(listener: (status: string) => void): void;
  /** TERM, then KILL after 2 s if it is still there. Resolves once it has exited. */
  kill(): Promise<void>;
}

export function spawnProxyCommand(expanded: string): ProxyProcess {
  const child: ChildProcess = spawn('/bin/sh', ['-c', `exec ${expanded}`], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let status: string | undefined;
  const listeners: Array<(status: string) => void> = [];
  const finish = (s: string) => {
    if (status !== undefined) return;
    status = s;
    for (const l of listeners.splice(0)) l(s);
  };
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-STDERR_KEEP);
  });
  // 'close' comes after stdio is drained, so the stderr above is complete when a failure is reported. A
  // background child of the command may hold stdio open for ever, though: then it ends shortly after 'exit'.
  child.once('exit', (code, signal) => {
    const how = signal ? `killed by ${signal}` : `exited ${code}`;
    const drained = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish(how);
    }, 500);
    child.once('close', () => {
      clearTimeout(drained);
      finish(how);
    });
  });
  child.once('error', (err) => finish(`could not start: ${err.message}`));
  const stdin = child.stdin!;
  const stdout = child.stdout!;
  stdin.on('error', () => undefined); // EPIPE once the child is gone: its exit is what gets reported
  // The stream ends when the child has exited, not when its stdout closes: whoever sees the connection end
  // then already has the exit status and the stderr to say why. Writes after its death are dropped for the
  // same reason (an EPIPE would be reported first, and say nothing).
  const sock = new Duplex({
    read: () => void stdout.resume(),
    write: (chunk: Buffer, _encoding, done) => {
      if (status !== undefined || !stdin.writable) return done();
      stdin.write(chunk, () => done());
    },
    final: (done) => {
      stdin.end();
      done();
    },
    destroy: (err, done) => {
      stdin.destroy();
      stdout.destroy();
      done(err);
    },
  });
  stdout.on('data', (d: Buffer) => {
    if (!sock.push(d)) stdout.pause();
  });
  listeners.push(() => {
    sock.push(null);
    sock.destroy();
  });
  return {
    sock,
    pid: child.pid,
    stderr: () => clean(stderr.trim()),
    exitStatus: () => status,
    onExit: (listener) => {
      if (status !== undefined) listener(status);
      else listeners.push(listener);
    },
    kill: () =>
      new Promise<void>((resolve) => {
        if (status !== undefined || child.pid === undefined) return resolve();
        listeners.push(() => {
          clearTimeout(hard);
          resolve();
        });
        const hard = setTimeout(() => child.kill('SIGKILL'), 2000);
        child.kill('SIGTERM');
      }),
  };
}

/**
 * One readyTimeout for a whole chain (every hop's handshake and the target's), paused while a host-key
 * question is open: the operator may take a while to answer and that time is not the network's.
 */
export class HandshakeClock {
  private usedMs = 0;
  private runningSince: number | undefined = Date.now();

  constructor(readonly limitMs: number) {}

  /** Milliseconds left (Infinity when there is no limit). */
  remaining(): number {
    if (this.limitMs <= 0) return Infinity;
    const running = this.runningSince === undefined ? 0 : Date.now() - this.runningSince;
    return Math.max(0, this.limitMs - this.usedMs - running);
  }

  pause(): void {
    if (this.runningSince === undefined) return;
    this.usedMs += Date.now() - this.runningSince;
    this.runningSince = undefined;
  }

  resume(): void {
    if (this.runningSince === undefined) this.runningSince = Date.now();
  }
}
