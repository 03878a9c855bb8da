/**
 * The one place command lines are built. Every word is single-quoted unless it is made only of
 * characters no POSIX shell treats specially, so no config value can change a command's meaning.
 */
import type { Command, RunOptions } from './types.js';

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function quoteWord(word: string): string {
  if (word.includes('\0')) throw new Error(`refusing a shell word that contains NUL: ${JSON.stringify(word.slice(0, 40))}`);
  if (word !== '' && SAFE_WORD.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
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
 * Builds the line for a Command: `LC_ALL=C` always (parsers read the C locale), quoted env assignments,
 * `sudo -n --` for root (or `sudo -S -p ''` reading a password from stdin), then the argv or `bash -s`.
 */
export function buildCommand(command: Command, options: RunOptions = {}, sudoPassword?: string): BuiltCommand {
  const envWords: string[] = ['LC_ALL=C'];
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (!ENV_NAME.test(name)) throw new Error(`invalid environment variable name ${JSON.stringify(name)}: use letters, digits and _`);
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
    line = `${sudo} env ${envWords.join(' ')} ${body}`;
    if (sudoPassword !== undefined) {
      const pw = `${sudoPassword}\n`;
      stdin = stdin === undefined ? pw : Buffer.concat([Buffer.from(pw), Buffer.from(stdin)]);
    }
  } else {
    line = `${envWords.join(' ')} ${body}`;
  }
  return stdin === undefined ? { line } : { line, stdin };
}
