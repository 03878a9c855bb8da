/**
 * One machine's shell: a just-bash interpreter over the machine's file system (an in-memory root
 * with /proc and /sys mounted from the model) with the modelled tools registered as commands.
 * Every exec request runs as a fresh shell in this one interpreter, so files written by one
 * command are seen by the next, as on a real host.
 *
 * A tool exists only while a package providing it is installed: its command and its stub in
 * /usr/bin (which just-bash's PATH lookup needs) are added by syncCommands(), so `command -v`,
 * `type` and bash's own not-found path behave as on the real host.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Bash, InMemoryFs, MountableFs, defineCommand, getCommandNames, type Command, type IFileSystem } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import { isInstalled } from '../model/packages.js';
import type { Machine } from '../model/types.js';
import { buildProcfs } from '../fs/procfs.js';
import { BASE_DIRS, BASE_LINKS, baseFiles } from '../fs/rootfs.js';
import { buildSysfs } from '../fs/sysfs.js';
import { TreeFs, errnoText, errorPath } from '../fs/vfs.js';
import { isRoot, type Tool } from '../tools/types.js';
import { coreutilCommands } from './coreutils.js';
import { exportPrelude } from './nested.js';
import { programCommand, programsPlugin } from './programs.js';
import { commandNotFound, rewriteNotFound } from './notfound.js';
import { wrapperCommands, type CommandLookup } from './wrappers.js';

export interface RunRequest {
  commandLine: string;
  env: Record<string, string>;
  stdin: Buffer;
  signal: AbortSignal;
}

export interface RunResult {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}

export interface Shell {
  readonly fs: IFileSystem;
  run(req: RunRequest): Promise<RunResult>;
  /** Adds or removes tool commands after the machine's packages changed. */
  syncCommands(): Promise<void>;
}

/** Shell keywords and builtins: sudo/env cannot exec them. */
const SHELL_BUILTINS = new Set([
  'cd', 'export', 'set', 'unset', 'source', '.', 'alias', 'unalias', 'exit', 'eval', 'exec', 'read', 'local', 'declare',
  'typeset', 'readonly', 'shift', 'return', 'break', 'continue', 'trap', 'ulimit', 'umask', 'wait', 'jobs', 'history',
  'command', 'builtin', 'type', 'hash', 'help', 'let', 'shopt', 'pushd', 'popd', 'dirs', 'getopts', ':',
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

const WRITES = new Set(['writeFile', 'appendFile', 'mkdir', 'cp', 'mv', 'symlink', 'link', 'utimes']);

/**
 * Stamps every file the shell writes with the simulated clock instead of the host's time, so
 * `ls -l` and `stat` are as deterministic as the rest of the lab.
 */
function clockedFs(base: InMemoryFs, now: () => Date): InMemoryFs {
  return new Proxy(base, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof prop !== 'string' || !WRITES.has(prop) || typeof value !== 'function') {
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      if (prop === 'utimes') return (path: string) => target.utimes(path, now(), now());
      return async (...args: unknown[]) => {
        const res: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const path = prop === 'symlink' || prop === 'link' || prop === 'cp' || prop === 'mv' ? args[1] : args[0];
        if (typeof path === 'string' && prop !== 'symlink') await target.utimes(path, now(), now()).catch(() => undefined);
        return res;
      };
    },
  });
}

const currentSignal = new AsyncLocalStorage<AbortSignal>();

