/**
 * The audit trail: every command with host, exit code, duration and its full output, as JSONL in the
 * user's state directory. Output is written as it arrives, so a crash loses nothing already seen.
 * No secrets pass through here: sudo passwords travel on stdin only and are never part of an event.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { EngineEvent } from './events.js';

export function stateDir(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'l20-setup');
}

export class SessionLog {
  private readonly stream: WriteStream;
  readonly path: string;

  constructor(dir: string = join(stateDir(), 'sessions'), readonly runId: string = newRunId()) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.path = join(dir, `${runId}.jsonl`);
    this.stream = createWriteStream(this.path, { flags: 'a', mode: 0o600 });
  }

  record(event: EngineEvent): void {
    this.stream.write(`${JSON.stringify({ t: new Date().toISOString(), ...event })}\n`);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}

export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  return `${stamp}-${Math.random().toString(36).slice(2, 8)}`;
}
