/**
 * Service programs: long-running daemons a unit's ExecStart= starts (sshd, chronyd, `ray start
 * --block`, `vllm serve`). A command line no program claims runs through the shell interpreter
 * instead, which suits scripts and one-shot commands; a daemon needs a program so it keeps running,
 * owns processes, writes its log over time and reacts to `systemctl stop`.
 *
 * Registering one (e.g. for Ray, in the Ray engineer's module):
 *
 *   registerServiceProgram({
 *     name: 'ray',
 *     matches: (argv) => argv[0]?.endsWith('/bin/ray') === true && argv[1] === 'start' && argv.includes('--block'),
 *     async run(ctx) {
 *       ctx.spawn(['/opt/l20/venv/lib/python3.10/site-packages/ray/core/src/ray/raylet/raylet', …]);
 *       await ctx.out('Local node IP: 192.168.100.1\n');
 *       ctx.ready();
 *       while (await ctx.idle(5000)) await ctx.out('heartbeat\n');   // until the unit stops
 *       return 0;
 *     },
 *   });
 */
import type { Cluster } from '../../model/cluster.js';
import type { Machine } from '../../model/types.js';
import type { ExitStatus, Process, SpawnOptions } from '../processes.js';

export interface ServiceContext {
  machine: Machine;
  cluster: Cluster | undefined;
  /** `foo.service`. */
  unit: string;
  argv: readonly string[];
  /** The service's environment (Environment=, EnvironmentFile=, systemd's own variables). */
  env: Readonly<Record<string, string>>;
  uid: number;
  /** The main process, already in the process table with argv. */
  main: Process;
  /** A further process in the unit's cgroup (stopped with the unit). */
  spawn(argv: readonly string[], opts?: Omit<SpawnOptions, 'argv' | 'unit'>): Process;
  /** Writes to the service's stdout / stderr (the journal or StandardOutput=), streaming. */
  out(text: string): Promise<void>;
  err(text: string): Promise<void>;
  /**
   * Work that takes modelled time (a start-up phase): scaled by the lab speed, a jump at 'max'.
   * False once the unit is being stopped.
   */
  sleep(ms: number): Promise<boolean>;
  /**
   * Waits for the clock without driving it (clock.idle): use it for periodic work — a loop on
   * sleep() would spin at 'max'. False once the unit is being stopped.
   */
  idle(ms: number): Promise<boolean>;
  /** Aborted when the unit stops or the main process gets SIGTERM/SIGINT. */
  signal: AbortSignal;
  /** Type=notify services: startup is complete (systemctl start returns). Other types are ready at once. */
  ready(): void;
  /** Resolves when `signal` aborts. */
  until(): Promise<void>;
}

export interface ServiceProgram {
  /** Short name for the README and errors. */
  name: string;
  /** Whether this program is what `argv` (ExecStart= after expansion) runs on this machine. */
  matches(argv: readonly string[], machine: Machine): boolean;
  /** Runs until the service ends; the exit code (or status) of the main process. */
  run(ctx: ServiceContext): Promise<number | ExitStatus>;
}

const PROGRAMS: ServiceProgram[] = [];

/** Later registrations win over earlier ones for the same command line. */
export function registerServiceProgram(p: ServiceProgram): void {
  PROGRAMS.unshift(p);
}

export function findServiceProgram(argv: readonly string[], machine: Machine): ServiceProgram | undefined {
  return PROGRAMS.find((p) => p.matches(argv, machine));
}

/**
 * A daemon that runs until stopped: `paths` are the binaries it answers for; `children` are the
 * extra processes it keeps (chronyd's second process, sshd's listener title).
 */
export function daemonProgram(
  name: string,
  paths: readonly string[],
  opts: { children?: (argv: readonly string[]) => string[][]; comm?: string } = {},
): ServiceProgram {
  return {
    name,
    matches: (argv) => paths.includes(argv[0] ?? ''),
    async run(ctx) {
      for (const child of opts.children?.(ctx.argv) ?? []) ctx.spawn(child, { ppid: ctx.main.pid, uid: ctx.uid });
      ctx.ready();
      await ctx.until();
      return 0;
    },
  };
}

// The daemons of a fresh jammy server.
for (const [name, paths] of [
  ['systemd-journald', ['/lib/systemd/systemd-journald']],
  ['systemd-udevd', ['/lib/systemd/systemd-udevd']],
  ['systemd-networkd', ['/lib/systemd/systemd-networkd']],
  ['systemd-resolved', ['/lib/systemd/systemd-resolved']],
  ['systemd-timesyncd', ['/lib/systemd/systemd-timesyncd']],
  ['systemd-logind', ['/lib/systemd/systemd-logind']],
  ['dbus-daemon', ['/usr/bin/dbus-daemon']],
  ['cron', ['/usr/sbin/cron']],
  ['rsyslogd', ['/usr/sbin/rsyslogd']],
  ['sshd', ['/usr/sbin/sshd']],
] as const) {
  registerServiceProgram(daemonProgram(name, paths));
}
