/**
 * The session-channel queue of one SSH connection. OpenSSH refuses more than MaxSessions channels per
 * connection (10 by default) and says so only by failing the channel open ("open failed"), so commands
 * queue for a slot here instead of failing: ChannelSlots is a counting semaphore whose limit shrinks to what
 * the server actually accepted, and `openExecChannel` waits for a slot, asks for the exec channel and, when
 * the server refuses it, retries at the head of the queue (waiting for one of our channels to close once the
 * limit has shrunk). It
 * also tells "the command never reached the server" (NotSentError, safe to retry on a new connection) apart
 * from failures after the exec request may have been sent (never retried, so nothing runs twice).
 */
import type { Client, ClientChannel } from 'ssh2';
import { ConnectionLostError, TransportError } from './types.js';

/** How long a refused channel open waits for one of our channels to end before it is retried. */
const RETRY_AFTER_REFUSAL_MS = 100;

/** The server refused the channel or the connection went away before the exec request was sent. */
export class NotSentError extends Error {
  constructor(readonly error: TransportError) {
    super(error.message);
  }
}

/** Slots for exec channels on one connection: a counting semaphore whose limit can shrink. */
export class ChannelSlots {
  inUse = 0;
  /** Channels that were open and have ended (slots given back unused do not count): see openExecChannel. */
  ended = 0;
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

  /** An open channel has ended: counts it and frees its slot. */
  channelEnded(): void {
    this.ended++;
    this.release();
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

export interface ActiveRun {
  /** Called when the connection is lost while this command runs. */
  onLost(err: TransportError): void;
}

/** One live ssh2 connection with its channel slots and running commands. */
export interface Connection {
  client: Client;
  slots: ChannelSlots;
  active: Set<ActiveRun>;
  gone: boolean;
}

/** Names the host in error messages: the inventory name and `host:port`. */
export interface ConnectionLabel {
  name: string;
  address: string;
}

function isChannelOpenFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return typeof (err as { reason?: unknown }).reason === 'number' || /Channel open failure/i.test(err.message);
}

/** Waits `ms`; an abort ends the wait early (the caller checks the signal afterwards). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
 * Takes a channel slot and opens an exec channel for `line` on `conn`. Resolves null when `signal` aborted
 * before anything was sent; the slot is then already given back. On success the caller owns the slot and
 * must release it when the channel is done. Throws NotSentError when the command certainly did not reach
 * the server, TransportError otherwise.
 */
export async function openExecChannel(
  conn: Connection,
  line: string,
  signal: AbortSignal | undefined,
  label: ConnectionLabel,
): Promise<ClientChannel | null> {
  let refusalsWithNothingOpen = 0;
  let endedAtLastRefusal: number | undefined;
  let front = false;
  for (;;) {
    try {
      await conn.slots.acquire(signal, front);
    } catch (err) {
      if (signal?.aborted) return null;
      throw new NotSentError(
        err instanceof TransportError ? err : new TransportError(String(err), label.name, line, err),
      );
    }
    if (signal?.aborted) {
      conn.slots.release();
      return null;
    }
    try {
      return await new Promise<ClientChannel>((resolve, reject) => {
        try {
          conn.client.exec(line, (err, ch) => {
            if (err) return reject(err);
            watchExit(ch);
            resolve(ch);
          });
        } catch (err) {
          reject(err);
        }
      });
    } catch (err) {
      conn.slots.release();
      if (conn.gone) {
        const lost = new ConnectionLostError(
          `${label.name}: connection to ${label.address} lost`,
          label.name,
          line,
          err,
        );
        // "Unable to exec": the exec request may have reached the server; do not run it twice.
        if (err instanceof Error && /Unable to exec/.test(err.message)) throw lost;
        throw new NotSentError(lost);
      }
      if (!isChannelOpenFailure(err)) {
        throw new TransportError(
          `${label.name}: cannot start \`${line}\`: ${(err as Error).message}`,
          label.name,
          line,
          err,
        );
      }
      // The server refused a session (OpenSSH MaxSessions). That can be transient: sshd frees a session only
      // once it has processed our close of its channel, which may arrive in the same batch as this open, so
      // shrinking the limit on every refusal ratchets it down for good (10 parallel pollers fell to 3). Shrink
      // it to what we have open only when a retry is refused with none of our channels ended in between; then
      // try again at the head of the queue. The retry waits for one of our channels to end or 100 ms first:
      // retried at once, it can meet the same not-yet-freed session on a loaded server and shrink the limit
      // for the rest of the connection (seen under CI load: 10 fell to 9).
      if (endedAtLastRefusal === conn.slots.ended)
        conn.slots.limit = Math.max(1, Math.min(conn.slots.limit, conn.slots.inUse));
      endedAtLastRefusal = conn.slots.ended;
      front = true;
      if (conn.slots.inUse > 0) await conn.slots.nextReleaseOr(RETRY_AFTER_REFUSAL_MS);
      if (conn.slots.inUse === 0) {
        refusalsWithNothingOpen++;
        if (refusalsWithNothingOpen > 8) {
          throw new NotSentError(
            new TransportError(
              `${label.name}: ${label.address} refuses to open a session channel: ${(err as Error).message}`,
              label.name,
              line,
              err,
            ),
          );
        }
        await sleep(Math.min(2000, 50 * 2 ** refusalsWithNothingOpen), signal);
      } else {
        refusalsWithNothingOpen = 0;
      }
    }
  }
}

/**
 * A channel's exit status, listened for from the moment the channel exists. ssh2 parses every packet of
 * one TCP read in one go: for a quick command the exec reply, its output, `exit-status` and the close can
 * arrive together, and the exit event fires before the caller (a microtask later) has attached its
 * listeners — the output waits in the stream, the exit status would be lost (seen against real sshd).
 */
const exits = new WeakMap<ClientChannel, { code: number | null; signal: string | null }>();

function watchExit(ch: ClientChannel): void {
  ch.once('exit', (code: number | null, sig?: string) => {
    exits.set(
      ch,
      typeof code === 'number'
        ? { code, signal: null }
        : { code: null, signal: sig ? (sig.startsWith('SIG') ? sig : `SIG${sig}`) : null },
    );
  });
}

/** The exit status the channel reported, whenever it came; undefined when none came (yet). */
export function exitOf(ch: ClientChannel): { code: number | null; signal: string | null } | undefined {
  return exits.get(ch);
}
