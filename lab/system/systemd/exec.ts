/**
 * How systemd runs a unit's commands in the lab: the execution environment (Environment=,
 * EnvironmentFile=, User=, the variables systemd sets), where output goes (the journal line by
 * line, or StandardOutput=append:/file:), and the two ways a command runs — a registered service
 * program (programs.ts) for daemons, or the machine's shell interpreter for everything else (so
 * a script in /usr/local/sbin really runs and changes the model). Each run is a process in the
 * process table while it lasts.
 */
import { quoteArgv } from '../../shell/args.js';
import { rng } from '../../util/prng.js';
import { SYSTEM_ACCOUNTS } from '../base-units.js';
import type { OutputSink } from '../exec-context.js';
import { DEFAULT_LIMITS, parseUnitLimit, type ResourceLimits } from '../limits.js';
import type { MachineSystem } from '../machine-system.js';
import type { ExitStatus, Process } from '../processes.js';
import { findServiceProgram, type ServiceContext } from './programs.js';
import {
  parseEnvironment,
  parseEnvironmentFile,
  unitValue,
  unitValues,
  type ExecCommand,
  type UnitFile,
} from './unit-file.js';

export type OutputTarget =
  { kind: 'journal' } | { kind: 'append' | 'file'; path: string } | { kind: 'null' } | { kind: 'inherit' };

/** StandardOutput= / StandardError= values the lab understands. */
export function parseOutputTarget(v: string | undefined, dflt: OutputTarget): OutputTarget {
  if (v === undefined || v === '') return dflt;
  if (v === 'journal' || v === 'syslog' || v === 'kmsg' || v === 'journal+console' || v === 'tty')
    return { kind: 'journal' };
  if (v === 'null') return { kind: 'null' };
  if (v === 'inherit') return { kind: 'inherit' };
  const m = /^(append|file|truncate):(.+)$/.exec(v);
  if (m) return { kind: m[1] === 'append' ? 'append' : 'file', path: m[2] as string };
  return dflt;
}

export interface ServiceIdentity {
  uid: number;
  gid: number;
  user: string;
  home: string;
}

/** User= → uid via /etc/passwd (root when unset); undefined for an unknown user. */
export async function serviceIdentity(
  sys: MachineSystem,
  file: UnitFile | undefined,
): Promise<ServiceIdentity | undefined> {
  const user = unitValue(file, 'Service', 'User') ?? 'root';
  const passwd = await sys.readFile('/etc/passwd').catch(() => '');
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f[0] === user || (/^\d+$/.test(user) && f[2] === user))
      return { user: f[0] as string, uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? '/' };
  }
  // Accounts a jammy server has that the lab's /etc/passwd does not list.
  const known = SYSTEM_ACCOUNTS.find(([name, uid]) => name === user || String(uid) === user);
  return known ? { user: known[0], uid: known[1], gid: known[2], home: known[3] } : undefined;
}

/** The environment systemd gives a service's processes. */
export async function serviceEnvironment(
  sys: MachineSystem,
  unit: string,
  file: UnitFile | undefined,
  id: ServiceIdentity,
  invocation: number,
): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    LANG: 'C.UTF-8',
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/snap/bin',
    INVOCATION_ID: rng(sys.machine.seed, sys.machine.hostname, 'invocation', unit, invocation).hex(32),
    // systemd sets these for User= services; the lab also sets them for root so tools see root.
    USER: id.user,
    LOGNAME: id.user,
    HOME: id.home,
    SHELL: id.uid === 0 ? '/bin/bash' : '/bin/bash',
  };
  for (const spec of unitValues(file, 'Service', 'EnvironmentFile')) {
    const optional = spec.startsWith('-');
    const path = optional ? spec.slice(1) : spec;
    try {
      Object.assign(env, parseEnvironmentFile(await sys.readFile(path)));
    } catch {
      if (!optional) throw new Error(`Failed to load environment files: No such file or directory`);
    }
  }
  Object.assign(env, parseEnvironment(unitValues(file, 'Service', 'Environment')));
  return env;
}

