/**
 * Rolling back the steps an interrupted apply left in flight, from what their `step.start` recorded:
 * a file with a backup in the run's backup directory is restored from it; a file that did not exist
 * before is removed; any other file was not written yet and stays. writeFileAtomic's temporary files
 * (PATH.l20tmp.*) are removed, files the step had moved into the backup directory are moved back,
 * then the step's own rollback commands run. Every command is an argv list (paths are words, never
 * spliced into a shell string) and runs through the engine, so it streams to the panes and the log.
 *
 * Before either a resume or a rollback, every rollback timer the journal says an armed step set is looked
 * up on its host (handleStaleTimers): one still waiting would fire later and undo what the resume proves
 * (netplan restored, `ufw --force disable`). A resume stops it (the step runs again from scratch); a
 * rollback honours it: runs its service now and waits for it, or, when it no longer waits, runs what it
 * would have run (the same command: restoring a snapshot, disabling ufw, is the same done twice).
 */
import { posix } from 'node:path';
import type { Engine } from './runner.js';
import type { HostRunner, StepCommand } from './types.js';
import type { JournalArmed, JournalFile, JournalStep } from './journal.js';
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
  return sanitize(
    text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-3)
      .join(' / '),
  );
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

async function act(
  run: HostRunner,
  host: string,
  argv: string[],
  action: Omit<RollbackAction, 'ok'>,
): Promise<RollbackAction> {
  const r = await run(host, 'rollback', { argv }, { sudo: true, timeoutMs: 60_000 });
  return r.exitCode === 0
    ? { ...action, ok: true }
    : { ...action, ok: false, detail: `exit ${r.exitCode}: ${tail(r.stderr || r.stdout)}` };
}

/** A rollback command in one line, as the report shows it (a script by its first line). */
function shownCommand(c: StepCommand): string {
  const sudo = (c.sudo ?? true) ? 'sudo ' : '';
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
      out.push(
        await act(run, host, ['cp', '-p', '--', backup, f.path], {
          kind: 'restored',
          what: f.path,
          detail: `from ${backup}`,
        }),
      );
    } else if (!f.existed) {
      if (await exists(run, host, f.path))
        out.push(await act(run, host, ['rm', '-f', '--', f.path], { kind: 'removed', what: f.path }));
      else out.push({ kind: 'absent', what: f.path, ok: true });
    } else {
      out.push({ kind: 'untouched', what: f.path, ok: true });
    }
    const dir = posix.dirname(f.path);
    const found = await run(
      host,
      'rollback',
      {
        argv: [
          'find',
          dir,
          '-maxdepth',
          '1',
          '-type',
          'f',
          '-name',
          `${globLiteral(posix.basename(f.path))}.l20tmp.*`,
          '-print',
        ],
      },
      { sudo: true, timeoutMs: 20_000 },
    );
    const leftovers =
      found.exitCode === 0 ? found.stdout.split('\n').filter((l) => l.startsWith(`${f.path}.l20tmp.`)) : [];
    for (const tmp of leftovers)
      out.push(await act(run, host, ['rm', '-f', '--', tmp], { kind: 'leftover', what: tmp }));
  }
  for (const path of [...undo.removeFiles].reverse()) {
    const backup = backupOf(undo, path);
    if ((await exists(run, host, backup)) && !(await exists(run, host, path))) {
      out.push(
        await act(run, host, ['mv', '-f', '--', backup, path], {
          kind: 'moved-back',
          what: path,
          detail: `from ${backup}`,
        }),
      );
    }
  }
  for (const c of undo.rollback as readonly StepCommand[]) {
    const shown = shownCommand(c);
    const r = await run(host, 'rollback', c.command, { sudo: c.sudo ?? true, timeoutMs: c.timeoutMs ?? 10 * 60_000 });
    const ok = (c.okExit ?? [0]).includes(r.exitCode ?? -1);
    out.push({
      kind: 'command',
      what: shown,
      ok,
      detail: ok ? `exit ${r.exitCode}` : `exit ${r.exitCode ?? r.signal}: ${tail(r.stderr || r.stdout)}`,
    });
  }
  return [...out, ...(await repairPackages(run, entry))];
}

