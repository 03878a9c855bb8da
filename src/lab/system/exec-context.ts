/**
 * What a running script level knows about itself, carried in async context: where its own stdout
 * and stderr go while it runs (the SSH channel, a systemd service's log, or nowhere — captured by
 * a pipe, a redirection or `$(…)`), its effective uid, and its cancellation signal.
 *
 * A level starts at every shell run (an SSH exec, a systemd service) and at every nested script a
 * lab command runs (`sudo`, `env`, `bash -c/-s`, `sh`). just-bash runs a command's sub-executions
 * (`timeout`, `xargs`) in the caller's async context, so they stay on the caller's level.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Receives output bytes as they are produced; resolves once the receiver took them (backpressure). */
export type OutputSink = (chunk: Buffer) => Promise<void>;

export interface ExecLevel {
  /** Where this level's fd 1 goes live; undefined when it is captured. */
  readonly stdout?: OutputSink;
  /** Where this level's fd 2 goes live; undefined when it is captured. */
  readonly stderr?: OutputSink;
  /** The next script the interpreter parses in this context is this level's own (see live.ts). */
  transformNext: boolean;
  /** Effective user id: 0 under sudo and for system services. */
  readonly uid: number;
  readonly signal?: AbortSignal;
}

const levels = new AsyncLocalStorage<ExecLevel>();

export function currentLevel(): ExecLevel | undefined {
  return levels.getStore();
}

export function runInLevel<T>(level: ExecLevel, fn: () => Promise<T>): Promise<T> {
  return levels.run(level, fn);
}

/** Effective uid of the code running now (the login user's when nothing set it). */
export function effectiveUid(fallback: number): number {
  return levels.getStore()?.uid ?? fallback;
}
