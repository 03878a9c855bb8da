/**
 * Commands that run other commands: `bash`/`sh` (with -s and -c, which just-bash lacks or
 * handles without the caller's exports), `env` and `sudo` (env_reset, secure_path, SUDO_* as
 * Ubuntu's sudo 1.9.9 sets them). Each re-enters the interpreter through runNested.
 */
import { decodeBytesToUtf8, defineCommand, type Command, type ResolvedCommandContext } from 'just-bash';
import { insideSudoWrapper } from '../../src/transport/quote.js';
import { leadingOptions } from '../system/arg-loops.js';
import { quoteArgv } from './args.js';
import { childEnv, runNested, stdinBytes } from './nested.js';

export interface CommandLookup {
  /** Absolute path of `name` as sudo/env would exec it, or undefined if there is none. */
  lookup(name: string, ctx: ResolvedCommandContext): Promise<string | undefined>;
  user: { name: string; uid: number; gid: number; sudoNoPasswd: boolean };
}

const SECURE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/snap/bin';
/** sudo's built-in env_keep list when env_reset is on (plus TERM, which is always kept). */
const SUDO_KEEP =
  /^(TERM|COLORS|DISPLAY|HOSTNAME|HISTSIZE|KDEDIR|LS_COLORS|MAIL|PS1|PS2|QTDIR|USERNAME|LANG|LC_[A-Z_]+|LANGUAGE|LINGUAS|_XKB_CHARSET|XAUTHORITY)$/;

function parseShellArgs(args: string[]): { mode: 'c' | 's' | 'file'; flags: string[]; operands: string[] } | string {
  let mode: 'c' | 's' | 'file' | undefined;
  const flags: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--' || a === '-') {
      i++;
      break;
    }
    if (a === '--login' || a === '--norc' || a === '--noprofile' || a === '--posix' || a === '--noediting') continue;
    if (!/^[-+][A-Za-z]+$/.test(a)) break;
    for (const c of a.slice(1)) {
      if (c === 'c') mode = 'c';
      else if (c === 's') mode = 's';
      else if (c === 'o') {
        const opt = args[++i];
        if (opt === undefined) return `bash: ${a}: option requires an argument`;
        flags.push(`${a[0]}o ${opt}`);
      } else if ('euxvfnhaCb'.includes(c)) flags.push(`${a[0]}${c}`);
      else if (!'lirp'.includes(c)) return `bash: ${a[0]}${c}: invalid option`;
    }
  }
  const operands = args.slice(i);
  return { mode: mode ?? (operands.length > 0 ? 'file' : 's'), flags, operands };
}

function shellCommand(name: 'bash' | 'sh'): Command {
  return defineCommand(name, async (args, ctx) => {
    const parsed = parseShellArgs(args);
    if (typeof parsed === 'string') return { stdout: '', stderr: `${parsed}\n`, exitCode: 2 };
    const env = childEnv(ctx);
    const setFlags = parsed.flags;
    if (parsed.mode === 'c') {
      const [script, , ...positional] = parsed.operands;
      if (script === undefined)
        return { stdout: '', stderr: `${name}: -c: option requires an argument\n`, exitCode: 2 };
      return runNested(ctx, script, { env, positional, stdin: stdinBytes(ctx), setFlags });
    }
    if (parsed.mode === 's') {
      // The script is stdin; real bash reads it line by line, so commands in it see no more input.
      return runNested(ctx, decodeBytesToUtf8(ctx.stdin), { env, positional: parsed.operands, stdin: '', setFlags });
    }
    const [file, ...positional] = parsed.operands;
    const path = ctx.fs.resolvePath(ctx.cwd, file ?? '');
    let script: string;
    try {
      script = await ctx.fs.readFile(path);
    } catch {
      return { stdout: '', stderr: `${name}: ${file}: No such file or directory\n`, exitCode: 127 };
    }
    return runNested(ctx, script, { env, positional, stdin: stdinBytes(ctx), setFlags });
  });
}

/** gnulib quotes with ‘…’ in UTF-8 locales and '…' in C. */
function quoteFor(env: Record<string, string>, s: string): string {
  const loc = env.LC_ALL || env.LC_MESSAGES || env.LANG || '';
  return /utf-?8/i.test(loc) ? `‘${s}’` : `'${s}'`;
}