/**
 * Rolls back every in-flight step of the journal, hosts in parallel, the latest step of a host first.
 * Hosts that cannot be connected are reported and left alone.
 */
export async function rollbackInterrupted(
  engine: Engine,
  journal: Pick<JournalFile, 'inFlight'>,
): Promise<StepRollback[]> {
  return perInFlightStep(engine, journal.inFlight, rollbackStep);
}

/**
 * Before a resume: only what re-running cannot do itself — a package command killed mid-way is
 * finished (dpkg --configure -a); the steps then re-plan from the hosts' state.
 */
export async function repairInterrupted(
  engine: Engine,
  journal: Pick<JournalFile, 'inFlight'>,
): Promise<StepRollback[]> {
  return perInFlightStep(engine, journal.inFlight.filter(interruptedPackageCommand), repairPackages);
}

async function perInFlightStep(
  engine: Engine,
  inFlight: readonly JournalStep[],
  fn: (run: HostRunner, entry: JournalStep) => Promise<RollbackAction[]>,
): Promise<StepRollback[]> {
  if (inFlight.length === 0) return [];
  const failures = await engine.connectAll();
  const byHost = new Map<string, JournalStep[]>();
  for (const x of inFlight) byHost.set(x.host, [...(byHost.get(x.host) ?? []), x]);
  return engine.busyWhile(async (signal) => {
    const perHost = await Promise.all(
      [...byHost].map(async ([host, entries]) => {
        const ordered = [...entries].sort((a, b) => b.startedAt.localeCompare(a.startedAt));
        const err = failures.get(host);
        if (err || !engine.hosts.some((h) => h.name === host)) {
          const unreachable = sanitize(err ?? `${host} is not in this inventory`);
          return ordered.map((x): StepRollback => ({ host, stage: x.stage, step: x.step, actions: [], unreachable }));
        }
        const results: StepRollback[] = [];
        for (const x of ordered) {
          const run = engine.hostRunner(x.stage, signal);
          try {
            results.push({ host, stage: x.stage, step: x.step, actions: await fn(run, x) });
          } catch (e) {
            results.push({
              host,
              stage: x.stage,
              step: x.step,
              actions: [],
              unreachable: sanitize((e as Error).message),
            });
          }
        }
        return results;
      }),
    );
    return perHost.flat();
  });
}

/** Whether every step was rolled back completely (the journal can go). */
export function rollbackComplete(results: readonly StepRollback[]): boolean {
  return results.every((r) => !r.unreachable && r.actions.every((a) => a.ok));
}

const VERB: Record<RollbackAction['kind'], string> = {
  restored: 'restored',
  removed: 'removed (new file)',
  absent: 'not written yet (new file)',
  untouched: 'untouched (not written yet)',
  leftover: 'removed leftover',
  'moved-back': 'moved back',
  command: 'ran',
  repaired: 'ran',
};

/** One line per step and host, then one per action. */
export function rollbackLines(results: readonly StepRollback[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(
      `${r.host}  ${r.step} (${r.stage})${r.unreachable ? `: not rolled back — ${r.unreachable}` : r.actions.length === 0 ? ': nothing recorded to undo' : ''}`,
    );
    for (const a of r.actions)
      lines.push(`  ${a.ok ? '✔' : '✘'} ${VERB[a.kind]} ${a.what}${a.detail ? ` (${a.detail})` : ''}`);
  }
  return lines;
}

