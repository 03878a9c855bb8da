/**
 * The system side of one simulated machine (`machine.system`): boot state, file owners, the
 * kernel's ring buffer, processes, the journal and systemd. Created with the machine; the shell
 * attaches itself once it exists (systemd runs commands through it), and startLab() performs
 * the initial boot (boot.ts) before the SSH server listens.
 */
import { SessionShells } from './sessions.js';
import type { IFileSystem } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import type { Machine } from '../model/types.js';
// Types only: the shell imports this module at run time, not the other way round.
import type { RunRequest, RunResult } from '../shell/shell.js';
import { Journal } from './journal.js';
import { KernelLog } from './kernel.js';
import { FileOwners } from './perms.js';
import { ProcessTable } from './processes.js';
import { Systemd } from './systemd/manager.js';

/** What systemd needs of the machine's shell (shell/shell.ts implements it). */
export interface ShellRunner {
  readonly fs: IFileSystem;
  fsAs(uid: number): IFileSystem;
  run(req: RunRequest): Promise<RunResult>;
  syncCommands(): Promise<void>;
}

/** `up`: serving; `down`: shutting down or booting — the SSH server refuses connections. */
export type PowerState = 'up' | 'down';

export interface BootState {
  /** 0 for the boot the lab starts in, +1 per reboot. */
  count: number;
  /** Simulated ms since the epoch when this boot's kernel started. */
  at: number;
  power: PowerState;
}

/** The lab starts with every machine up for 10 minutes. */
export const INITIAL_UPTIME_MS = 600_000;

export class MachineSystem {
  readonly boot: BootState;
  readonly files: FileOwners;
  readonly kernel: KernelLog;
  readonly processes: ProcessTable;
  readonly sessions = new SessionShells();
  readonly journal: Journal;
  readonly systemd: Systemd;
  cluster: Cluster | undefined;
  /** Boot ids by boot number (journalctl's `-- Boot <id> --`). */
  readonly bootIds: string[] = [];
  private shellRef: ShellRunner | undefined;
  private readonly powerListeners = new Set<(state: PowerState) => void>();

  constructor(readonly machine: Machine) {
    const m = machine;
    this.boot = { count: 0, at: m.clock.now() - INITIAL_UPTIME_MS, power: 'up' };
    this.files = new FileOwners({
      name: m.user.name,
      uid: m.user.uid,
      gid: m.user.gid,
      home: m.user.home,
      groups: [4, 24, 27, 30, 46, 110],
    });
    this.kernel = new KernelLog(() => this.uptimeMs() / 1000);
    this.processes = new ProcessTable(m.seed, m.hostname, () => this.now());
    this.journal = new Journal(m.hostname);
    this.systemd = new Systemd(this);
  }

  /** A boot's id as journalctl prints it (32 hex digits). */
  bootIdOf(boot: number): string {
    return (this.bootIds[boot] ?? this.machine.bootId).replace(/-/g, '');
  }

  private pinned: number | undefined;

  /**
   * The time system events are stamped with: the clock, or a pinned instant while the lab's
   * initial boot replays what happened during the machine's boot minutes ago.
   */
  now(): number {
    return this.pinned ?? this.machine.clock.now();
  }

  pinTime(ms: number | undefined): void {
    this.pinned = ms;
  }

  /** Milliseconds since this boot's kernel started. */
  uptimeMs(): number {
    return this.machine.clock.now() - this.boot.at;
  }

  attachShell(shell: ShellRunner): void {
    this.shellRef = shell;
  }

  get shell(): ShellRunner {
    if (!this.shellRef) throw new Error(`${this.machine.hostname}: no shell attached to the machine yet`);
    return this.shellRef;
  }

  get hasShell(): boolean {
    return this.shellRef !== undefined;
  }

  /** Reads a file as root (system code: unit files, /etc/passwd). */
  readFile(path: string): Promise<string> {
    return this.shell.fsAs(0).readFile(path);
  }

  /** Changes whenever /proc's directory listing changes (processes come and go). */
  procVersion(): number {
    return this.processes.version;
  }

  /** Listens to power changes (the SSH server closes and reopens); returns the unsubscribe. */
  onPower(listener: (state: PowerState) => void): () => void {
    this.powerListeners.add(listener);
    return () => this.powerListeners.delete(listener);
  }

  setPower(state: PowerState): void {
    if (this.boot.power === state) return;
    this.boot.power = state;
    for (const l of [...this.powerListeners]) l(state);
  }
}
