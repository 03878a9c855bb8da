/**
 * The crash journal of an apply: which steps are in flight on which host, with what undoing each one
 * takes (the `undo` of `step.start`, read before the step changes anything). It lives in
 * <stateDir>/journal/<key>.json, one file per target, rewritten atomically on every step event, so a
 * `kill -9` of the tool leaves the last state on disk; a normal end removes it. The next start on the
 * same target finds it (findInterruptedApply) and offers to resume or roll back (journal-rollback.ts).
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { EngineEvent, StepUndo } from './events.js';
import { STAGE_IDS, type Danger, type StageId, type StepStatus } from './types.js';
import { stateDir } from './session-log.js';
import { withoutSudoWrapper } from '../transport/quote.js';

export const JOURNAL_VERSION = 1;

/** A step that had started on a host and not reported its result when the journal was last written. */
export interface JournalStep {
  /** The run that started it: this one, or an interrupted one whose step a resume carries. */
  runId: string;
  host: string;
  stage: StageId;
  step: string;
  danger: Danger;
  startedAt: string;
  /** What undoing it takes; null when the step's start did not say (nothing is known to undo). */
  undo: StepUndo | null;
  /** The last command the step started on this host (what was running when the journal was written). */
  command?: string;
}

export interface JournalDone {
  host: string | null;
  stage: StageId;
  step: string;
  status: StepStatus;
}

export interface JournalFile {
  version: 1;
  runId: string;
  pid: number;
  startedAt: string;
  updatedAt: string;
  /** The target: inventory file, saved inventory or lab, and its hosts. */
  source: string;
  hosts: Array<{ name: string; address: string }>;
  /** The stages the apply was asked for, in pipeline order. */
  stages: StageId[];
  /** The stage being applied (set when its checks start), null before the first. */
  stage: StageId | null;
  inFlight: JournalStep[];
  done: JournalDone[];
}

const stageId = z.enum(STAGE_IDS as unknown as [StageId, ...StageId[]]);
const command = z.union([
  z.object({ argv: z.array(z.string()) }),
  z.object({ script: z.string(), args: z.array(z.string()).optional() }),
]);
const undoSchema = z.object({
  backupDir: z.string().startsWith('/'),
  files: z.array(z.object({ path: z.string().min(1), existed: z.boolean() })),
  removeFiles: z.array(z.string().min(1)),
  rollback: z.array(z.object({ command, sudo: z.boolean().optional(), timeoutMs: z.number().optional(), okExit: z.array(z.number()).optional() })),
});
const journalSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  pid: z.number().int().positive(),
  startedAt: z.string(),
  updatedAt: z.string(),
  source: z.string(),
  hosts: z.array(z.object({ name: z.string(), address: z.string() })),
  stages: z.array(stageId),
  stage: stageId.nullable(),
  inFlight: z.array(z.object({
    runId: z.string(), host: z.string(), stage: stageId, step: z.string(), danger: z.enum(['safe', 'disruptive', 'network', 'reboot']),
    startedAt: z.string(), undo: undoSchema.nullable(), command: z.string().optional(),
  })),
  done: z.array(z.object({ host: z.string().nullable(), stage: stageId, step: z.string(), status: z.enum(['planned', 'applied', 'skipped', 'failed']) })),
});

export function journalDir(): string {
  return join(stateDir(), 'journal');
}

/**
 * One key per target: the source (an inventory file by its absolute path) and every host's address,
 * so two clusters never share a journal. The built-in lab listens on new ports each start: its own key.
 */
export function journalKey(source: string, addresses: readonly string[]): string {
  const where = existsSync(source) ? resolve(source) : source;
  return createHash('sha256').update(JSON.stringify([where, ...addresses])).digest('hex').slice(0, 20);
}

export function journalPath(key: string, dir = journalDir()): string {
  return join(dir, `${key}.json`);
}