/** What was found and done about one journaled rollback timer on its host. */
export interface TimerAction {
  host: string;
  step: string;
  unit: string;
  /** waiting: the timer was armed and had not fired; firing: its service ran when looked at; idle: neither. */
  found: 'waiting' | 'firing' | 'idle' | 'unknown';
  /** stopped: timer stopped (resume); honoured: its service ran now, to its end (rollback); waited: the
   *  firing service was waited for; undone: it no longer waited, its command ran now (rollback); none. */
  done: 'stopped' | 'honoured' | 'waited' | 'undone' | 'none';
  ok: boolean;
  detail: string;
  /** The host could not be reached: whether the timer waits is unknown. */
  unreachable?: string;
}

const SERVICE_WAIT_MS = 120_000;
const AS_ROOT = { sudo: true, timeoutMs: 20_000 };
const STOP_OPTS = { sudo: true, timeoutMs: 60_000 };
const LONG_OPTS = { sudo: true, timeoutMs: SERVICE_WAIT_MS };

/** ActiveState and Result of a unit (systemctl show prints both even for a unit it does not know). */
async function unitState(run: HostRunner, host: string, unit: string): Promise<{ active: string; result: string }> {
  const argv = ['systemctl', 'show', '-p', 'ActiveState', '-p', 'Result', unit];
  const r = await run(host, 'rollback', { argv }, AS_ROOT);
  if (r.exitCode !== 0) throw new Error(`systemctl show ${unit} on ${host}: ${exitText(r)}`);
  const value = (key: string) => new RegExp(`^${key}=(\\S*)`, 'm').exec(r.stdout)?.[1] ?? '?';
  return { active: value('ActiveState'), result: value('Result') };
}

/** Waits for a started service to end (bounded); `success`, or what systemd says instead. */
async function serviceEnd(run: HostRunner, host: string, unit: string, signal: AbortSignal): Promise<string> {
  const until = Date.now() + SERVICE_WAIT_MS;
  for (;;) {
    const s = await unitState(run, host, unit);
    if (s.active !== 'active' && s.active !== 'activating' && s.active !== 'deactivating') {
      return s.result === 'success' ? 'success' : `ActiveState=${s.active} Result=${s.result}`;
    }
    if (Date.now() > until || signal.aborted) return `still ${s.active} after ${SERVICE_WAIT_MS / 1000} s`;
    await new Promise((r) => setTimeout(r, 250)); // the next look at a running service
  }
}

/** `exit N` and, when it failed, the last lines it printed. */
function exitText(r: { exitCode: number | null; signal: string | null; stdout: string; stderr: string }): string {
  return `exit ${r.exitCode ?? r.signal}${r.exitCode === 0 ? '' : `: ${tail(r.stderr || r.stdout)}`}`;
}

