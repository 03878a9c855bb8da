/**
 * Runs one built command as a client of the host's master: `ssh … alias -- LINE`, LINE one argv word, so the
 * remote shell gets exactly the line the ssh2 transport sends. stdin is written and closed, stdout and stderr
 * stream to the callbacks (held back by pausing the client's pipes under backpressure), and the client's exit
 * status is the command's.
 *
 * OpenSSH's client cannot send a signal request, so timeout and cancel kill the remote process group
 * themselves: the line is prefixed with `printf 'L20PID<nonce>:%s\n' "$$" >&2`, the remote shell's pid (sshd
 * setsid()s it: the session's process group), which is cut out of stderr here, byte for byte, and a stop runs
 * `kill -TERM -- -PID` over the same master (sudo relays it: see the sudo wrapper in quote.ts).
 *
 * Exit 255 is also ssh's own failure: a client whose master was gone falls back to ProxyCommand=false and
 * fails at the key exchange (NOT_SENT: the command never ran, safe to retry); otherwise, when the master no
 * longer answers, the connection was lost while the command ran. A command that exits 255 itself stays 255.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { BuiltCommand } from './quote.js';
import {
  DEFAULT_MAX_BUFFER_BYTES,
  StreamCollector,
  finishedResult,
  notStartedResult,
  outputGate,
  pauseStreams,
  tailLines,
} from './output.js';
import type { ChannelSlots } from './ssh-channel-queue.js';
import { runSsh } from './openssh-master.js';
import { scrub } from '../util/secrets.js';
import { ConnectionLostError, TransportError, type RunOptions, type RunResult } from './types.js';

/** What ssh prints when a client found no master and its fallback connection met ProxyCommand=false. */
const NOT_SENT = /kex_exchange_identification/;
/** Stderr held back while looking for the pid marker; past this the marker is taken as lost (shown as is). */
const MARKER_SEARCH_BYTES = 64 * 1024;
/** After the remote kill, how long the client gets to end before it is killed here. */
const STOP_GRACE_MS = 5000;

/** The command never reached the host (no master answered): the caller may reconnect and retry. */
export class MuxNotSentError extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

export interface MuxTarget {
  hostName: string;
  binary: string;
  /** `ssh … alias` as a client of the master (muxClientArgs). */
  clientArgs: readonly string[];
  slots: ChannelSlots;
  /** Whether the master still answers: asked when a client exits 255. */
  masterAlive(): Promise<boolean>;
}

/**
 * Finds `L20PID<nonce>:<pid>\n` in the stderr stream, reports the pid and passes everything else on
 * unchanged. Only text before the marker (a login shell's noise) is held back, and at most MARKER_SEARCH_BYTES.
 */
class PidMarker {
  private pending: Buffer = Buffer.alloc(0);
  private done = false;

  constructor(
    private readonly prefix: Buffer,
    private readonly onPid: (pid: number) => void,
    private readonly out: (chunk: Buffer) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.done) {
      this.out(chunk);
      return;
    }
    this.pending = Buffer.concat([this.pending, chunk]);
    const at = this.pending.indexOf(this.prefix);
    const nl = at === -1 ? -1 : this.pending.indexOf(0x0a, at + this.prefix.length);
    if (nl !== -1) {
      const pid = Number(this.pending.subarray(at + this.prefix.length, nl).toString('latin1'));
      this.done = true;
      const before = this.pending.subarray(0, at);
      const after = this.pending.subarray(nl + 1);
      this.pending = Buffer.alloc(0);
      if (before.length > 0) this.out(before);
      if (Number.isInteger(pid) && pid > 1) this.onPid(pid);
      if (after.length > 0) this.out(after);
    } else if (this.pending.length > MARKER_SEARCH_BYTES) {
      this.end();
    }
  }

  end(): void {
    this.done = true;
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    if (rest.length > 0) this.out(rest);
  }
}

/** Runs `built` over the master; see the top of this file. */
export async function runOverMaster(target: MuxTarget, built: BuiltCommand, options: RunOptions): Promise<RunResult> {
  const signal = options.signal;
  const line = built.line;
  try {
    await target.slots.acquire(signal);
  } catch (err) {
    if (signal?.aborted) return notStartedResult(line, 'cancelled');
    throw err;
  }
  try {
    return await runInSlot(target, built, options);
  } finally {
    target.slots.release();
  }
}

