/**
 * One machine's shell: just-bash interpreters over the machine's file system (an in-memory root
 * with /proc and /sys mounted from the model) with the modelled tools registered as commands.
 * Every exec request, and every nested script a lab command runs (sudo, bash -c), runs as a fresh
 * shell in an interpreter of its own over the one file system, so files written by one command are
 * seen by the next, as on a real host. Each interpreter's view of the files carries its script
 * level (system/exec-context.ts): the uid permissions are checked for and where live output goes.
 *
 * A tool exists only while a package providing it is installed: its command and its stub in
 * /usr/bin (which just-bash's PATH lookup needs) are added by syncCommands(), so `command -v`,
 * `type` and bash's own not-found path behave as on the real host.
 */
import {
  Bash,
  InMemoryFs,
  MountableFs,
  defineCommand,
  getCommandNames,
  type BashExecResult,
  type Command,
  type IFileSystem,
} from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import { isInstalled } from '../model/packages.js';
import type { Machine } from '../model/types.js';
import { buildProcfs } from '../fs/procfs.js';
import { BASE_DIRS, BASE_LINKS, baseFiles } from '../fs/rootfs.js';
import { buildSysfs } from '../fs/sysfs.js';
import { TreeFs, errnoText, errorPath } from '../fs/vfs.js';
import {
  LEVEL_ID,
  asReader,
  enterLevel,
  leaveLevel,
  type ExecLevel,
  type LevelExecOptions,
  type OutputSink,
} from '../system/exec-context.js';
import { LIVE_ERR, LIVE_OUT, liveOutputPlugin } from '../system/live.js';
import { systemFs } from '../system/perms.js';
import { withSystemProc } from '../system/procfs.js';
import { systemCommands } from '../system/commands.js';
import { isRoot, type Tool } from '../tools/types.js';
import { coreutilCommands } from './coreutils.js';
import { exportPrelude } from './nested.js';
import { programCommand, programsPlugin } from './programs.js';
import { commandNotFound, rewriteStderr } from './notfound.js';
import { wrapperCommands, type CommandLookup } from './wrappers.js';

export interface RunRequest {
  commandLine: string;
  env: Record<string, string>;
  stdin: Buffer;
  signal: AbortSignal;
  /**
   * Where output goes while the command runs (streaming, system/live.ts); what is not written
   * there comes back in the result. Without sinks everything comes back in the result.
   */
  stdout?: OutputSink;
  stderr?: OutputSink;
  /** Effective uid of the run (default: root when env.USER is root, else the machine's user). */
  uid?: number;
  /** Working directory (default: env.HOME, else the user's home). */
  cwd?: string;
  /** The shell's pid (`$$`; default 4242): sshd's session shells each have their own (system/sessions.ts). */
  pid?: number;
}

export interface RunResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface Shell {
  /** The files as the login user sees them (lab code and tests outside any command). */
  readonly fs: IFileSystem;
  /** The files as `uid` sees them: system code (boot, systemd, package scripts) works as root, `fsAs(0)`. */
  fsAs(uid: number): IFileSystem;
  run(req: RunRequest): Promise<RunResult>;
  /** Adds or removes tool commands after the machine's packages changed. */
  syncCommands(): Promise<void>;
}

/** Shell keywords and builtins: sudo/env cannot exec them. */
const SHELL_BUILTINS = new Set([
  'cd',
  'export',
  'set',
  'unset',
  'source',
  '.',
  'alias',
  'unalias',
  'exit',
  'eval',
  'exec',
  'read',
  'local',
  'declare',
  'typeset',
  'readonly',
  'shift',
  'return',
  'break',
  'continue',
  'trap',
  'ulimit',
  'umask',
  'wait',
  'jobs',
  'history',
  'command',
  'builtin',
  'type',
  'hash',
  'help',
  'let',
  'shopt',
  'pushd',
  'popd',
  'dirs',
  'getopts',
  ':',
]);

/** Limits raised so transport tests can move 10+ MB and long loops run as on a real shell. */
const LIMITS = {
  maxOutputSize: 512 * 1024 * 1024,
  maxStringLength: 256 * 1024 * 1024,
  maxLoopIterations: 100_000_000,
  maxArrayElements: 100_000_000,
  maxCommandCount: 100_000_000,
  maxWorkUnits: 1_000_000_000_000,
  maxLiveBytes: 1024 * 1024 * 1024,
  maxInputBytes: 1024 * 1024 * 1024,
  maxHeredocSize: 256 * 1024 * 1024,
  maxExecutionTimeMs: 24 * 3600 * 1000,
};

