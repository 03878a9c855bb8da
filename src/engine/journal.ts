/**
 * The crash journal of an apply: which steps are in flight on which host, with what undoing each one
 * takes (the `undo` of `step.start`, read before the step changes anything), and every rollback timer
 * an armed step set on a host (recorded before it is armed: a kill can leave it waiting). It lives in
 * <stateDir>/journal/<key>.json, the key made from the hosts' identities (their host key fingerprints),
 * rewritten atomically on every step event, so a `kill -9` of the tool leaves the last state on disk; a
 * normal end removes it. The next start on any of those hosts — from any inventory naming them, the saved
 * one or the TUI — finds it (findInterruptedApply) and offers to resume or roll back (journal-rollback.ts).
 * Whether its writer still runs is told by the process's boot, start time and command line, not its pid.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { EngineEvent, StepUndo } from './events.js';
import { STAGE_IDS, type ArmedTimer, type Danger, type StageId, type StepStatus } from './types.js';
import { stateDir } from './session-log.js';
import { withoutSudoWrapper } from '../transport/quote.js';
import type { Host } from '../transport/types.js';

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

/** A rollback timer an armed step set (or was about to set) on a host: it fires unless the step confirms. */
export interface JournalArmed extends ArmedTimer {
  runId: string;
  host: string;
  stage: StageId;
  step: string;
  /** When it was recorded (just before `systemd-run` armed it) and when it fires, by this machine's clock. */
  armedAt: string;
  firesAt: string;
}

/** A host as the journal knows it: the SHA256 fingerprints of its host keys (none yet: its address stands in). */
export interface JournalHost {
  name: string;
  address: string;
  keys?: string[];
}

/**
 * The process that writes the journal, so a later start can tell it from another that got the same pid
 * (after a reboot, or pid reuse): Linux's boot id and the process's start time (clock ticks since boot,
 * /proc/<pid>/stat field 22), else `ps -o lstart=`; and its command line.
 */
export interface JournalProcess {
  bootId?: string;
  startTime?: string;
  cmdline?: string[];
}

export interface JournalFile {
  version: 1;
  runId: string;
  pid: number;
  /** Absent in journals of earlier releases: then the pid alone tells. */
  process?: JournalProcess;
  startedAt: string;
  updatedAt: string;
  /** The target: inventory file, saved inventory or lab, and its hosts. */
  source: string;
  hosts: JournalHost[];
  /** The stages the apply was asked for, in pipeline order. */
  stages: StageId[];
  /** The stage being applied (set when its checks start), null before the first. */
  stage: StageId | null;
  inFlight: JournalStep[];
  /** Rollback timers of steps in flight, possibly still waiting on their hosts. */
  armed: JournalArmed[];
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
  rollback: z.array(
    z.object({
      command,
      sudo: z.boolean().optional(),
      timeoutMs: z.number().optional(),
      okExit: z.array(z.number()).optional(),
    }),
  ),
});
const journalSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  pid: z.number().int().positive(),
  startedAt: z.string(),
  updatedAt: z.string(),
  process: z
    .object({
      bootId: z.string().optional(),
      startTime: z.string().optional(),
      cmdline: z.array(z.string()).optional(),
    })
    .optional(),
  source: z.string(),
  hosts: z.array(z.object({ name: z.string(), address: z.string(), keys: z.array(z.string()).optional() })),
  stages: z.array(stageId),
  stage: stageId.nullable(),
  inFlight: z.array(
    z.object({
      runId: z.string(),
      host: z.string(),
      stage: stageId,
      step: z.string(),
      danger: z.enum(['safe', 'disruptive', 'network', 'reboot']),
      startedAt: z.string(),
      undo: undoSchema.nullable(),
      command: z.string().optional(),
    }),
  ),
  armed: z
    .array(
      z.object({
        runId: z.string(),
        host: z.string(),
        stage: stageId,
        step: z.string(),
        unit: z.string().regex(/^[A-Za-z0-9][\w.@-]*$/), // a unit name, never an option to systemctl
        undoes: z.string(),
        command: z.array(z.string()).min(1),
        windowS: z.number(),
        armedAt: z.string(),
        firesAt: z.string(),
      }),
    )
    .default([]),
  done: z.array(
    z.object({
      host: z.string().nullable(),
      stage: stageId,
      step: z.string(),
      status: z.enum(['planned', 'applied', 'skipped', 'failed']),
    }),
  ),
});

export function journalDir(): string {
  return join(stateDir(), 'journal');
}

/** Who a host is: its key fingerprints, else (no key known yet) its address. */
function hostIdentity(h: JournalHost): string {
  return h.keys?.length ? [...h.keys].sort().join('+') : `address:${h.address}`;
}

/**
 * One key per set of hosts, from their identities (sorted), whatever inventory names them: a copy of the
 * inventory, the saved one and the TUI all find the same journal. The built-in lab makes new host keys
 * each start: its own key.
 */