function runInSlot(target: MuxTarget, built: BuiltCommand, options: RunOptions): Promise<RunResult> {
  const line = built.line;
  const signal = options.signal;
  if (signal?.aborted) return Promise.resolve(notStartedResult(line, 'cancelled'));
  const nonce = randomBytes(6).toString('hex');
  const markerLine = new RegExp(`L20PID${nonce}:\\d+\\n`);
  const remote = `printf 'L20PID${nonce}:%s\\n' "$$" >&2; ${line}`;
  const maxBuffer = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
  const stdout = new StreamCollector(maxBuffer, options.onStdout);
  const stderr = new StreamCollector(maxBuffer, options.onStderr);
  let sshWords = ''; // the tail of stderr as ssh wrote it, for telling ssh's failures apart
  const started = Date.now();
  const child = spawn(target.binary, [...target.clientArgs, '--', remote], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // no terminal: ssh can never prompt, and a Ctrl-C in the terminal is ours to pass on
  });
  options.onStart?.(line);

  return new Promise<RunResult>((resolve, reject) => {
    let remotePid: number | undefined;
    let stopped: 'timedOut' | 'cancelled' | null = null;
    let killSent = false;
    let graceTimer: NodeJS.Timeout | undefined;
    // stderr is held back too, but only once the pid marker is through: a cancel needs the pid.
    let markerSeen = false;
    let paused = false;
    const flow = pauseStreams([child.stdout, child.stderr]);
    const gate = outputGate(
      {
        stop: () => {
          paused = true;
          if (markerSeen) flow.stop();
          else child.stdout.pause();
        },
        start: () => {
          paused = false;
          flow.start();
        },
      },
      options.backpressure,
    );

    const killRemote = () => {
      if (killSent || remotePid === undefined) return;
      killSent = true;
      const kill = [...target.clientArgs, '--', `kill -TERM -- -${remotePid}`];
      void runSsh(target.binary, kill, 10_000).catch(() => undefined);
    };
    const stop = (why: 'timedOut' | 'cancelled') => {
      if (stopped) return;
      stopped = why;
      killRemote(); // or as soon as the pid is known
      // A host that never lets the command go must not hang the caller.
      graceTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    };
    const marker = new PidMarker(
      Buffer.from(`L20PID${nonce}:`),
      (pid) => {
        remotePid = pid;
        markerSeen = true;
        if (paused) child.stderr.pause();
        if (stopped) killRemote();
      },
      (chunk) => stderr.push(chunk),
    );
    const timeoutMs = options.timeoutMs ?? 0;
    const timeoutTimer = timeoutMs > 0 ? setTimeout(() => stop('timedOut'), timeoutMs) : undefined;
    const onAbort = () => stop('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      gate.afterChunk();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      sshWords = (sshWords + chunk.toString('latin1')).slice(-4096);
      marker.push(chunk);
      gate.afterChunk();
    });
    child.stdin.on('error', () => undefined); // a command that exits without reading its stdin
    let spawnError: Error | undefined;
    child.once('error', (err) => (spawnError = err));
    child.once('close', (code) => {
      if (timeoutTimer) clearTimeout(timeoutTimer);
      if (graceTimer) clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
      marker.end();
      const settle = (exitCode: number | null) =>
        resolve(finishedResult(line, started, stdout, stderr, { exitCode, signal: null }, stopped));
      if (spawnError) {
        const why = `${target.hostName}: cannot run ${target.binary}: ${spawnError.message}`;
        reject(new TransportError(why, target.hostName, line, spawnError));
        return;
      }
      if (stopped) return settle(code === 255 || code === null ? null : code);
      // A client killed here by someone else (code null) is judged like ssh's own failure.
      if (code !== 255 && code !== null) return settle(code);
      if (NOT_SENT.test(sshWords) && remotePid === undefined) {
        stdout.finish();
        stderr.finish();
        reject(new MuxNotSentError(tailLines(sshWords, 3).join(' / ')));
        return;
      }
      void target.masterAlive().then((alive) => {
        if (alive) return settle(255);
        stdout.finish();
        stderr.finish();
        const said = tailLines(scrub(sshWords.replace(markerLine, '')), 3).join(' / ');
        const why = `${target.hostName}: connection lost while running \`${line}\`${said ? `: ${said}` : ''}`;
        reject(new ConnectionLostError(why, target.hostName, line));
      });
    });
    if (built.stdin !== undefined) child.stdin.end(built.stdin);
    else child.stdin.end();
  });
}
