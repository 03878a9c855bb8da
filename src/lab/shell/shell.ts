/**
 * One machine's shell: a just-bash interpreter over the machine's file system (an in-memory root
 * with /proc and /sys mounted from the model) with the modelled tools registered as commands.
 * Every exec request runs as a fresh shell in this one interpreter, so files written by one
 * command are seen by the next, as on a real host.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Bash, InMemoryFs, MountableFs, defineCommand, getCommandNames, type Command, type IFileSystem } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import { isInstalled } from '../model/packages.js';
import type { Machine } from '../model/types.js';
import { buildProcfs } from '../fs/procfs.js';
import { BASE_DIRS, BASE_LINKS, baseFiles } from '../fs/rootfs.js';
import { buildSysfs } from '../fs/sysfs.js';
import { TreeFs } from '../fs/vfs.js';
import { isRoot, type Tool } from '../tools/types.js';
import { coreutilCommands } from './coreutils.js';
import { exportPrelude } from './nested.js';
import { commandNotFound } from './notfound.js';
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

function toolCommand(tool: Tool, machine: Machine, cluster: Cluster): Command {
  return defineCommand(tool.name, async (args, ctx) => {
    const root = isRoot(ctx);
    if (tool.packages && !tool.packages.some((p) => isInstalled(machine.packages, p))) return commandNotFound(tool.name, root);
    return tool.run(args, { machine, cluster, ctx, root });
  });
}

const currentSignal = new AsyncLocalStorage<AbortSignal>();

export async function createShell(machine: Machine, cluster: Cluster, tools: readonly Tool[]): Promise<Shell> {
  const base = new InMemoryFs(baseFiles(machine));
  for (const d of [...BASE_DIRS, '/root', machine.user.home, '/tmp']) await base.mkdir(d, { recursive: true });
  for (const [target, path] of BASE_LINKS) await base.symlink(target, path);

  const fs = new MountableFs({ base });
  const mtime = (): Date => new Date(machine.clock.now());
  const bootTime = (): Date => new Date(machine.clock.now() - machine.clock.uptimeSeconds() * 1000);
  fs.mount('/sys', new TreeFs({ mountPoint: '/sys', root: () => buildSysfs(machine), version: () => machine.revision, fileSize: 4096, mtime: bootTime }));
  fs.mount('/proc', new TreeFs({ mountPoint: '/proc', root: () => buildProcfs(machine), version: () => machine.revision, fileSize: 0, mtime }));

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
      if (tool) return !tool.packages || tool.packages.some((p) => isInstalled(machine.packages, p)) ? tool.path : undefined;
      const known = ctx.getRegisteredCommands?.() ?? [];
      return known.includes(name) ? `/usr/bin/${name}` : undefined;
    },
  };

  const customCommands = [
    ...wrapperCommands(lookup),
    ...coreutilCommands(machine, lookup),
    ...tools.map((t) => toolCommand(t, machine, cluster)),
  ];
  // just-bash only lays out /dev and the command stubs on a bare InMemoryFs; it dispatches a
  // registered command when PATH lookup finds its stub in /usr/bin (or /bin, a symlink here).
  for (const d of ['/dev/fd']) await base.mkdir(d, { recursive: true });
  for (const f of ['null', 'zero', 'stdin', 'stdout', 'stderr']) await base.writeFile(`/dev/${f}`, '');
  for (const name of new Set([...getCommandNames(), ...customCommands.map((c) => c.name)])) {
    await base.writeFile(`/usr/bin/${name}`, `#!/bin/bash\n# Built-in command: ${name}\n`);
    await base.chmod(`/usr/bin/${name}`, 0o755);
  }

  const bash = new Bash({
    fs,
    cwd: machine.user.home,
    env: { HOME: machine.user.home, USER: machine.user.name, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
    customCommands,
    executionLimits: LIMITS,
    // The lab's own commands are trusted host code that waits on timers (simulated time); the
    // defense-in-depth sandbox would block setTimeout inside them.
    defenseInDepth: false,
    // `sleep` waits wall-clock time at any speed (transport timeouts are tested with it). just-bash
    // does not hand its abort signal to `sleep`; the exec's signal travels in async context.
    sleep: (ms) => machine.clock.sleep(ms, currentSignal.getStore(), true).then(() => undefined),
    processInfo: { pid: 4242, ppid: 4241, uid: machine.user.uid, gid: machine.user.gid },
  });

  return {
    fs,
    async run(req) {
      // Export the session environment explicitly: values passed through exec options are not
      // exported to child commands by just-bash.
      const script = exportPrelude(req.env) + req.commandLine;
      const res = await currentSignal.run(req.signal, () => bash.exec(script, {
        cwd: req.env.HOME ?? machine.user.home,
        replaceEnv: true,
        env: {},
        rawScript: true,
        stdin: req.stdin.toString('latin1'),
        stdinKind: 'bytes',
        signal: req.signal,
      }));
      const stdout = Buffer.from(res.stdout, res.stdoutKind === 'bytes' ? 'latin1' : 'utf8');
      return { stdout, stderr: Buffer.from(res.stderr, 'utf8'), exitCode: res.exitCode };
    },
  };
}
