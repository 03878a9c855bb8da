/**
 * Runs one built command over an SSH connection: takes an exec channel from the channel queue, feeds it
 * stdin, streams stdout/stderr to the caller's callbacks while keeping a bounded tail, and settles the run
 * once. Timeout and cancellation send a TERM signal request (OpenSSH ≥ 7.9 signals the session's process
 * group) and close the channel, so the remote process does not outlive the run; a connection lost while the
 * command runs rejects it with TransportError, because whether it finished on the server is unknown. Kept
 * apart from SshHost so the connection life cycle and the per-command state machine can be read separately.
 */
import type { ClientChannel } from 'ssh2';
import type { BuiltCommand } from './quote.js';
import {
  DEFAULT_MAX_BUFFER_BYTES,
  StreamCollector,
  finishedResult,
  notStartedResult,
  outputGate,
  pauseStreams,
} from './output.js';
import { windowValve } from './ssh-window.js';
import { yieldWhenBusy } from './ssh-slice.js';
import { exitOf, openExecChannel, type ActiveRun, type Connection, type ConnectionLabel } from './ssh-channel-queue.js';
import { ConnectionLostError, type RunOptions, type RunResult } from './types.js';

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

/**
 * Runs `built` on `conn`. Throws NotSentError (from the channel queue) when the command never reached the
 * server, so the caller may retry it on a new connection.
 */
export async function execOnConnection(
  conn: Connection,
  built: BuiltCommand,
  options: RunOptions,
  label: ConnectionLabel,
): Promise<RunResult> {
  const channel = await openExecChannel(conn, built.line, options.signal, label);
  if (!channel) return notStartedResult(built.line, 'cancelled');
  return driveChannel(conn, channel, built, options, label.name);
}

function driveChannel(
  conn: Connection,
  channel: ClientChannel,
  built: BuiltCommand,
  options: RunOptions,
  hostName: string,
): Promise<RunResult> {
  const line = built.line;
  const signal = options.signal;
  const started = Date.now();
  const maxBuffer = options.maxBufferBytes ?? DEFAULT_MAX_BUFFER_BYTES;
  const stdout = new StreamCollector(maxBuffer, options.onStdout);
  const stderr = new StreamCollector(maxBuffer, options.onStderr);
  // The channel is open: the command leaves the queue and starts now.
  options.onStart?.(line);

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
      conn.slots.channelEnded();
      valve?.forget();
    };
    const finish = () => {
      if (done) return;
      cleanup();
      // The status may have come before the listener below was attached (ssh-channel-queue.ts, exitOf).
      const early = exitOf(channel);
      if (exitCode === null && exitSignal === null && early) ({ code: exitCode, signal: exitSignal } = early);
      resolve(finishedResult(line, started, stdout, stderr, { exitCode, signal: exitSignal }, stopped));
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
        reject(new ConnectionLostError(`${err.message} while running \`${line}\``, hostName, line, err));
      },
    };
    conn.active.add(active);

    // Held back at the SSH window where ssh2 allows it (ssh-window.ts), else by pausing the streams.
    const valve = options.backpressure ? windowValve(channel) : undefined;
    const gate = outputGate(valve ?? pauseStreams([channel, channel.stderr]), options.backpressure);
    channel.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      gate.afterChunk();
      yieldWhenBusy(conn.client);
    });
    channel.stderr.on('data', (chunk: Buffer) => {
      stderr.push(chunk);
      gate.afterChunk();
      yieldWhenBusy(conn.client);
    });
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
        // A paused stderr still holds output: its 'end' comes after the gate resumes it.
        setImmediate(() => {
          if (!done && !conn.gone && !gate.waiting()) finish();
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
