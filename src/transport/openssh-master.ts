/**
 * The life cycle of one OpenSSH ControlMaster: start, readiness, death, exit.
 *
 * The target's master is started as `ssh -M -o ControlPersist=Ns … alias -- 'echo l20-ready && exec cat'`:
 * once connected, ssh puts the master in the background (its own session, stdio on /dev/null) and the process
 * we started becomes the master's first client, running `cat` on the host. That client is the watch:
 * - "l20-ready" on its stdout says the master is up (then `-O check` confirms the socket and names its pid);
 * - its exit says the master is gone (the master's connection dropped, it was killed, or it was told to exit);
 * - it holds a session, so the master never idles out while we live; when this process dies, even by kill -9,
 *   the client's stdin closes, `cat` ends, and the master exits by itself ControlPersist seconds later.
 * A jump host's master is started with -N instead (a bastion may allow no shell); the target's master
 * reaches through it with `ssh -W`, so the hop stays busy exactly as long as the target's master lives.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { controlArgs, masterArgs, type SshDestination } from './openssh-args.js';
import { sleep } from './ssh-channel-queue.js';
import { processRunning } from '../util/process-running.js';

export interface SshProcessResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs ssh to the end with `args`; the child gets a session of its own, so it can never open a terminal. */
export function runSsh(binary: string, args: readonly string[], timeoutMs = 30_000): Promise<SshProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A master that did not come up: ssh's exit status and its words (raw: the caller cleans what it shows). */
export class MasterStartError extends Error {
  constructor(
    readonly stderr: string,
    readonly code: number | null,
  ) {
    super(stderr.trim() === '' ? `ssh exited ${code ?? 'by a signal'}` : stderr.trim());
    this.name = 'MasterStartError';
  }
}

const READY = 'l20-ready';
/** The watch's remote command: says the master is up, then holds the session until our end closes stdin. */
const WATCH_COMMAND = `echo ${READY} && exec cat >/dev/null`;

export class OpensshMaster {
  /** The master's pid, from `-O check`, once it is up. */
  pid: number | undefined;
  private watch: ChildProcess | undefined;
  private goneListeners: Array<(why: string) => void> = [];
  private exiting = false;

  constructor(
    private readonly binary: string,
    readonly dest: SshDestination,
    readonly controlPath: string,
    private readonly idleExitS: number,
    private readonly watched: boolean,
  ) {}

  /** Called once when a watched master goes away (not after exit()). */
  onGone(listener: (why: string) => void): void {
    this.goneListeners.push(listener);
  }

  /** Connects; rejects with MasterStartError (ssh's words) when ssh gives up, or on timeout. */
  async start(timeoutMs: number): Promise<void> {
    // A master killed without its clean-up leaves its socket, and ssh -M will not replace one.
    rmSync(this.controlPath, { force: true });
    this.exiting = false;
    if (this.watched) await this.startWatched(timeoutMs);
    else {
      const args = [...masterArgs(this.dest, this.controlPath, this.idleExitS), '-N', this.dest.alias];
      const r = await runSsh(this.binary, args, timeoutMs);
      if (r.code !== 0) throw new MasterStartError(r.stderr, r.code);
    }
    const pid = await this.checkPid();
    if (pid === undefined) {
      await this.exit();
      throw new MasterStartError(`ssh connected but its control socket ${this.controlPath} does not answer`, null);
    }
    this.pid = pid;
  }

  private startWatched(timeoutMs: number): Promise<void> {
    const args = [...masterArgs(this.dest, this.controlPath, this.idleExitS), this.dest.alias, '--', WATCH_COMMAND];
    this.watch?.kill('SIGKILL'); // an earlier watch whose master stopped answering
    const child = spawn(this.binary, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.watch = child;
    return new Promise<void>((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      let ready = false;
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        stderr += `\ntimed out after ${timeoutMs} ms waiting for the connection`;
      }, timeoutMs);
      child.stdout.on('data', (c: Buffer) => {
        if (ready) return;
        stdout += c.toString('utf8');
        if (stdout.includes(`${READY}\n`)) {
          ready = true;
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr.on('data', (c: Buffer) => {
        if (stderr.length < 64 * 1024) stderr += c.toString('utf8');
      });
      child.stdin.on('error', () => undefined); // the watch may be gone before we close its stdin
      child.once('error', (err) => {
        clearTimeout(timer);
        if (!ready) reject(new MasterStartError(`cannot run ${this.binary}: ${err.message}`, null));
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        if (!ready) {
          reject(new MasterStartError(stderr, code));
          return;
        }
        if (this.watch !== child) return; // a watch already replaced: its master is not this one
        this.watch = undefined;
        if (this.exiting) return;
        const why =
          stderr
            .trim()
            .split('\n')
            .filter((l) => l.trim() !== '')
            .slice(-1)[0] ?? 'the master exited';
        for (const l of this.goneListeners) l(why.trim());
      });
    });
  }

  /** The running master's pid from `-O check`, or undefined when its socket does not answer. */
  private async checkPid(): Promise<number | undefined> {
    const args = controlArgs(this.dest, this.controlPath, 'check');
    const r = await runSsh(this.binary, args, 10_000).catch(() => undefined);
    if (r === undefined || r.code !== 0) return undefined;
    const m = /pid=(\d+)/.exec(r.stderr);
    return m?.[1] !== undefined ? Number(m[1]) : undefined;
  }

  /** Whether the master still answers on its socket (and, when watched, its watch still runs). */
  async check(): Promise<boolean> {
    if (this.watched && this.watch === undefined) return false;
    return (await this.checkPid()) !== undefined;
  }

  /** `-O exit`, then waits for the master and its watch to be gone (killing what is left after 3 s). */
  async exit(): Promise<void> {
    this.exiting = true;
    const watch = this.watch;
    const pid = this.pid;
    await runSsh(this.binary, controlArgs(this.dest, this.controlPath, 'exit'), 5000).catch(() => undefined);
    const deadline = Date.now() + 3000;
    const watchGone = () => watch === undefined || watch.exitCode !== null || watch.signalCode !== null;
    while (Date.now() < deadline && !((pid === undefined || !processRunning(pid)) && watchGone())) await sleep(20);
    if (pid !== undefined && processRunning(pid)) process.kill(pid, 'SIGKILL');
    if (!watchGone()) watch?.kill('SIGKILL');
    if (watch && !watchGone()) await new Promise((r) => watch.once('close', r));
    rmSync(this.controlPath, { force: true });
    this.watch = undefined;
    this.pid = undefined;
  }
}
