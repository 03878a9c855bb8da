/**
 * What a running script level knows about itself: where its own stdout and stderr go while it
 * runs (the SSH channel, a systemd service's log, or nowhere — captured by a pipe, a redirection or
 * `$(…)`), its effective uid, and its cancellation signal.
 *
 * A level starts at every shell run (an SSH exec, a systemd service) and at every nested script a
 * lab command runs (`sudo`, `env`, `bash -c/-s`, `sh`). Each level runs in an interpreter of its own
 * whose file system view carries the level (shell/shell.ts): the uid its permission checks use and
 * the sinks its live output devices write to. A lab command finds its level through that view
 * (`levelOf(ctx)`). just-bash runs a command's sub-executions (`timeout`, `xargs`) in the same
 * interpreter, so they stay on the caller's level.
 *
 * The level is passed explicitly rather than in async context: on Node 20 an AsyncLocalStorage
 * turns on promise hooks for every promise in the process, which cost the lab about a fifth of its
 * CPU time (bench/lib/lab-cpu.mjs).
 */
import type { ExecResult } from 'just-bash';

/** Receives output bytes as they are produced; resolves once the receiver took them (backpressure). */
export type OutputSink = (chunk: Buffer) => Promise<void>;

/** Options for running a level's script (a subset of just-bash's exec options). */
export interface LevelExecOptions {
  cwd: string;
  stdin?: string;
  stdinKind?: 'bytes' | 'text';
  signal?: AbortSignal;
}

export interface ExecLevel {
  /** Where this level's fd 1 goes live; undefined when it is captured. */
  readonly stdout?: OutputSink;
  /** Where this level's fd 2 goes live; undefined when it is captured. */
  readonly stderr?: OutputSink;
  /** Effective user id: 0 under sudo and for system services. */
  readonly uid: number;
  readonly signal?: AbortSignal;
  /** The shell's pid (`$$`): a session shell's (sessions.ts); nested levels (bash -c, sudo) get the default. */
  readonly pid?: number;
  /** Nested script levels above this one (sudo, bash -c, …): 0 for a shell run. */
  readonly depth: number;
  /** Runs a nested level's script in an interpreter of its own on the same machine. */
  readonly nest: (child: ExecLevel, script: string, opts: LevelExecOptions) => Promise<ExecResult>;
}

/** Property of a level's file system view that names its level (a number survives just-bash's context proxy). */
export const LEVEL_ID = '__labLevelId';

const running = new Map<number, ExecLevel>();
let nextId = 1;

/** Registers a level for the time its script runs; returns the id its file system view carries. */
export function enterLevel(level: ExecLevel): number {
  const id = nextId++;
  running.set(id, level);
  return id;
}

export function leaveLevel(id: number): void {
  running.delete(id);
}

/**
 * The level a lab command runs on, from its context's file system view (just-bash revokes a
 * command's context when the command ends, so a context in use always belongs to a running level).
 */
export function levelOf(ctx: { fs: unknown }): ExecLevel | undefined {
  const id = (ctx.fs as Record<string, unknown> | undefined)?.[LEVEL_ID];
  return typeof id === 'number' ? running.get(id) : undefined;
}

/** Effective uid of a command (the login user's when it runs outside any level). */
export function effectiveUid(ctx: { fs: unknown }, fallback: number): number {
  return levelOf(ctx)?.uid ?? fallback;
}

/**
 * The uid reading a rendered file (/proc) right now. A level's view of a rendered tree sets it
 * around the synchronous render only (`asReader`), so it never leaks into other work.
 */
let reader: number | undefined;

export function asReader<T>(uid: number, render: () => T): T {
  const before = reader;
  reader = uid;
  try {
    return render();
  } finally {
    reader = before;
  }
}

export function readerUid(fallback: number): number {
  return reader ?? fallback;
}
