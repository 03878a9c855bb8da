/**
 * Rolling back the steps an interrupted apply left in flight, from what their `step.start` recorded:
 * a file with a backup in the run's backup directory is restored from it; a file that did not exist
 * before is removed; any other file was not written yet and stays. writeFileAtomic's temporary files
 * (PATH.l20tmp.*) are removed, files the step had moved into the backup directory are moved back,
 * then the step's own rollback commands run. Every command is an argv list (paths are words, never
 * spliced into a shell string) and runs through the engine, so it streams to the panes and the log.
 */
import { posix } from 'node:path';
import type { Engine } from './runner.js';
import type { HostRunner, StepCommand } from './types.js';
import type { JournalFile, JournalStep } from './journal.js';
import { quoteArgv } from '../transport/quote.js';
import { sanitize } from '../util/sanitize.js';
import { repairPackageState, runsPackageTool } from '../../checks/os/package-guard.js';

export interface RollbackAction {
  /** restored: from its backup; removed: a new file deleted; absent: a new file never written;
   *  untouched: existed and had no backup (the step had not written it); leftover: a temporary file removed;
   *  moved-back: a moved file returned; command: a rollback command ran; repaired: dpkg finished what
   *  a killed package command left half-configured. */
  kind: 'restored' | 'removed' | 'absent' | 'untouched' | 'leftover' | 'moved-back' | 'command' | 'repaired';
  /** The file, or the command as a plan shows it. */
  what: string;
  ok: boolean;
  detail?: string;
}

export interface StepRollback {
  host: string;
  stage: JournalStep['stage'];
  step: string;
  actions: RollbackAction[];
  /** The host could not be reached: nothing was done there. */
  unreachable?: string;
}