export async function createShell(machine: Machine, cluster: Cluster, tools: readonly Tool[]): Promise<Shell> {
  const now = (): Date => new Date(machine.clock.now());
  const base = clockedFs(new InMemoryFs(baseFiles(machine)), now);
  for (const d of [...BASE_DIRS, '/root', machine.user.home, '/tmp', '/dev/fd']) await base.mkdir(d, { recursive: true });
  for (const [target, path] of BASE_LINKS) await base.symlink(target, path);
  for (const f of ['null', 'zero', 'stdin', 'stdout', 'stderr']) await base.writeFile(`/dev/${f}`, '');
  for (const p of Object.keys(baseFiles(machine))) await base.utimes(p, now(), now());

  const fs = new MountableFs({ base });
  const bootTime = (): Date => new Date(machine.clock.now() - machine.clock.uptimeSeconds() * 1000);
  fs.mount('/sys', new TreeFs({ mountPoint: '/sys', root: () => buildSysfs(machine), version: () => machine.revision, fileSize: 4096, mtime: bootTime }));
  fs.mount('/proc', new TreeFs({ mountPoint: '/proc', root: () => buildProcfs(machine), version: () => machine.revision, fileSize: 0, mtime: now }));

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
      return tool.run(args, { machine, cluster, ctx, root });
    });

  const core = [...wrapperCommands(lookup), ...coreutilCommands(machine, lookup), programCommand(machine, cluster)];
  const writeStub = async (name: string): Promise<void> => {
    await base.writeFile(`/usr/bin/${name}`, `#!/bin/bash\n# Built-in command: ${name}\n`);
    await base.chmod(`/usr/bin/${name}`, 0o755);
  };
  // just-bash lays out stubs only on a bare InMemoryFs; it dispatches a registered command when
  // PATH lookup finds its stub in /usr/bin (or /bin, a symlink to it here).
  for (const name of new Set([...getCommandNames(), ...core.map((c) => c.name)])) await writeStub(name);

  const registered = new Set<string>();
  const bash = new Bash({
    fs,
    cwd: machine.user.home,
    env: { HOME: machine.user.home, USER: machine.user.name, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
    customCommands: core,
    executionLimits: LIMITS,
    // The lab's own commands are trusted host code that waits on timers (simulated time); the
    // defense-in-depth sandbox would block setTimeout inside them.
    defenseInDepth: false,
    // `sleep` waits wall-clock time at any speed (transport timeouts are tested with it). just-bash
    // does not hand its abort signal to `sleep`; the exec's signal travels in async context.
    sleep: (ms) => machine.clock.sleep(ms, currentSignal.getStore(), true).then(() => undefined),
    processInfo: { pid: 4242, ppid: 4241, uid: machine.user.uid, gid: machine.user.gid },
  });

  const syncCommands = async (): Promise<void> => {
    for (const tool of tools) {
      const want = available(tool);
      if (want && !registered.has(tool.name)) {
        bash.registerCommand(toolCommand(tool));
        registered.add(tool.name);
      }
      const stub = `/usr/bin/${tool.name}`;
      if (want) await writeStub(tool.name);
      else if (await base.exists(stub)) await base.rm(stub);
    }
  };
  // Programs outside /usr/bin (a venv's torchrun, pip, python) run by absolute path (programs.ts).
  bash.registerTransformPlugin(programsPlugin());
  await syncCommands();

  return {
    fs,
    syncCommands,
    async run(req) {
      // Export the session environment explicitly: values passed through exec options are not
      // exported to child commands by just-bash.
      const script = exportPrelude(req.env) + req.commandLine;
      let res;
      try {
        res = await currentSignal.run(req.signal, () => bash.exec(script, {
          cwd: req.env.HOME ?? machine.user.home,
          replaceEnv: true,
          env: {},
          rawScript: true,
          stdin: req.stdin.toString('latin1'),
          stdinKind: 'bytes',
          signal: req.signal,
        }));
      } catch (e) {
        // just-bash lets a failed redirection write (a read-only sysfs attribute) escape exec();
        // bash would report it and go on, the lab ends the command there.
        const path = errorPath(e);
        return { stdout: Buffer.alloc(0), stderr: Buffer.from(`bash: ${path ?? 'line 1'}: ${errnoText(e)}\n`), exitCode: 1 };
      }
      const stdout = Buffer.from(res.stdout, res.stdoutKind === 'bytes' ? 'latin1' : 'utf8');
      const stderr = rewriteNotFound(res.stderr, req.env.USER === 'root');
      return { stdout, stderr: Buffer.from(stderr, 'utf8'), exitCode: res.exitCode };
    },
  };
}