function envCommand(lookup: CommandLookup): Command {
  return defineCommand('env', async (args, ctx) => {
    const before = childEnv(ctx);
    let env = { ...before };
    const start = leadingOptions(args, (a, next) => {
      if (a === '-i' || a === '--ignore-environment' || a === '-') env = {};
      else if (a === '-u' || a === '--unset') delete env[next() ?? ''];
      else if (a.startsWith('--unset=')) delete env[a.slice(8)];
      else if (a.startsWith('-u') && a.length > 2) delete env[a.slice(2)];
      else if (a.startsWith('-') && a !== '-')
        return {
          stdout: '',
          stderr: `env: invalid option -- '${a.slice(1, 2)}'\nTry 'env --help' for more information.\n`,
          exitCode: 125,
        };
      else return 'command';
      return undefined;
    });
    if (typeof start !== 'number') return start;
    let i = start;
    for (; i < args.length && /^[^=]+=/.test(args[i] as string); i++) {
      const a = args[i] as string;
      const eq = a.indexOf('=');
      env[a.slice(0, eq)] = a.slice(eq + 1);
    }
    const argv = args.slice(i);
    if (argv.length === 0)
      return {
        stdout: Object.entries(env)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(''),
        stderr: '',
        exitCode: 0,
      };
    const cmd = argv[0] as string;
    if (!(await lookup.lookup(cmd, ctx))) {
      return { stdout: '', stderr: `env: ${quoteFor(before, cmd)}: No such file or directory\n`, exitCode: 127 };
    }
    return runNested(ctx, quoteArgv(argv), { env, stdin: stdinBytes(ctx) });
  });
}

function sudoCommand(lookup: CommandLookup): Command {
  return defineCommand('sudo', async (args, ctx) => {
    let nonInteractive = false;
    let readStdin = false;
    const start = leadingOptions(args, (a, next) => {
      if (!a.startsWith('-') || a === '-') return 'command';
      if (a === '--non-interactive') nonInteractive = true;
      else if (a === '--stdin') readStdin = true;
      else if (a === '--prompt' || a === '-p' || a === '-u' || a === '--user' || a === '-g') next();
      else if (
        a.startsWith('--prompt=') ||
        a.startsWith('--user=') ||
        a === '--preserve-env' ||
        a === '--set-home' ||
        a === '--login'
      )
        return undefined;
      else if (/^-[nSEHiksAbp]+$/.test(a)) {
        if (a.includes('n')) nonInteractive = true;
        if (a.includes('S')) readStdin = true;
        if (a.endsWith('p')) next();
      } else
        return {
          stdout: '',
          stderr: `sudo: invalid option -- '${a.slice(1, 2)}'\nusage: sudo -h | -K | -k | -V\n`,
          exitCode: 1,
        };
      return undefined;
    });
    if (typeof start !== 'number') return start;
    let i = start;
    let stdin = stdinBytes(ctx);
    if (readStdin) {
      // The password line (accepted whatever it is): sudo reads it before running the command.
      const nl = stdin.indexOf('\n');
      stdin = nl < 0 ? '' : stdin.slice(nl + 1);
    } else if (!lookup.user.sudoNoPasswd) {
      const msg = nonInteractive
        ? 'sudo: a password is required\n'
        : 'sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper\nsudo: a password is required\n';
      return { stdout: '', stderr: msg, exitCode: 1 };
    }
    // `sudo VAR=value cmd`: a command spec of ALL lets the caller set variables (sudoers(5)).
    const assigned: Record<string, string> = {};
    for (; i < args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i] as string); i++) {
      const a = args[i] as string;
      assigned[a.slice(0, a.indexOf('='))] = a.slice(a.indexOf('=') + 1);
    }
    const argv = args.slice(i);
    if (argv.length === 0) {
      return {
        stdout: '',
        stderr: 'usage: sudo -h | -K | -k | -V\nusage: sudo -v [-ABknS] [-g group] [-h host] [-p prompt] [-u user]\n',
        exitCode: 1,
      };
    }
    const path = await lookup.lookup(argv[0] as string, ctx);
    if (!path) return { stdout: '', stderr: `sudo: ${argv[0]}: command not found\n`, exitCode: 1 };
    const caller = childEnv(ctx);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(caller)) if (SUDO_KEEP.test(k)) env[k] = v;
    Object.assign(env, {
      PATH: SECURE_PATH,
      HOME: '/root',
      LOGNAME: 'root',
      USER: 'root',
      SHELL: '/bin/bash',
      MAIL: '/var/mail/root',
      SUDO_COMMAND: [path, ...argv.slice(1)].join(' '),
      SUDO_USER: lookup.user.name,
      SUDO_UID: String(lookup.user.uid),
      SUDO_GID: String(lookup.user.gid),
    });
    Object.assign(env, assigned);
    // The transport runs sudo commands below a bash whose only job is to pass a cancel on to the
    // command's process group (src/transport/quote.ts); a lab cancel aborts the whole run anyway, so the
    // lab runs the command inside it directly, exactly as without the wrapper.
    const command = insideSudoWrapper(argv) ?? argv;
    return runNested(ctx, quoteArgv(command), { env, stdin, uid: 0 });
  });
}

export function wrapperCommands(lookup: CommandLookup): Command[] {
  return [shellCommand('bash'), shellCommand('sh'), envCommand(lookup), sudoCommand(lookup)];
}
