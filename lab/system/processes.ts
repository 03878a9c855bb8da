/**
 * The process table of one machine: PIDs (from a seeded stream per boot, growing as Linux hands
 * them out), command lines, owners, resource limits, the unit a process belongs to, and signals.
 * Services (systemd.ts) and modelled programs (ray, vllm, perftest servers) create processes
 * here; ps, pgrep, pkill, kill and /proc/<pid> read and signal them.
 *
 * A process has no code of its own: whoever spawns it decides what a signal does (`onSignal`,
 * default: the process exits, killed by that signal) and ends it with `exit()`.
 */
import { rng, type Rng } from '../util/prng.js';
import { DEFAULT_LIMITS, type ResourceLimits } from './limits.js';

export interface ExitStatus {
  /** Exit code when it exited, else null. */
  code: number | null;
  /** Signal name without SIG (`TERM`) when a signal killed it, else null. */
  signal: string | null;
}

export interface SpawnOptions {
  argv: readonly string[];
  /** Owner (default root). */
  uid?: number;
  /** Parent pid (default 1). */
  ppid?: number;
  /** The systemd unit whose cgroup it is in. */
  unit?: string;
  limits?: ResourceLimits;
  /** A signal arrived (not KILL/STOP, which are not catchable); default: exit killed by it. */
  onSignal?: (signal: string, proc: Process) => void;
  /** Overrides the command name (`comm`, 15 characters) that ps and pgrep match. */
  comm?: string;
}

export interface Process {
  readonly pid: number;
  readonly ppid: number;
  readonly uid: number;
  readonly argv: readonly string[];
  readonly comm: string;
  /** Simulated ms since the Unix epoch. */
  readonly startedAt: number;
  readonly unit: string | undefined;
  readonly limits: ResourceLimits;
  /** Settles when the process is gone. */
  readonly exited: Promise<ExitStatus>;
}

interface Entry extends Process {
  onSignal: ((signal: string, proc: Process) => void) | undefined;
  resolve: (s: ExitStatus) => void;
}

/** Signals by number and name, as `kill -l` lists them (x86_64). */
export const SIGNALS: readonly string[] = [
  '',
  'HUP',
  'INT',
  'QUIT',
  'ILL',
  'TRAP',
  'ABRT',
  'BUS',
  'FPE',
  'KILL',
  'USR1',
  'SEGV',
  'USR2',
  'PIPE',
  'ALRM',
  'TERM',
  'STKFLT',
  'CHLD',
  'CONT',
  'STOP',
  'TSTP',
  'TTIN',
  'TTOU',
  'URG',
  'XCPU',
  'XFSZ',
  'VTALRM',
  'PROF',
  'WINCH',
  'POLL',
  'PWR',
  'SYS',
];

/** `TERM`, `SIGTERM`, `15` → `TERM`; undefined for an unknown signal. */
export function signalName(spec: string): string | undefined {
  if (/^\d+$/.test(spec)) {
    const n = Number(spec);
    return n === 0 ? '0' : SIGNALS[n] || undefined;
  }
  const name = spec.toUpperCase().replace(/^SIG/, '');
  if (name === 'IO') return 'POLL';
  if (name === 'IOT') return 'ABRT';
  return SIGNALS.includes(name) && name !== '' ? name : undefined;
}

export type SignalResult = 'ok' | 'ESRCH' | 'EPERM';

/** PIDs handed out one by one at boot: init and the kernel threads ps lists first. */
const KERNEL_PIDS = 6;

export class ProcessTable {
  private readonly procs = new Map<number, Entry>();
  private pids: Rng;
  private next = 1;
  /** Changes whenever a process comes or goes (the /proc tree's directory listing follows it). */
  version = 0;

  constructor(
    private readonly seed: number,
    private readonly hostname: string,
    private readonly now: () => number,
  ) {
    this.pids = rng(seed, hostname, 'pid', 0);
  }

  /**
   * Forgets every process (the machine went down) and restarts PID allocation for boot `boot`:
   * PID 1 first, then system daemons from a seeded point, as a fresh kernel hands them out.
   */
  reset(boot: number): void {
    for (const p of this.procs.values()) p.resolve({ code: null, signal: 'KILL' });
    this.procs.clear();
    this.version++;
    this.pids = rng(this.seed, this.hostname, 'pid', boot);
    this.next = 1;
  }

  private allocate(): number {
    const pid = this.next;
    // init and the first kernel threads take the low PIDs; later ones are spread out as the
    // kernel's many threads and short-lived boot helpers took the numbers in between.
    this.next = pid < KERNEL_PIDS ? pid + 1 : pid === KERNEL_PIDS ? this.pids.int(560, 720) : pid + this.pids.int(1, 9);
    return pid;
  }

  spawn(opts: SpawnOptions): Process {
    const pid = this.allocate();
    let resolve!: (s: ExitStatus) => void;
    const exited = new Promise<ExitStatus>((r) => (resolve = r));
    const argv0 = opts.argv[0] ?? '';
    const entry: Entry = {
      pid,
      ppid: pid === 1 ? 0 : (opts.ppid ?? 1),
      uid: opts.uid ?? 0,
      argv: [...opts.argv],
      comm: (opts.comm ?? argv0.slice(argv0.lastIndexOf('/') + 1)).slice(0, 15),
      startedAt: this.now(),
      unit: opts.unit,
      limits: opts.limits ?? DEFAULT_LIMITS,
      exited,
      onSignal: opts.onSignal,
      resolve,
    };
    this.procs.set(pid, entry);
    this.version++;
    return entry;
  }

  get(pid: number): Process | undefined {
    return this.procs.get(pid);
  }

  /** Every process, by PID. */
  list(): Process[] {
    return [...this.procs.values()].sort((a, b) => a.pid - b.pid);
  }

  /** Ends a process; its children are re-parented to PID 1 as the kernel does. */
  exit(pid: number, status: ExitStatus): void {
    const p = this.procs.get(pid);
    if (!p) return;
    this.procs.delete(pid);
    this.version++;
    for (const c of this.procs.values()) if (c.ppid === pid) (c as { ppid: number }).ppid = 1;
    p.resolve(status);
  }

  /**
   * Delivers `signal` (a name from signalName, or '0' to test) from a sender with `senderUid`:
   * ESRCH when there is no such process, EPERM when a non-root sender signals someone else's.
   */
  signal(pid: number, signal: string, senderUid: number): SignalResult {
    const p = this.procs.get(pid);
    if (!p) return 'ESRCH';
    if (senderUid !== 0 && senderUid !== p.uid) return 'EPERM';
    if (signal === '0' || signal === 'CONT' || signal === 'CHLD' || signal === 'WINCH' || signal === 'URG') return 'ok';
    // PID 1 ignores signals it has no handler for; the lab's init has none that end it.
    if (pid === 1) return 'ok';
    if (signal === 'STOP' || signal === 'TSTP') return 'ok';
    if (signal !== 'KILL' && p.onSignal) p.onSignal(signal, p);
    else this.exit(pid, { code: null, signal });
    return 'ok';
  }
}