/** Write to a temporary file in the same directory, fsync it, rename it over the journal, fsync the directory. */
export function writeJournalAtomic(path: string, journal: JournalFile): void {
  const dir = resolve(path, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(journal, null, 1)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  // The rename itself is durable only once the directory is: a crash of the machine keeps the new entry.
  const d = openSync(dir, 'r');
  try {
    fsyncSync(d);
  } finally {
    closeSync(d);
  }
}

/** Whether a process with this id exists (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export type FoundJournal =
  | { state: 'interrupted'; path: string; journal: JournalFile }
  | { state: 'running'; path: string; journal: JournalFile }
  | { state: 'corrupt'; path: string; movedTo: string; problem: string };

/**
 * The journal of this target, if any: interrupted when the process that wrote it is gone, running
 * while it lives (an apply in another terminal — never offered for rollback). A file that cannot be
 * read as a journal is moved aside to `….corrupt` (kept for a person to read) and reported.
 */
export function findInterruptedApply(key: string, dir = journalDir(), alive: (pid: number) => boolean = processAlive): FoundJournal | undefined {
  const path = journalPath(key, dir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let problem: string;
  try {
    const parsed = journalSchema.safeParse(JSON.parse(text));
    if (parsed.success) {
      const journal = parsed.data as JournalFile;
      return { state: alive(journal.pid) ? 'running' : 'interrupted', path, journal };
    }
    problem = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ');
  } catch (err) {
    problem = (err as Error).message;
  }
  let movedTo = `${path}.corrupt`;
  if (existsSync(movedTo)) movedTo = `${path}.${new Date().toISOString().replace(/[-:.]/g, '')}.corrupt`;
  renameSync(path, movedTo);
  return { state: 'corrupt', path, movedTo, problem };
}

export function removeJournal(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Where a resume starts: the earliest stage with a step in flight, else the stage being applied when
 * it stopped, else the first stage asked for; the stages asked for from there on, in pipeline order.
 */
export function resumeStages(journal: Pick<JournalFile, 'stages' | 'stage' | 'inFlight'>): StageId[] {
  const order = (s: StageId) => STAGE_IDS.indexOf(s);
  const inFlight = journal.inFlight.map((x) => x.stage).sort((a, b) => order(a) - order(b))[0];
  const from = inFlight ?? journal.stage ?? journal.stages[0];
  if (from === undefined) return [];
  const asked = [...journal.stages].sort((a, b) => order(a) - order(b));
  const rest = asked.filter((s) => order(s) >= order(from));
  return rest.includes(from) ? rest : [from, ...rest];
}

export interface ApplyJournalOptions {
  key: string;
  runId: string;
  source: string;
  hosts: ReadonlyArray<{ name: string; address: string }>;
  stages: readonly StageId[];
  /** Steps an earlier, interrupted run left in flight: kept until this run finishes the same step on the same host. */
  carry?: readonly JournalStep[];
  dir?: string;
  now?: () => Date;
  /** A journal write failed (full disk, permissions): the apply goes on, the caller tells the operator once. */
  onError?: (err: Error) => void;
}

const COMMAND_CHARS = 300;

/** Keeps the journal file of one apply in step with the engine's step events. */
export class ApplyJournal {
  readonly path: string;
  private readonly data: JournalFile;
  private readonly now: () => Date;
  private unsubscribe: (() => void) | undefined;
  private failed = false;

  constructor(private readonly options: ApplyJournalOptions) {
    this.now = options.now ?? (() => new Date());
    this.path = journalPath(options.key, options.dir);
    const t = this.now().toISOString();
    this.data = {
      version: 1, runId: options.runId, pid: process.pid, startedAt: t, updatedAt: t, source: options.source,
      hosts: options.hosts.map((h) => ({ name: h.name, address: h.address })), stages: [...options.stages],
      stage: null, inFlight: [...(options.carry ?? [])], done: [],
    };
    this.write();
  }

  /** Follows the engine's events until finish(). */
  attach(engine: { subscribe(l: (e: EngineEvent) => void): () => void }): this {
    this.unsubscribe = engine.subscribe((e) => this.handle(e));
    return this;
  }

  get snapshot(): Readonly<JournalFile> {
    return this.data;
  }

  handle(e: EngineEvent): void {
    const d = this.data;
    switch (e.type) {
      case 'stage.state':
        // The end of an apply re-checks earlier stages; the journal keeps the furthest one reached.
        if (e.state !== 'running' || !d.stages.includes(e.stage)) return;
        if (d.stage !== null && STAGE_IDS.indexOf(e.stage) <= STAGE_IDS.indexOf(d.stage)) return;
        d.stage = e.stage;
        break;
      case 'step.start':
        // A carried entry of the same step stays beside the new attempt: its undo goes back to before the crash.
        d.inFlight = d.inFlight.filter((x) => !(x.host === e.host && x.step === e.step && x.runId === d.runId));
        d.inFlight.push({ runId: d.runId, host: e.host, stage: e.stage, step: e.step, danger: e.danger, startedAt: this.now().toISOString(), undo: e.undo ?? null });
        break;
      case 'step.result': {
        const r = e.result;
        if (r.status === 'planned') return;
        const before = d.inFlight.length;
        // This run's step ended: applied, or failed and rolled back by the executor. A carried one is
        // settled only when the host reached the step's state (applied, or its guards pass now); a
        // step that failed again or was not run keeps it, so a rollback can still go back past the crash.
        // A step that ended unsettled (its connection lost for good, nothing rolled back) stays in flight.
        const settles = (x: JournalStep) => !r.unsettled && (x.runId === d.runId || r.status === 'applied' || (r.status === 'skipped' && !r.summary.startsWith('not run')));
        d.inFlight = d.inFlight.filter((x) => !(x.step === r.id && (r.host === null || x.host === r.host) && settles(x)));
        d.done.push({ host: r.host, stage: r.stage, step: r.id, status: r.status });
        // Nothing started and nothing was in flight: a skip changes no host, no write needed.
        if (before === d.inFlight.length && r.status === 'skipped') return;
        break;
      }
      case 'cmd.start': {
        const x = d.inFlight.find((s) => s.host === e.host && (e.probe === s.step || e.probe.startsWith(`${s.step}:`) || e.probe === 'rollback'));
        if (!x) return;
        const line = withoutSudoWrapper(e.commandLine);
        x.command = line.length > COMMAND_CHARS ? `${line.slice(0, COMMAND_CHARS)}…` : line;
        break;
      }
      default:
        return;
    }
    this.write();
  }

  /**
   * The apply ended (well, with failures, or cancelled: every started step then reported its result):
   * the journal goes. Steps still in flight — an exception cut the apply short, or a carried step this
   * run never reached — keep it, for the next start to offer.
   */
  finish(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    if (this.data.inFlight.length === 0) removeJournal(this.path);
    else this.write();
  }

  private write(): void {
    this.data.updatedAt = this.now().toISOString();
    try {
      writeJournalAtomic(this.path, this.data);
    } catch (err) {
      if (!this.failed) this.options.onError?.(err as Error);
      this.failed = true;
    }
  }
}