export function journalKey(hosts: ReadonlyArray<JournalHost>): string {
  const ids = [...new Set(hosts.map(hostIdentity))].sort();
  return createHash('sha256').update(JSON.stringify(ids)).digest('hex').slice(0, 20);
}

/** The same host: a key in common, or the same address where one side knows no key. */
export function sameHost(a: JournalHost, b: JournalHost): boolean {
  if (a.keys?.length && b.keys?.length) return a.keys.some((k) => b.keys!.includes(k));
  return a.address === b.address;
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

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The identity of a live process (undefined when there is none): on Linux from /proc; elsewhere the
 * start time and arguments `ps -o lstart=,args=` prints.
 */
export function processIdentity(pid: number = process.pid): JournalProcess | undefined {
  if (existsSync('/proc/self/stat')) {
    const stat = readProc(`/proc/${pid}/stat`);
    if (stat === undefined) return undefined;
    // The name (field 2) is in parentheses and may hold spaces and parentheses: fields count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = (readProc(`/proc/${pid}/cmdline`) ?? '').split('\0');
    if (cmdline.at(-1) === '') cmdline.pop();
    return { bootId: readProc('/proc/sys/kernel/random/boot_id')?.trim(), startTime: fields[19], cmdline };
  }
  if (!processAlive(pid)) return undefined;
  try {
    const argv = ['-o', 'lstart=,args=', '-p', String(pid)];
    const line = execFileSync('ps', argv, { encoding: 'utf8', timeout: 5000 }).trim();
    // lstart is a fixed-width date: `Wed Dec  2 04:39:53 2026`.
    return { startTime: line.slice(0, 24), cmdline: [line.slice(24).trim()] };
  } catch {
    return {};
  }
}

/**
 * Whether the journal's writer still runs: the same pid, boot, start time and command line. A journal
 * of an earlier release (no identity recorded) falls back to the pid.
 */
export function writerRunning(owner: Pick<JournalFile, 'pid' | 'process'>): boolean {
  const was = owner.process;
  if (!was?.startTime) return processAlive(owner.pid);
  const now = processIdentity(owner.pid);
  if (!now) return false;
  if (was.bootId !== undefined && now.bootId !== undefined && was.bootId !== now.bootId) return false;
  const line = (p: JournalProcess) => (p.cmdline ?? []).join(' ');
  return now.startTime === was.startTime && (was.cmdline === undefined || line(now) === line(was));
}

export type FoundJournal =
  | { state: 'interrupted'; path: string; journal: JournalFile }
  | { state: 'running'; path: string; journal: JournalFile }
  | { state: 'corrupt'; path: string; movedTo: string; problem: string };

/** Where to look: the journal of these hosts by key, and any other one that names one of them. */
export interface JournalTarget {
  key: string;
  hosts: ReadonlyArray<JournalHost>;
}

/** What the journal reads of a target's hosts. */
interface JournalHostsOf {
  readonly hosts: ReadonlyArray<Pick<Host, 'name' | 'address' | 'knownHostKeys'>>;
}

/** The hosts as the journal knows them: name, address and the host key fingerprints known for them. */
export function journalHosts(target: JournalHostsOf): JournalHost[] {
  return target.hosts.map((h) => {
    const keys = h.knownHostKeys?.() ?? [];
    return { name: h.name, address: h.address, ...(keys.length ? { keys: [...keys] } : {}) };
  });
}

/** Where this target's journal is: by its hosts' identities, whatever inventory (or the TUI) names them. */
export function journalTarget(target: JournalHostsOf): JournalTarget {
  const hosts = journalHosts(target);
  return { key: journalKey(hosts), hosts };
}

type Read = { journal: JournalFile } | { problem: string } | undefined;

function readJournal(path: string): Read {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed = journalSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { journal: parsed.data as JournalFile };
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
    return { problem: issues.join('; ') };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

/**
 * The journal of this target, if any: interrupted when the process that wrote it is gone, running
 * while it lives (an apply in another terminal — never offered for rollback). Given the hosts, a
 * journal under another key that names one of them counts too (it was written from an inventory naming
 * other hosts beside them, or before their keys were known); one that runs wins, then the latest. The
 * file of this key that cannot be read as a journal is moved aside to `….corrupt` (kept for a person to
 * read) and reported; another key's unreadable file is left alone (it may be another cluster's).
 */
export function findInterruptedApply(
  target: string | JournalTarget,
  dir = journalDir(),
  running: (j: JournalFile) => boolean = writerRunning,
): FoundJournal | undefined {
  const { key, hosts } = typeof target === 'string' ? { key: target, hosts: undefined } : target;
  const path = journalPath(key, dir);
  const own = readJournal(path);
  if (own && 'problem' in own) {
    let movedTo = `${path}.corrupt`;
    if (existsSync(movedTo)) movedTo = `${path}.${new Date().toISOString().replace(/[-:.]/g, '')}.corrupt`;
    renameSync(path, movedTo);
    return { state: 'corrupt', path, movedTo, problem: own.problem };
  }
  const found: Array<{ path: string; journal: JournalFile }> = own ? [{ path, journal: own.journal }] : [];
  if (hosts) {
    let names: string[] = [];
    try {
      names = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== `${key}.json`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const name of names) {
      const other = readJournal(join(dir, name));
      if (!other || !('journal' in other)) continue;
      const names = other.journal.hosts.some((a) => hosts.some((b) => sameHost(a, b)));
      if (names) found.push({ path: join(dir, name), journal: other.journal });
    }
  }
  const states = found.map((f) => ({
    ...f,
    state: running(f.journal) ? ('running' as const) : ('interrupted' as const),
  }));
  const live = (f: { state: string }) => Number(f.state === 'running');
  states.sort((a, b) => live(b) - live(a) || b.journal.updatedAt.localeCompare(a.journal.updatedAt));
  return states[0];
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
  hosts: ReadonlyArray<JournalHost>;
  stages: readonly StageId[];
  /** Steps an earlier, interrupted run left in flight: kept until this run finishes the same step on the same host. */
  carry?: readonly JournalStep[];
  /** Timers an interrupted run armed and no resume or rollback has dealt with yet: kept as they are. */
  carryArmed?: readonly JournalArmed[];
  /** The interrupted run's journal file this run takes over (found under another key), instead of its own. */
  path?: string;
  /** The writer's identity (default: this process's). */
  process?: { pid: number; identity?: JournalProcess };
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
    this.path = options.path ?? journalPath(options.key, options.dir);
    const t = this.now().toISOString();
    const writer = options.process ?? { pid: process.pid, identity: processIdentity() };
    this.data = {
      version: 1,
      runId: options.runId,
      pid: writer.pid,
      ...(writer.identity ? { process: writer.identity } : {}),
      startedAt: t,
      updatedAt: t,
      source: options.source,
      hosts: options.hosts.map((h) => ({
        name: h.name,
        address: h.address,
        ...(h.keys?.length ? { keys: [...h.keys].sort() } : {}),
      })),
      stages: [...options.stages],
      stage: null,
      inFlight: [...(options.carry ?? [])],
      armed: [...(options.carryArmed ?? [])],
      done: [],
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
        d.inFlight.push({
          runId: d.runId,
          host: e.host,
          stage: e.stage,
          step: e.step,
          danger: e.danger,
          startedAt: this.now().toISOString(),
          undo: e.undo ?? null,
        });
        break;
      case 'step.result': {
        const r = e.result;
        if (r.status === 'planned') return;
        const before = d.inFlight.length;
        // This run's step ended: applied, or failed and rolled back by the executor. A carried one is
        // settled only when the host reached the step's state (applied, or its guards pass now); a
        // step that failed again or was not run keeps it, so a rollback can still go back past the crash.
        // A step that ended unsettled (its connection lost for good, nothing rolled back) stays in flight.
        const settles = (x: JournalStep) =>
          !r.unsettled &&
          (x.runId === d.runId ||
            r.status === 'applied' ||
            (r.status === 'skipped' && !r.summary.startsWith('not run')));
        d.inFlight = d.inFlight.filter(
          (x) => !(x.step === r.id && (r.host === null || x.host === r.host) && settles(x)),
        );
        // The step dealt with its timers (confirmed, rolled back, or said in its error what still waits).
        const ours = (x: JournalArmed) =>
          x.step === r.id && x.runId === d.runId && (r.host === null || x.host === r.host);
        if (!r.unsettled) d.armed = d.armed.filter((x) => !ours(x));
        d.done.push({ host: r.host, stage: r.stage, step: r.id, status: r.status });
        // Nothing started and nothing was in flight: a skip changes no host, no write needed.
        if (before === d.inFlight.length && r.status === 'skipped') return;
        break;
      }
      case 'timer.armed': {
        const at = this.now();
        d.armed = d.armed.filter((x) => !(x.host === e.host && x.unit === e.timer.unit));
        d.armed.push({
          runId: d.runId,
          host: e.host,
          stage: e.stage,
          step: e.step,
          ...e.timer,
          command: [...e.timer.command],
          armedAt: at.toISOString(),
          firesAt: new Date(at.getTime() + e.timer.windowS * 1000).toISOString(),
        });
        break;
      }
      case 'cmd.start': {
        const x = d.inFlight.find(
          (s) =>
            s.host === e.host && (e.probe === s.step || e.probe.startsWith(`${s.step}:`) || e.probe === 'rollback'),
        );
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
    if (this.data.inFlight.length === 0 && this.data.armed.length === 0) removeJournal(this.path);
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