/** A glob matching `name` literally: brackets make *, ? and [ plain characters (find -name, fnmatch). */
export function globLiteral(name: string): string {
  return name.replace(/[*?[\\]/g, (c) => (c === '\\' ? '\\\\' : `[${c}]`));
}

function tail(text: string): string {
  return sanitize(text.split('\n').filter((l) => l.trim() !== '').slice(-3).join(' / '));
}

/** The backup writeFileAtomic made of `path` in this run (relative paths go under `relative/`, as it does). */
function backupOf(undo: NonNullable<JournalStep['undo']>, path: string): string {
  return posix.join(undo.backupDir, path.startsWith('/') ? path : posix.join('relative', path));
}

async function exists(run: HostRunner, host: string, path: string): Promise<boolean> {
  // stat rather than test: test is a shell builtin, and not every system has it as a program.
  const r = await run(host, 'rollback', { argv: ['stat', '-c', '%F', '--', path] }, { sudo: true, timeoutMs: 20_000 });
  if (r.exitCode === 0) return true;
  if (/No such file or directory/.test(r.stderr)) return false;
  throw new Error(`stat ${path} on ${host} exited ${r.exitCode}: ${tail(r.stderr || r.stdout)}`);
}

async function act(run: HostRunner, host: string, argv: string[], action: Omit<RollbackAction, 'ok'>): Promise<RollbackAction> {
  const r = await run(host, 'rollback', { argv }, { sudo: true, timeoutMs: 60_000 });
  return r.exitCode === 0 ? { ...action, ok: true } : { ...action, ok: false, detail: `exit ${r.exitCode}: ${tail(r.stderr || r.stdout)}` };
}

/** A rollback command in one line, as the report shows it (a script by its first line). */
function shownCommand(c: StepCommand): string {
  const sudo = c.sudo ?? true ? 'sudo ' : '';
  if ('argv' in c.command) return `${sudo}${quoteArgv(c.command.argv)}`;
  const first = c.command.script.split('\n').find((l) => l.trim() !== '' && !l.startsWith('#!')) ?? '';
  return `${sudo}bash -s${c.command.args?.length ? ` ${quoteArgv(c.command.args)}` : ''} <<'EOF' ${first.trim()} …`;
}

/** A package command cut short leaves dpkg "interrupted": apt refuses every later install until it is finished. */
export function interruptedPackageCommand(entry: Pick<JournalStep, 'command'>): boolean {
  return entry.command !== undefined && runsPackageTool(entry.command);
}

/**
 * When the step was killed in a package command: the os stage's package guard (the same one an apply runs
 * before its package steps) finishes what was unpacked (`dpkg --configure -a`, what apt asks for after an
 * interruption). Nothing is removed.
 */
export async function repairPackages(run: HostRunner, entry: JournalStep): Promise<RollbackAction[]> {
  if (!interruptedPackageCommand(entry)) return [];
  const r = await repairPackageState(run, entry.host);
  if (r.outcome === 'clean') return [];
  const what = r.ran.length > 0 ? r.ran.join(', then ') : 'dpkg --configure -a';
  return [{ kind: 'repaired', what, ok: r.outcome === 'repaired', detail: r.detail }];
}

/** Undoes one in-flight step on its host. */
export async function rollbackStep(run: HostRunner, entry: JournalStep): Promise<RollbackAction[]> {
  const { host, undo } = entry;
  // Files first: a half-configured package must not be finished against a file being restored.
  if (!undo) return repairPackages(run, entry);
  const out: RollbackAction[] = [];
  for (const f of [...undo.files].reverse()) {
    const backup = backupOf(undo, f.path);
    if (await exists(run, host, backup)) {
      out.push(await act(run, host, ['cp', '-p', '--', backup, f.path], { kind: 'restored', what: f.path, detail: `from ${backup}` }));
    } else if (!f.existed) {
      if (await exists(run, host, f.path)) out.push(await act(run, host, ['rm', '-f', '--', f.path], { kind: 'removed', what: f.path }));
      else out.push({ kind: 'absent', what: f.path, ok: true });
    } else {
      out.push({ kind: 'untouched', what: f.path, ok: true });
    }
    const dir = posix.dirname(f.path);
    const found = await run(host, 'rollback', {
      argv: ['find', dir, '-maxdepth', '1', '-type', 'f', '-name', `${globLiteral(posix.basename(f.path))}.l20tmp.*`, '-print'],
    }, { sudo: true, timeoutMs: 20_000 });
    const leftovers = found.exitCode === 0 ? found.stdout.split('\n').filter((l) => l.startsWith(`${f.path}.l20tmp.`)) : [];
    for (const tmp of leftovers) out.push(await act(run, host, ['rm', '-f', '--', tmp], { kind: 'leftover', what: tmp }));
  }
  for (const path of [...undo.removeFiles].reverse()) {
    const backup = backupOf(undo, path);
    if ((await exists(run, host, backup)) && !(await exists(run, host, path))) {
      out.push(await act(run, host, ['mv', '-f', '--', backup, path], { kind: 'moved-back', what: path, detail: `from ${backup}` }));
    }
  }
  for (const c of undo.rollback as readonly StepCommand[]) {
    const shown = shownCommand(c);
    const r = await run(host, 'rollback', c.command, { sudo: c.sudo ?? true, timeoutMs: c.timeoutMs ?? 10 * 60_000 });
    const ok = (c.okExit ?? [0]).includes(r.exitCode ?? -1);
    out.push({ kind: 'command', what: shown, ok, detail: ok ? `exit ${r.exitCode}` : `exit ${r.exitCode ?? r.signal}: ${tail(r.stderr || r.stdout)}` });
  }
  return [...out, ...(await repairPackages(run, entry))];
}

/**
 * Rolls back every in-flight step of the journal, hosts in parallel, the latest step of a host first.
 * Hosts that cannot be connected are reported and left alone.
 */
export async function rollbackInterrupted(engine: Engine, journal: Pick<JournalFile, 'inFlight'>): Promise<StepRollback[]> {
  return perInFlightStep(engine, journal.inFlight, rollbackStep);
}

/**
 * Before a resume: only what re-running cannot do itself — a package command killed mid-way is
 * finished (dpkg --configure -a); the steps then re-plan from the hosts' state.
 */
export async function repairInterrupted(engine: Engine, journal: Pick<JournalFile, 'inFlight'>): Promise<StepRollback[]> {
  return perInFlightStep(engine, journal.inFlight.filter(interruptedPackageCommand), repairPackages);
}

async function perInFlightStep(engine: Engine, inFlight: readonly JournalStep[], fn: (run: HostRunner, entry: JournalStep) => Promise<RollbackAction[]>): Promise<StepRollback[]> {
  if (inFlight.length === 0) return [];
  const failures = await engine.connectAll();
  const byHost = new Map<string, JournalStep[]>();
  for (const x of inFlight) byHost.set(x.host, [...(byHost.get(x.host) ?? []), x]);
  return engine.busyWhile(async (signal) => {
    const perHost = await Promise.all([...byHost].map(async ([host, entries]) => {
      const ordered = [...entries].sort((a, b) => b.startedAt.localeCompare(a.startedAt));
      const err = failures.get(host);
      if (err || !engine.hosts.some((h) => h.name === host)) {
        return ordered.map((x): StepRollback => ({ host, stage: x.stage, step: x.step, actions: [], unreachable: sanitize(err?.message ?? `${host} is not in this inventory`) }));
      }
      const results: StepRollback[] = [];
      for (const x of ordered) {
        const run = engine.hostRunner(x.stage, signal);
        try {
          results.push({ host, stage: x.stage, step: x.step, actions: await fn(run, x) });
        } catch (e) {
          results.push({ host, stage: x.stage, step: x.step, actions: [], unreachable: sanitize((e as Error).message) });
        }
      }
      return results;
    }));
    return perHost.flat();
  });
}

/** Whether every step was rolled back completely (the journal can go). */
export function rollbackComplete(results: readonly StepRollback[]): boolean {
  return results.every((r) => !r.unreachable && r.actions.every((a) => a.ok));
}

const VERB: Record<RollbackAction['kind'], string> = {
  restored: 'restored', removed: 'removed (new file)', absent: 'not written yet (new file)', untouched: 'untouched (not written yet)',
  leftover: 'removed leftover', 'moved-back': 'moved back', command: 'ran', repaired: 'ran',
};

/** One line per step and host, then one per action. */
export function rollbackLines(results: readonly StepRollback[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${r.host}  ${r.step} (${r.stage})${r.unreachable ? `: not rolled back — ${r.unreachable}` : r.actions.length === 0 ? ': nothing recorded to undo' : ''}`);
    for (const a of r.actions) lines.push(`  ${a.ok ? '✔' : '✘'} ${VERB[a.kind]} ${a.what}${a.detail ? ` (${a.detail})` : ''}`);
  }
  return lines;
}