/** Finds one journaled timer on its host and stops (resume) or honours (rollback) it. */
async function settleTimer(
  run: HostRunner,
  a: JournalArmed,
  mode: 'resume' | 'rollback',
  signal: AbortSignal,
): Promise<TimerAction> {
  const timer = `${a.unit}.timer`;
  const service = `${a.unit}.service`;
  const is = await run(a.host, 'rollback', { argv: ['systemctl', 'is-active', timer] }, AS_ROOT);
  const waiting = is.stdout.trim() === 'active';
  const firing = !waiting && ['active', 'activating'].includes((await unitState(run, a.host, service)).active);
  const found: TimerAction['found'] = waiting ? 'waiting' : firing ? 'firing' : 'idle';
  const action = (done: TimerAction['done'], ok: boolean, detail: string): TimerAction => ({
    host: a.host,
    step: a.step,
    unit: a.unit,
    found,
    done,
    ok,
    detail,
  });
  const stopTimer = () => run(a.host, 'rollback', { argv: ['systemctl', 'stop', timer] }, STOP_OPTS);
  if (firing) {
    const end = await serviceEnd(run, a.host, service, signal);
    return action('waited', end === 'success', `it was firing (${a.undoes}); waited for it: ${end}`);
  }
  if (mode === 'resume') {
    if (!waiting) return action('none', true, 'no longer waiting (stopped by the step, or fired)');
    const stop = await stopTimer();
    return stop.exitCode === 0
      ? action('stopped', true, `was waiting to fire (${a.undoes}); stopped — the step runs again from scratch`)
      : action('stopped', false, `systemctl stop ${timer}: ${exitText(stop)}`);
  }
  if (waiting) {
    const start = await run(a.host, 'rollback', { argv: ['systemctl', 'start', service] }, LONG_OPTS);
    const end =
      start.exitCode === 0 ? await serviceEnd(run, a.host, service, signal) : `systemctl start: ${exitText(start)}`;
    const stopped = (await stopTimer()).exitCode === 0;
    const timerNow = stopped ? 'timer stopped' : 'the timer could not be stopped';
    const detail = `was waiting; ran it now (${a.undoes}): ${end}; ${timerNow}`;
    return action('honoured', end === 'success' && stopped, detail);
  }
  // It no longer waits: stopped by the step after its proof, or fired. What it would do is done now, detached
  // from this session as the timer would (a netplan apply may drop the connection for a moment).
  const argv = ['systemd-run', `--unit=${a.unit}-rollback`, '--collect', '--wait', ...a.command];
  const now = await run(a.host, 'rollback', { argv }, LONG_OPTS);
  const detail = `no longer waiting; ran what it would have (${a.undoes}): ${exitText(now)}`;
  return action('undone', now.exitCode === 0, detail);
}

/**
 * Every rollback timer of the journal, looked up on its host and stopped (resume) or honoured
 * (rollback) — hosts in parallel, the latest timer of a host first. A host that cannot be reached is
 * reported: whether its timer still waits is unknown.
 */
export async function handleStaleTimers(
  engine: Engine,
  journal: Pick<JournalFile, 'armed'>,
  mode: 'resume' | 'rollback',
): Promise<TimerAction[]> {
  const armed = journal.armed ?? [];
  if (armed.length === 0) return [];
  const failures = await engine.connectAll();
  // Reported in the inventory's host order: hosts armed in parallel journal in whichever order they ran.
  const rank = (host: string) => {
    const i = engine.hosts.findIndex((h) => h.name === host);
    return i < 0 ? engine.hosts.length : i;
  };
  const byHost = new Map<string, JournalArmed[]>();
  for (const a of [...armed].sort((x, y) => rank(x.host) - rank(y.host))) {
    byHost.set(a.host, [...(byHost.get(a.host) ?? []), a]);
  }
  const unknown = (a: JournalArmed, why: string): TimerAction => ({
    host: a.host,
    step: a.step,
    unit: a.unit,
    found: 'unknown',
    done: 'none',
    ok: false,
    detail: '',
    unreachable: sanitize(why),
  });
  return engine.busyWhile(async (signal) => {
    const perHost = await Promise.all(
      [...byHost].map(async ([host, entries]) => {
        const ordered = [...entries].sort((a, b) => b.armedAt.localeCompare(a.armedAt));
        const err = failures.get(host);
        if (err || !engine.hosts.some((h) => h.name === host)) {
          return ordered.map((a) => unknown(a, err ?? `${host} is not in this inventory`));
        }
        const out: TimerAction[] = [];
        for (const a of ordered) {
          try {
            out.push(await settleTimer(engine.hostRunner(a.stage, signal), a, mode, signal));
          } catch (e) {
            out.push(unknown(a, (e as Error).message));
          }
        }
        return out;
      }),
    );
    return perHost.flat();
  });
}

/** One line per timer and host. */
export function timerLines(actions: readonly TimerAction[]): string[] {
  return actions.map((t) => {
    const what = t.unreachable ? `unknown — ${t.unreachable}` : `${t.ok ? '✔' : '✘'} ${t.detail}`;
    return `${t.host}  ${t.unit}.timer (${t.step}): ${what}`;
  });
}