export function serviceLimits(file: UnitFile | undefined): ResourceLimits {
  const memlock = unitValue(file, 'Service', 'LimitMEMLOCK');
  const nofile = unitValue(file, 'Service', 'LimitNOFILE');
  return {
    memlock: (memlock !== undefined ? parseUnitLimit(memlock, true) : undefined) ?? DEFAULT_LIMITS.memlock,
    // systemd raises services' soft open-files limit only when asked; its hard default is 524288.
    nofile: (nofile !== undefined ? parseUnitLimit(nofile, false) : undefined) ?? DEFAULT_LIMITS.nofile,
  };
}

/** Collects a stream into journal lines: each complete line becomes one entry. */
function journalSink(
  sys: MachineSystem,
  unit: string,
  ident: () => string,
  pid: () => number,
): { sink: OutputSink; flush(): void } {
  let partial = '';
  const add = (message: string): void => {
    sys.journal.add({ at: sys.now(), boot: sys.boot.count, ident: ident(), pid: pid(), unit, message });
  };
  return {
    sink: async (chunk) => {
      partial += chunk.toString('utf8');
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        add(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
    },
    flush() {
      if (partial !== '') add(partial);
      partial = '';
    },
  };
}

/** A StandardOutput=/StandardError= file systemd could not open (status 209/210). */
export class OutputSetupError extends Error {
  constructor(readonly step: 'STDOUT' | 'STDERR') {
    super(`Failed to set up standard ${step === 'STDOUT' ? 'output' : 'error'}: No such file or directory`);
  }
}

export interface ServiceOutput {
  stdout: OutputSink;
  stderr: OutputSink;
  /** Writes what is left of an unfinished journal line. */
  flush(): void;
}

/**
 * Sinks for a service's stdout and stderr: the journal, or a file systemd opened as root
 * (append:, file:), or nothing. `file:` truncates when the service starts.
 */
export async function serviceOutput(
  sys: MachineSystem,
  unit: string,
  stdout: OutputTarget,
  stderr: OutputTarget,
  ident: () => string,
  pid: () => number,
): Promise<ServiceOutput> {
  const flushes: Array<() => void> = [];
  const make = async (t: OutputTarget): Promise<OutputSink> => {
    if (t.kind === 'null' || t.kind === 'inherit') return async () => undefined;
    if (t.kind === 'journal') {
      const j = journalSink(sys, unit, ident, pid);
      flushes.push(() => j.flush());
      return j.sink;
    }
    const path = t.path;
    // systemd opens the file (O_CREAT) before the process starts; a missing directory fails the
    // start at step STDOUT/STDERR.
    const fs = sys.shell.fsAs(0);
    await (async () => {
      const parent = path.slice(0, path.lastIndexOf('/')) || '/';
      if (!(await fs.stat(parent)).isDirectory) throw new Error('ENOTDIR');
      if (t.kind === 'file') await fs.writeFile(path, '');
      else if (!(await fs.exists(path))) await fs.writeFile(path, '');
    })().catch(() => {
      throw new OutputSetupError(t === stdout ? 'STDOUT' : 'STDERR');
    });
    return (chunk) => fs.appendFile(path, chunk.toString('latin1'), 'binary').catch(() => undefined);
  };
  const out = await make(stdout);
  // StandardError= defaults to inherit: the same destination as stdout.
  const err = stderr.kind === 'inherit' ? out : await make(stderr);
  return { stdout: out, stderr: err, flush: () => flushes.forEach((f) => f()) };
}

export interface RunSpec {
  unit: string;
  command: ExecCommand;
  env: Record<string, string>;
  id: ServiceIdentity;
  limits: ResourceLimits;
  output: ServiceOutput;
  cwd: string;
  /** Aborting it stops the command (systemctl stop, the unit's main process killed). */
  stop: AbortSignal;
  /** Called with the process once it exists (the manager tracks the main PID). */
  started?: (p: Process) => void;
  /** Type=notify programs call ready(); everything else is ready once started. */
  ready?: () => void;
}

/** Runs one command of a unit to its end: a service program if one claims it, else the shell. */
export async function runServiceCommand(sys: MachineSystem, spec: RunSpec): Promise<ExitStatus> {
  const ac = new AbortController();
  const onStop = (): void => ac.abort();
  if (spec.stop.aborted) ac.abort();
  else spec.stop.addEventListener('abort', onStop, { once: true });
  let killedBy: string | null = null;
  const proc = sys.processes.spawn({
    argv: spec.command.argv,
    uid: spec.id.uid,
    unit: spec.unit,
    limits: spec.limits,
    onSignal: (sig) => {
      if (
        sig === 'TERM' ||
        sig === 'INT' ||
        sig === 'QUIT' ||
        sig === 'HUP' ||
        sig === 'USR1' ||
        sig === 'USR2' ||
        sig === 'PIPE' ||
        sig === 'ALRM'
      ) {
        killedBy = sig;
        ac.abort();
      }
    },
  });
  // SIGKILL ends the process in the table at once; the code behind it must stop too.
  let killed: ExitStatus | undefined;
  void proc.exited.then((s) => {
    if (s.signal) {
      killed = s;
      killedBy ??= s.signal;
      ac.abort();
    }
  });
  spec.started?.(proc);
  let status: ExitStatus = { code: null, signal: 'KILL' };
  try {
    status = await runIt(sys, spec, proc, ac, () => killedBy);
    // A process the kernel already took down (SIGKILL) reports that, whatever its code did next.
    if (killed) status = killed;
    // A daemon that ends after a signal it handles reports being killed by it, as it re-raises.
    else if (killedBy && status.code === 0 && status.signal === null) status = { code: null, signal: killedBy };
    return status;
  } finally {
    spec.stop.removeEventListener('abort', onStop);
    if (sys.processes.get(proc.pid) === proc) sys.processes.exit(proc.pid, status);
  }
}

async function runIt(
  sys: MachineSystem,
  spec: RunSpec,
  proc: Process,
  ac: AbortController,
  killedBy: () => string | null,
): Promise<ExitStatus> {
  const m = sys.machine;
  const program = findServiceProgram(spec.command.argv, m);
  if (program) {
    let readyCalled = false;
    const ctx: ServiceContext = {
      machine: m,
      cluster: sys.cluster,
      unit: spec.unit,
      argv: spec.command.argv,
      env: spec.env,
      uid: spec.id.uid,
      main: proc,
      spawn: (argv, o) =>
        sys.processes.spawn({ ppid: proc.pid, uid: spec.id.uid, limits: spec.limits, ...o, argv, unit: spec.unit }),
      out: (t) => spec.output.stdout(Buffer.from(t, 'utf8')),
      err: (t) => spec.output.stderr(Buffer.from(t, 'utf8')),
      sleep: (ms) => m.clock.sleep(ms, ac.signal),
      idle: (ms) => m.clock.idle(ms, ac.signal),
      signal: ac.signal,
      ready: () => {
        if (!readyCalled) spec.ready?.();
        readyCalled = true;
      },
      until: () =>
        new Promise<void>((resolve) =>
          ac.signal.aborted ? resolve() : ac.signal.addEventListener('abort', () => resolve(), { once: true }),
        ),
    };
    const r = await program.run(ctx);
    if (typeof r !== 'number') return r;
    // A daemon that ends because it was told to (SIGTERM) exits cleanly, as most do.
    return { code: r, signal: null };
  }
  const exe = spec.command.argv[0] ?? '';
  if (exe.startsWith('/') && !(await sys.shell.fsAs(0).exists(exe))) {
    const log = (message: string): void =>
      sys.journal.add({ at: sys.now(), boot: sys.boot.count, ident: 'systemd', pid: 1, unit: spec.unit, message });
    log(`${spec.unit}: Failed to locate executable ${exe}: No such file or directory`);
    log(`${spec.unit}: Failed at step EXEC spawning ${exe}: No such file or directory`);
    return { code: 203, signal: null };
  }
  spec.ready?.();
  const res = await sys.shell.run({
    commandLine: quoteArgv(spec.command.argv),
    env: spec.env,
    stdin: Buffer.alloc(0),
    signal: ac.signal,
    stdout: spec.output.stdout,
    stderr: spec.output.stderr,
    uid: spec.id.uid,
    cwd: spec.cwd,
  });
  if (res.stdout.length > 0) await spec.output.stdout(res.stdout);
  if (res.stderr.length > 0) await spec.output.stderr(res.stderr);
  if (ac.signal.aborted) return { code: null, signal: killedBy() ?? 'TERM' };
  return { code: res.exitCode, signal: null };
}
