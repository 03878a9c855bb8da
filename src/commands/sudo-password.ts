/**
 * Where the sudo password comes from, for hosts whose sudo asks for one. Never a flag value or an
 * environment variable (both are readable by other processes of the user through /proc, and end up in
 * shell history and CI logs): either typed at a prompt with echo off (`--ask-sudo-password`), or the
 * first line of standard input (`--sudo-password-stdin`, for scripts: `pass show x | l20-setup check …`).
 * It lives in memory only; the transport sends it on stdin to `sudo -S`, and only to a host whose
 * `sudo -n true` showed it is needed.
 */
import { UsageError, type CliValues } from './common.js';

export interface PasswordInput {
  stdin: NodeJS.ReadStream;
  /** Where the prompt goes (the terminal; stderr, so stdout stays clean for --json). */
  prompt: NodeJS.WritableStream;
}

const DEFAULT_INPUT = (): PasswordInput => ({ stdin: process.stdin, prompt: process.stderr });

/** The sudo password the flags ask for, or undefined without either flag. `interactive`: the TUI needs stdin for keys. */
export async function sudoPasswordFromCli(
  values: CliValues,
  interactive: boolean,
  input: PasswordInput = DEFAULT_INPUT(),
): Promise<string | undefined> {
  const fromStdin = values['sudo-password-stdin'] ?? false;
  const ask = values['ask-sudo-password'] ?? false;
  if (fromStdin && ask) throw new UsageError('--ask-sudo-password and --sudo-password-stdin: choose one');
  if (fromStdin) {
    if (interactive)
      throw new UsageError(
        '--sudo-password-stdin: the TUI reads its keys from standard input; use --ask-sudo-password',
      );
    if (input.stdin.isTTY)
      throw new UsageError(
        '--sudo-password-stdin: standard input is a terminal; pipe the password in, or use --ask-sudo-password',
      );
    return firstLine(await readAll(input.stdin));
  }
  if (ask) {
    if (!input.stdin.isTTY || typeof input.stdin.setRawMode !== 'function') {
      throw new UsageError(
        '--ask-sudo-password needs a terminal on standard input; in scripts pipe it to --sudo-password-stdin',
      );
    }
    return promptHidden(input, 'sudo password for the hosts (kept in memory only, never stored): ');
  }
  return undefined;
}

function firstLine(text: string): string {
  const line = text.split('\n')[0]!.replace(/\r$/, '');
  if (line === '') throw new UsageError('--sudo-password-stdin: standard input had no password (an empty first line)');
  return line;
}

function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer | string) => chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c)));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.once('error', reject);
  });
}

/** Reads one line with echo off; backspace edits, Ctrl-C or Ctrl-D on an empty line cancels. */
function promptHidden(input: PasswordInput, question: string): Promise<string> {
  const { stdin, prompt } = input;
  prompt.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      prompt.write('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') {
          if (typed === '') return finish(new UsageError('--ask-sudo-password: no password typed'));
          return finish();
        }
        if (ch === '\u0003' || (ch === '\u0004' && typed === ''))
          return finish(new UsageError('cancelled at the sudo password prompt'));
        if (ch === '\u007f' || ch === '\b') typed = [...typed].slice(0, -1).join('');
        else if (ch >= ' ') typed += ch;
      }
    };
    stdin.on('data', onData);
  });
}
