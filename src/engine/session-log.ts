/**
 * The audit trail: every command with host, exit code, duration and its full output, as JSONL in the
 * user's state directory. Output is written as it arrives, so a crash loses nothing already seen.
 * No secrets pass through here: sudo passwords travel on stdin only and are never part of an event, and the
 * output a host echoes a held secret in was scrubbed where it entered (transport/output.ts). Each line is
 * scrubbed once more as it is written, for what did not come from a host (a command line, a step's note).
 */
import { close, mkdirSync, openSync, write } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent } from './events.js';
import type { CleanText } from '../util/sanitize.js';
import { scrub } from '../util/secrets.js';

type OutputEvent = Extract<EngineEvent, { type: 'cmd.output' }>;

export function stateDir(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'l20-setup');
}

/** Bytes waiting for the disk before `whenWritable` asks the commands' output to wait. */
const QUEUE_BYTES = 1024 * 1024;
/** Each of the two write buffers: one is being written while events are copied into the other. */
const BUFFER_BYTES = 2 * 1024 * 1024;

/**
 * Each event is copied into a buffer the moment it is recorded, and one fs.write at a time writes the buffer
 * filled so far while the next one fills, so order is kept and a burst costs few system calls. The event's
 * JSON text dies at once: text that waited for the disk would outlive the young-generation collections, and
 * a host pouring out output would grow the old generation by tens of MB (so would WriteStream, which makes a
 * Buffer of every write). Only when both buffers are full does text queue, and then whenWritable holds the
 * output back. Output that arrives while a write runs joins the record before it when that record is output of
 * the same command and stream: a flooding host costs one record per write, not one per SSH packet, and no timer
 * is needed for it (an idle disk takes each record at once).
 */
export class SessionLog {
  private readonly fd: number;
  readonly path: string;
  private readonly buffers = [Buffer.allocUnsafe(BUFFER_BYTES), Buffer.allocUnsafe(BUFFER_BYTES)];
  /** The buffer events are copied into, and how full it is. */
  private current = 0;
  private filled = 0;
  /** Events that did not fit, in order (copied in before anything newer). */
  private overflow: string[] = [];
  private overflowBytes = 0;
  private writing = false;
  private closing: Promise<void> | undefined;
  private finishClose: (() => void) | undefined;
  private broken = false;
  private drained: { promise: Promise<void>; resolve: () => void } | undefined;
  /** The newest output record, still open to more lines of its command and stream while a write runs. */
  private pending: { event: OutputEvent; t: string; lines: CleanText[]; chars: number } | undefined;

  constructor(
    dir: string = join(stateDir(), 'sessions'),
    readonly runId: string = newRunId(),
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.path = join(dir, `${runId}.jsonl`);
    this.fd = openSync(this.path, 'a', 0o600);
  }

  record(event: EngineEvent): void {
    if (this.closing || this.broken) return;
    const t = new Date().toISOString();
    const p = this.pending;
    if (event.type === 'cmd.output' && p && sameOutput(p.event, event)) {
      for (const l of event.lines) {
        p.lines.push(l);
        p.chars += l.length;
      }
    } else {
      this.settlePending();
      if (event.type === 'cmd.output') {
        this.pending = { event, t, lines: [...event.lines], chars: event.lines.reduce((n, l) => n + l.length, 0) };
      } else this.append(`${scrub(JSON.stringify({ t, ...event }))}\n`);
    }
    if (!this.writing) this.writeNext();
  }

  /** The open output record goes into the buffers as it stands. */
  private settlePending(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    this.append(`${scrub(JSON.stringify({ t: p.t, ...p.event, lines: p.lines }))}\n`);
  }

  private append(line: string): void {
    if (this.overflow.length > 0 || !this.copy(line)) {
      this.overflow.push(line);
      this.overflowBytes += Buffer.byteLength(line);
    }
  }

  /**
   * A promise while more than QUEUE_BYTES wait to be written, settled once fewer do (Engine's backpressure): a
   * host pouring out output is read no faster than the disk takes it, so memory stays flat. Undefined when the
   * log keeps up, and once it is closed or broken (it never holds a command forever).
   */
  whenWritable(): Promise<void> | undefined {
    if (this.waiting() <= QUEUE_BYTES || this.broken) return undefined;
    if (!this.drained) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.drained = { promise, resolve };
    }
    return this.drained.promise;
  }

  /** Writes what is waiting, then closes the file. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.finishClose = () => close(this.fd, () => resolve());
      if (!this.writing) this.writeNext();
    });
    return this.closing;
  }

  private waiting(): number {
    return this.filled + this.overflowBytes + (this.pending?.chars ?? 0);
  }

  /** Copies `line` into the current buffer if it fits. */
  private copy(line: string): boolean {
    const room = BUFFER_BYTES - this.filled;
    // A UTF-8 character takes at most 3 bytes per UTF-16 unit: only a line near the limit is measured.
    if (line.length * 3 > room && Buffer.byteLength(line) > room) return false;
    this.filled += (this.buffers[this.current] as Buffer).write(line, this.filled);
    return true;
  }

  private writeNext(): void {
    this.settlePending();
    while (this.overflow.length > 0 && this.copy(this.overflow[0] as string)) {
      this.overflowBytes -= Buffer.byteLength(this.overflow.shift() as string);
    }
    let data: Buffer;
    if (this.filled > 0) {
      data = (this.buffers[this.current] as Buffer).subarray(0, this.filled);
      this.current = 1 - this.current;
      this.filled = 0;
    } else if (this.overflow.length > 0 && !this.broken) {
      // One event larger than a whole buffer: written on its own.
      const line = this.overflow.shift() as string;
      data = Buffer.from(line);
      this.overflowBytes -= data.length;
    } else {
      this.writing = false;
      this.release();
      const finish = this.finishClose;
      this.finishClose = undefined;
      finish?.();
      return;
    }
    this.writing = true;
    this.writeBytes(data);
  }

  private writeBytes(data: Buffer): void {
    write(this.fd, data, 0, data.length, null, (err, written) => {
      if (err) {
        // A full or vanished disk: the session goes on without its log rather than stopping every command.
        this.broken = true;
        this.pending = undefined;
        this.filled = 0;
        this.overflow = [];
        this.overflowBytes = 0;
      } else if (written < data.length) {
        this.writeBytes(data.subarray(written));
        return;
      }
      // What waits may have fallen below the mark while this write ran: let the commands read on.
      if (this.waiting() <= QUEUE_BYTES) this.release();
      this.writeNext();
    });
  }

  private release(): void {
    const d = this.drained;
    this.drained = undefined;
    d?.resolve();
  }
}

function sameOutput(a: OutputEvent, b: OutputEvent): boolean {
  return a.host === b.host && a.runId === b.runId && a.stream === b.stream;
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  return `${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}
