/**
 * The os stage's package guard: a package command cut short (Ctrl-C or `c`, a timeout, a killed run) leaves
 * dpkg "interrupted" — its journal in /var/lib/dpkg/updates and packages unpacked or half-installed — and
 * apt then refuses every install (`E: dpkg was interrupted, you must manually run 'sudo dpkg --configure
 * -a'`, exit 100). The engine runs this guard on a host before any step command that runs apt or dpkg there,
 * and `apply --resume`/`--rollback` run it for a host whose journaled step was killed in one: one code path.
 *
 * The dpkg lock is never broken: dpkg and apt hold it as an fcntl lock, which dies with its process, so
 * whether a live process holds it is exactly whether dpkg can take it. A live holder (unattended-upgrades)
 * is waited for, with a bound, and named when the bound passes.
 */
import type { Command, RunResult } from '../../src/transport/types.js';
import type { HostRunner } from '../../src/engine/types.js';
import { tailLines } from '../../src/transport/output.js';
import { sleep } from '../../src/transport/ssh-channel-queue.js';

/** A command line that runs a package tool (what leaves dpkg interrupted when cut short). */
const PACKAGE_COMMAND = /(^|[\s/])(apt-get|apt|aptitude|dpkg)\s/;

export function runsPackageTool(commandLine: string): boolean {
  return PACKAGE_COMMAND.test(commandLine);
}

/** dpkg's journal directory: files named by digits only are what apt's "dpkg was interrupted" looks for. */
export const DPKG_UPDATES_DIR = '/var/lib/dpkg/updates';
const UPDATES_MARK = '--- l20: dpkg journal';

/**
 * Read-only, no root needed: `dpkg --audit` (empty when every package is consistent), then the journal's
 * entries. Also the os stage's `dpkg-state` probe.
 */
export const PACKAGE_STATE_COMMAND: Command = {
  script:
    `LC_ALL=C dpkg --audit\necho '${UPDATES_MARK}'\n` +
    `if [ -d ${DPKG_UPDATES_DIR} ]; then find ${DPKG_UPDATES_DIR} -maxdepth 1 -type f -name '[0-9]*'; fi\n`,
};

export interface PackageState {
  /** What `dpkg --audit` printed (trimmed); empty when it found nothing. */
  audit: string;
  /** Journal entries left in /var/lib/dpkg/updates (paths). */
  journal: string[];
  /** The state could not be read (the probe failed): nothing is claimed either way. */
  unreadable?: string;
}

export function parsePackageState(r: Pick<RunResult, 'stdout' | 'stderr' | 'exitCode'>): PackageState {
  const at = r.stdout.indexOf(`${UPDATES_MARK}\n`);
  if (r.exitCode !== 0 || at < 0) {
    return { audit: '', journal: [], unreadable: `exit ${r.exitCode}: ${lastLines(r.stderr || r.stdout)}` };
  }
  const audit = r.stdout.slice(0, at).trim();
  const journal = r.stdout
    .slice(at + UPDATES_MARK.length + 1)
    .split('\n')
    .filter((l) => /\/\d+$/.test(l.trim()));
  return { audit, journal };
}

export function interrupted(s: PackageState): boolean {
  return s.audit !== '' || s.journal.length > 0;
}

/** The state in one line for evidence and notes. */
export function describePackageState(s: PackageState): string {
  if (s.unreadable) return `dpkg state unreadable (${s.unreadable})`;
  if (!interrupted(s)) return 'dpkg --audit: nothing to report; no dpkg journal entries';
  const n = s.journal.length;
  const journal = n > 0 ? `${n} dpkg journal entr${n === 1 ? 'y' : 'ies'} in ${DPKG_UPDATES_DIR}` : '';
  // The audit's package rows are indented; its headings are not.
  const names = s.audit
    .split('\n')
    .filter((l) => l.startsWith(' '))
    .map((l) => l.trim().split(/\s+/)[0]);
  const audit = s.audit !== '' ? `dpkg --audit: ${names.join(', ')}` : '';
  return [journal, audit].filter(Boolean).join('; ');
}

export interface PackageRepair {
  /** clean: nothing was interrupted; repaired: it was and is consistent now; busy: a live process holds the lock. */
  outcome: 'clean' | 'repaired' | 'busy' | 'failed';
  /** The commands run, in order (for the report and the journal's rollback lines). */
  ran: string[];
  detail: string;
}

export interface RepairOptions {
  signal?: AbortSignal;
  /** How long a lock held by a live apt or dpkg is waited for (default 5 min). */
  lockWaitMs?: number;
  /** Between attempts on a held lock (default 3 s). */
  retryMs?: number;
  /** Lines for the panes while it works. */
  note?: (line: string) => void;
}