export async function createShell(machine: Machine, cluster: Cluster, tools: readonly Tool[]): Promise<Shell> {
  const now = (): Date => new Date(machine.clock.now());
  const memory = new InMemoryFs(baseFiles(machine));
  for (const d of [
    ...BASE_DIRS,
    '/root',
    machine.user.home,
    '/tmp',
    '/var/tmp',
    '/dev/fd',
    `/run/user/${machine.user.uid}`,
  ])
    await memory.mkdir(d, { recursive: true });
  for (const [target, path] of BASE_LINKS) await memory.symlink(target, path);
  for (const [path, mode] of machine.dirs ?? []) {
    await memory.mkdir(path, { recursive: true });
    await memory.chmod(path, mode);
  }
  for (const [path, target] of machine.links ?? []) {
    await memory.mkdir(path.slice(0, path.lastIndexOf('/')) || '/', { recursive: true });
    await memory.symlink(target, path);
  }
  for (const f of ['null', 'zero', 'stdin', 'stdout', 'stderr']) await memory.writeFile(`/dev/${f}`, '');
  for (const f of [LIVE_OUT, LIVE_ERR]) await memory.writeFile(f, '');
  for (const f of [LIVE_OUT, LIVE_ERR, '/dev/null']) await memory.chmod(f, 0o666);
  for (const d of ['/tmp', '/var/tmp']) await memory.chmod(d, 0o1777);
  await memory.chmod('/root', 0o700);
  await memory.chmod(`/run/user/${machine.user.uid}`, 0o700);
  for (const p of [...Object.keys(baseFiles(machine)), ...BASE_DIRS]) await memory.utimes(p, now(), now());
  const bootTime = (): Date => new Date(machine.system.boot.at);
  const sysTree = new TreeFs({
    mountPoint: '/sys',
    root: () => buildSysfs(machine),
    version: () => machine.revision,
    fileSize: 4096,
    mtime: bootTime,
  });
  const procTree = new TreeFs({
    mountPoint: '/proc',
    root: () => withSystemProc(buildProcfs(machine), machine),
    version: () => machine.revision + machine.system.procVersion(),
    fileSize: 0,
    mtime: now,
  });

  /**
   * The file system as one uid sees it: owners, permissions, file times from the simulated clock,
   * live output devices to the level's sinks (system/), /sys and /proc rendered from the model (the
   * trees are shared; /proc renders some files by who reads them).
   */
  const view = (uid: number, level?: ExecLevel, levelId?: number): MountableFs => {
    const v = new MountableFs({ base: systemFs(memory, machine.system.files, now, uid, level) });
    v.mount('/sys', sysTree);
    v.mount('/proc', readingAs(procTree, uid));
    if (levelId !== undefined) Object.defineProperty(v, LEVEL_ID, { value: levelId });
    return v;
  };
  const views = new Map<number, IFileSystem>();
  const fsAs = (uid: number): IFileSystem => {
    let v = views.get(uid);
    if (!v) views.set(uid, (v = view(uid)));
    return v;
  };

  const available = (t: Tool): boolean => !t.packages || t.packages.some((p) => isInstalled(machine.packages, p));
  const byName = new Map(tools.map((t) => [t.name, t]));
  const lookup: CommandLookup = {
    user: machine.user,
    async lookup(name, ctx) {
      if (name.includes('/')) {
        const path = ctx.fs.resolvePath(ctx.cwd, name);
        try {
          return (await ctx.fs.stat(path)).isFile ? path : undefined;
        } catch {
          return undefined;
        }
      }
      if (SHELL_BUILTINS.has(name)) return undefined;
      const tool = byName.get(name);
      if (tool) return available(tool) ? tool.path : undefined;
      const known = ctx.getRegisteredCommands?.() ?? [];
      return known.includes(name) ? `/usr/bin/${name}` : undefined;
    },
  };

  const toolCommand = (tool: Tool): Command =>
    defineCommand(tool.name, async (args, ctx) => {
      const root = isRoot(ctx);
      // Removed since the last sync: answer as bash would for a missing command.
      if (!available(tool)) return commandNotFound(tool.name, root);
      // apt-get and dpkg add and remove commands while they run.
      return tool.run(args, { machine, cluster, ctx, root, syncCommands: () => syncCommands() });
    });

  const core = [
    ...wrapperCommands(lookup),
    ...coreutilCommands(machine, lookup),
    ...systemCommands(machine),
    programCommand(machine, cluster),
  ];
  const writeStub = async (name: string): Promise<void> => {
    await memory.writeFile(`/usr/bin/${name}`, `#!/bin/bash\n# Built-in command: ${name}\n`);
    await memory.chmod(`/usr/bin/${name}`, 0o755);
  };
  // just-bash lays out stubs only on a bare InMemoryFs; it dispatches a registered command when
  // PATH lookup finds its stub in /usr/bin (or /bin, a symlink to it here).
  for (const name of new Set([...getCommandNames(), ...core.map((c) => c.name)])) await writeStub(name);

  // Tool commands registered so far: a tool stays registered once its package was installed (its
  // command answers not-found when the package is gone again, and its stub is removed).
  const registered = new Map<string, Command>();
  // Commands that never get the live-output marker (system/live.ts): builtins, and printenv, which
  // would print it.
  const builtins = new Set([
    ...SHELL_BUILTINS,
    'exec',
    'eval',
    'source',
    '.',
    'kill',
    'echo',
    'printf',
    'test',
    '[',
    'true',
    'false',
    'pwd',
    'printenv',
  ]);
  // Programs outside /usr/bin (a venv's torchrun, pip, python) run by absolute path (programs.ts).
  const programs = programsPlugin();
  /** Interpreters whose script runs now: apt-get and dpkg add commands to them while they run. */
  const running = new Set<Bash>();
  const interpreter = (level: ExecLevel, fs: IFileSystem): Bash => {
    const bash = new Bash({
      fs,
      cwd: machine.user.home,
      env: {
        HOME: machine.user.home,
        USER: machine.user.name,
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      },
      customCommands: [...core, ...registered.values()],
      executionLimits: LIMITS,
      // The lab's own commands are trusted host code that waits on timers (simulated time); the
      // defense-in-depth sandbox would block setTimeout inside them.
      defenseInDepth: false,
      // `sleep` waits wall-clock time at any speed (transport timeouts are tested with it). just-bash
      // does not hand its abort signal to `sleep`; the level's is the one to obey.
      sleep: (ms) => machine.clock.sleep(ms, level.signal, true).then(() => undefined),
      processInfo: {
        pid: level.pid ?? 4242,
        ppid: (level.pid ?? 4242) - 1,
        uid: machine.user.uid,
        gid: machine.user.gid,
      },
    });
    bash.registerTransformPlugin(liveOutputPlugin(level, builtins));
    bash.registerTransformPlugin(programs);
    return bash;
  };

  /** Runs `script` as `level`'s own, in a fresh interpreter whose file system view carries the level. */
  const runLevel = async (
    level: ExecLevel,
    script: string,
    opts: LevelExecOptions & { rawScript?: boolean },
  ): Promise<BashExecResult> => {
    const id = enterLevel(level);
    const bash = interpreter(level, view(level.uid, level, id));
    running.add(bash);
    try {
      return await bash.exec(script, {
        cwd: opts.cwd,
        replaceEnv: true,
        env: {},
        ...(opts.rawScript ? { rawScript: true } : {}),
        ...(opts.stdin !== undefined ? { stdin: opts.stdin, stdinKind: opts.stdinKind ?? 'bytes' } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } finally {
      running.delete(bash);
      leaveLevel(id);
    }
  };
  const nest: ExecLevel['nest'] = (child, script, opts) => runLevel(child, script, opts);

  const syncCommands = async (): Promise<void> => {
    for (const tool of tools) {
      const want = available(tool);
      if (want && !registered.has(tool.name)) {
        const command = toolCommand(tool);
        registered.set(tool.name, command);
        for (const bash of running) bash.registerCommand(command);
      }
      const stub = `/usr/bin/${tool.name}`;
      if (want) await writeStub(tool.name);
      else if (await memory.exists(stub)) await memory.rm(stub);
    }
  };
  await syncCommands();

  const shell: Shell = {
    fs: fsAs(machine.user.uid),
    fsAs,
    syncCommands,
    async run(req) {
      // Export the session environment explicitly: values passed through exec options are not
      // exported to child commands by just-bash.
      const script = exportPrelude(req.env) + req.commandLine;
      const root = req.env.USER === 'root';
      const level: ExecLevel = {
        ...(req.stdout ? { stdout: req.stdout } : {}),
        ...(req.stderr ? { stderr: liveStderr(req.stderr, root) } : {}),
        uid: req.uid ?? (root ? 0 : machine.user.uid),
        signal: req.signal,
        ...(req.pid !== undefined ? { pid: req.pid } : {}),
        depth: 0,
        nest,
      };
      let res;
      try {
        res = await runLevel(level, script, {
          cwd: req.cwd ?? req.env.HOME ?? machine.user.home,
          rawScript: true,
          stdin: req.stdin.toString('latin1'),
          stdinKind: 'bytes',
          signal: req.signal,
        });
      } catch (e) {
        // just-bash lets a failed redirection write (a read-only sysfs attribute, a file the user
        // may not write) escape exec(); bash would report it and go on, the lab ends the command there.
        const path = errorPath(e);
        return {
          stdout: Buffer.alloc(0),
          stderr: Buffer.from(`bash: ${path ?? 'line 1'}: ${errnoText(e)}\n`),
          exitCode: 1,
        };
      }
      const stdout = Buffer.from(res.stdout, res.stdoutKind === 'bytes' ? 'latin1' : 'utf8');
      const stderr = rewriteStderr(res.stderr, root);
      return { stdout, stderr: Buffer.from(stderr, 'utf8'), exitCode: res.exitCode };
    },
  };
  machine.system.attachShell(shell);
  return shell;
}

/** A view of a rendered tree (/proc) whose files render for `uid` (exec-context.ts asReader). */
function readingAs(tree: IFileSystem, uid: number): IFileSystem {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(tree, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      let w = wrapped.get(prop);
      if (!w) {
        const f = value as (...a: unknown[]) => unknown;
        wrapped.set(prop, (w = (...a: unknown[]) => asReader(uid, () => f.apply(target, a))));
      }
      return w;
    },
  });
}

/** A live stderr sink that gets the same rewriting as a finished command's stderr. */
export function liveStderr(sink: OutputSink, root: boolean): OutputSink {
  return (chunk) => sink(Buffer.from(rewriteStderr(chunk.toString('utf8'), root), 'utf8'));
}
