/**
 * The one place command lines are built. Every word is single-quoted unless it is made only of
 * characters no POSIX shell treats specially, so no config value can change a command's meaning.
 */
import type { Command, RunOptions } from './types.js';

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function quoteWord(word: string): string {
  if (word.includes('\0'))
    throw new Error(`refusing a shell word that contains NUL: ${JSON.stringify(word.slice(0, 40))}`);
  if (word !== '' && SAFE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A path as an ssh_config value: double-quoted so spaces stay in it, `\` and `"` escaped (OpenSSH
 * splits config lines like a shell), `%` doubled because IdentityFile and UserKnownHostsFile expand %-tokens.
 */
export function sshConfigPath(path: string): string {
  return `"${path.replace(/%/g, '%%').replace(/[\\"]/g, '\\$&')}"`;
}

export function quoteArgv(argv: readonly string[]): string {
  if (argv.length === 0) throw new Error('empty command');
  return argv.map(quoteWord).join(' ');
}

export interface BuiltCommand {
  /** The line handed to the remote shell (or `sh -c` locally). */
  line: string;
  /** Bytes to write to the command's stdin before closing it, if any. */
  stdin?: string | Buffer;
}

/**
 * What sudo runs: a root bash that hands a cancel on to the command's whole process group (issue 7).
 * Cancel and timeout send TERM to the SSH session's process group, but sshd sends it as the login user:
 * it reaches sudo and the user's processes, never a root one, and sudo without a pty (an exec channel has
 * none) relays it to its direct child only, so a root grandchild (an apt-get's dpkg, a script's background
 * job) used to run on, reparented to init.
 * This bash does get sudo's relayed TERM (or a HUP/INT) and, as root, signals its process group — the
 * SSH session's without a pty, the command's own when sudo's use_pty gives it one — then dies of it too.
 * The command runs in the background because bash runs a trap only once a foreground child has
 * exited; `wait` is interrupted at once. Otherwise nothing changes for the command:
 * - `<&0` keeps stdin: bash points a background job's stdin at /dev/null only when the job does not
 *   redirect fd 0 itself (so a `bash -s` script, the file content for `dd`, and what follows the `sudo -S`
 *   password line all still arrive).
 * - `wait $!` is the last command, so bash exits with the command's exit status. One difference: a command
 *   killed by a signal now reads as exit 128+n (the shell convention) instead of sudo re-raising it.
 * - The job's signals are the command's: traps are reset when it execs. Bash does start a background
 *   job with SIGINT and SIGQUIT ignored (no job control); nothing here sends either to a sudo command.
 * `l20` is the wrapper's $0, the name bash uses in its own error messages.
 */
export const SUDO_WRAPPER_SCRIPT = 'trap "trap - TERM HUP INT; kill -TERM 0" TERM HUP INT; "$@" <&0 & wait $!';
export const SUDO_WRAPPER_ARGV: readonly string[] = ['bash', '-c', SUDO_WRAPPER_SCRIPT, 'l20'];

/** The command inside the wrapper when `argv` (what sudo runs) is the wrapper form, else undefined. */
export function insideSudoWrapper(argv: readonly string[]): string[] | undefined {
  if (argv.length <= SUDO_WRAPPER_ARGV.length) return undefined;
  return SUDO_WRAPPER_ARGV.every((w, i) => argv[i] === w) ? argv.slice(SUDO_WRAPPER_ARGV.length) : undefined;
}

/**
 * A command line as the operator reads it: the sudo wrapper (plumbing that makes a cancel reach every root
 * process) left out, `sudo -n -- bash -c '…' l20 env LC_ALL=C id -u` → `sudo -n -- env LC_ALL=C id -u`.
 * The session log keeps the exact line that was sent.
 */
export function withoutSudoWrapper(line: string): string {
  return line.split(` ${quoteArgv(SUDO_WRAPPER_ARGV)} `).join(' ');
}

/**
 * Builds the line for a Command: `LC_ALL=C` always (parsers read the C locale), quoted env assignments,
 * `sudo -n --` for root (or `sudo -S -p ''` reading a password from stdin) with the wrapper above, then the
 * argv or `bash -s`:
 *   sudo -n -- bash -c 'trap "trap - TERM HUP INT; kill -TERM 0" TERM HUP INT; "$@" <&0 & wait $!' l20 env LC_ALL=C id -u
 */
export function buildCommand(command: Command, options: RunOptions = {}, sudoPassword?: string): BuiltCommand {
  const envWords: string[] = ['LC_ALL=C'];
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (!ENV_NAME.test(name))
      throw new Error(`invalid environment variable name ${JSON.stringify(name)}: use letters, digits and _`);
    envWords.push(`${name}=${quoteWord(value)}`);
  }
  let body: string;
  let stdin: string | Buffer | undefined;
  if ('argv' in command) {
    body = quoteArgv(command.argv);
    stdin = options.stdin;
  } else {
    body = quoteArgv(['bash', '-s', '--', ...(command.args ?? [])]);
    stdin = command.script;
  }
  let line: string;
  if (options.sudo) {
    // env goes after sudo so it survives sudo's env_reset; `env` keeps it a plain argv.
    // -k: ignore cached credentials, so sudo always reads the password we send and never passes it on.
    const sudo = sudoPassword !== undefined ? "sudo -k -S -p '' --" : 'sudo -n --';
    line = `${sudo} ${quoteArgv(SUDO_WRAPPER_ARGV)} env ${envWords.join(' ')} ${body}`;
    if (sudoPassword !== undefined) {
      const pw = `${sudoPassword}\n`;
      stdin = stdin === undefined ? pw : Buffer.concat([Buffer.from(pw), Buffer.from(stdin)]);
    }
  } else {
    line = `${envWords.join(' ')} ${body}`;
  }
  return stdin === undefined ? { line } : { line, stdin };
}