/** dpkg's and apt's words for a lock a live process holds (dpkg 1.21 lib/dpkg/dbmodify.c, apt 2.4 fileutl.cc). */
const LOCK_HELD = /lock was locked by another process|lock is locked by another process|Could not get lock/;
const HOLDER = /(?:with pid|held by process) (\d+)(?: \(([^)]+)\))?/;

const NONINTERACTIVE = ['env', 'DEBIAN_FRONTEND=noninteractive'];
const CONFIGURE = [...NONINTERACTIVE, 'dpkg', '--configure', '-a'];
const FIX_BROKEN = [...NONINTERACTIVE, 'apt-get', '-f', 'install', '-y'];

/**
 * Repairs an interrupted package operation on `host`: `dpkg --configure -a` finishes what was unpacked and
 * merges the journal; when `dpkg --audit` still reports packages (half-installed ones need their files
 * again), `apt-get -f install -y` installs them again. Nothing is removed.
 */
export async function repairPackageState(
  run: HostRunner,
  host: string,
  options: RepairOptions = {},
): Promise<PackageRepair> {
  const read = async () =>
    parsePackageState(
      await run(host, 'os.package-guard', PACKAGE_STATE_COMMAND, { readsOnly: true, timeoutMs: 60_000 }),
    );
  const before = await read();
  if (before.unreadable) return { outcome: 'failed', ran: [], detail: describePackageState(before) };
  if (!interrupted(before)) return { outcome: 'clean', ran: [], detail: describePackageState(before) };
  const was = describePackageState(before);
  options.note?.(`${host}: a package operation was interrupted (${was}); repairing with dpkg --configure -a`);
  const ran: string[] = [];
  const configured = await underLock(run, host, CONFIGURE, ran, options);
  if (configured.outcome !== 'ok') return { outcome: configured.outcome, ran, detail: configured.detail };
  let after = await read();
  if (!after.unreadable && after.audit !== '') {
    options.note?.(`${host}: after dpkg --configure -a, ${describePackageState(after)}; running apt-get -f install -y`);
    const fixed = await underLock(run, host, FIX_BROKEN, ran, options);
    if (fixed.outcome !== 'ok') return { outcome: fixed.outcome, ran, detail: fixed.detail };
    after = await read();
  }
  if (after.unreadable || interrupted(after)) {
    const detail = `still interrupted after ${ran.join(' and ')}: ${describePackageState(after)}\n${after.audit}`;
    return { outcome: 'failed', ran, detail: detail.trim() };
  }
  const detail = `was: ${describePackageState(before)}; ${ran.join(', then ')} finished it (dpkg --audit is empty)`;
  return { outcome: 'repaired', ran, detail };
}

/** Runs a package command as root, waiting (bounded) while a live process holds the dpkg lock. */
async function underLock(
  run: HostRunner,
  host: string,
  argv: string[],
  ran: string[],
  options: RepairOptions,
): Promise<{ outcome: 'ok' | 'busy' | 'failed'; detail: string }> {
  const deadline = Date.now() + (options.lockWaitMs ?? 5 * 60_000);
  const shown = argv.slice(NONINTERACTIVE.length).join(' ');
  for (;;) {
    const r = await run(host, 'os.package-guard', { argv }, { sudo: true, timeoutMs: 30 * 60_000 });
    const text = `${r.stdout}\n${r.stderr}`;
    if (r.exitCode === 0) {
      ran.push(shown);
      return { outcome: 'ok', detail: '' };
    }
    if (r.cancelled || r.timedOut) {
      return { outcome: 'failed', detail: `${shown} ${r.cancelled ? 'was cancelled' : 'timed out'}` };
    }
    if (!LOCK_HELD.test(text)) {
      return { outcome: 'failed', detail: `${shown} exited ${r.exitCode ?? r.signal}: ${lastLines(text)}` };
    }
    const holder = HOLDER.exec(text);
    const who = holder ? `process ${holder[1]}${holder[2] ? ` (${holder[2]})` : ''}` : 'another process';
    if (Date.now() >= deadline) {
      const waited = Math.round((options.lockWaitMs ?? 300_000) / 1000);
      return {
        outcome: 'busy',
        detail:
          `the dpkg lock is held by live ${who}; waited ${waited} s and left it alone (never broken): ` +
          'run apply again when it has finished',
      };
    }
    options.note?.(`${host}: the dpkg lock is held by ${who}; waiting for it to finish (the lock is never broken)`);
    await sleep(options.retryMs ?? 3000, options.signal);
    if (options.signal?.aborted) {
      return { outcome: 'failed', detail: `cancelled while waiting for ${who} to release the dpkg lock` };
    }
  }
}

/** The last lines of a command's output, for an error (cleaned, as every display point is). */
const lastLines = (text: string): string => tailLines(text, 6).join('\n');
