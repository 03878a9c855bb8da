/**
 * A small interactive login shell for `ssh -p PORT l20@127.0.0.1` into a lab host (what
 * `l20-setup lab serve` prints). Each line runs as its own command in the machine's shell with
 * the working directory carried over; with a pty the lab does the terminal's line editing (echo,
 * backspace, Ctrl-C, Ctrl-D) and CRLF output. The tool itself only uses exec channels.
 */
import type { ServerChannel } from 'ssh2';
import type { Machine } from './model/types.js';
import { shellQuote } from './shell/args.js';
import type { Shell } from './shell/shell.js';

export interface InteractiveOptions {
  channel: ServerChannel;
  pty: boolean;
  machine: Machine;
  shell: Shell;
  env: Record<string, string>;
  id: number;
}

export function runInteractive(o: InteractiveOptions): void {
  const { channel, pty, machine: m } = o;
  let cwd = m.user.home;
  let buffer = '';
  let lastCode = 0;
  let running: AbortController | undefined;
  let ended = false;
  let queue = Promise.resolve();
  const cwdFile = `/run/.lab-shell-${o.id}`;
  const write = (s: string): void => {
    if (!ended) channel.write(pty ? s.replace(/\r?\n/g, '\r\n') : s);
  };
  const prompt = (): void => {
    if (!pty) return;
    const shown =
      cwd === m.user.home ? '~' : cwd.startsWith(`${m.user.home}/`) ? `~${cwd.slice(m.user.home.length)}` : cwd;
    write(`${m.user.name}@${m.hostname}:${shown}$ `);
  };
  const finish = (code: number): void => {
    if (ended) return;
    if (pty) write('logout\n');
    ended = true;
    channel.exit(code);
    channel.end();
  };
  const execute = async (line: string): Promise<void> => {
    const trimmed = line.trim();
    const exit = /^(exit|logout)(\s+(\d+))?$/.exec(trimmed);
    if (exit) return finish(exit[3] !== undefined ? Number(exit[3]) : lastCode);
    if (trimmed !== '') {
      running = new AbortController();
      const script = `cd ${shellQuote(cwd)} 2>/dev/null\n${line}\n__lab_rc=$?; pwd > ${cwdFile}; exit $__lab_rc`;
      const r = await o.shell.run({
        commandLine: script,
        env: { ...o.env, PWD: cwd },
        stdin: Buffer.alloc(0),
        signal: running.signal,
      });
      running = undefined;
      lastCode = r.exitCode;
      write(r.stdout.toString('utf8'));
      write(r.stderr.toString('utf8'));
      cwd = (await o.shell.fs.readFile(cwdFile).catch(() => `${cwd}\n`)).trim() || cwd;
    }
    prompt();
  };
  const enqueue = (line: string): void => {
    queue = queue.then(() => (ended ? undefined : execute(line)));
  };

  if (pty) write(`Welcome to ${m.os.prettyName} (GNU/Linux ${m.os.kernelRelease} x86_64)\n\n`);
  prompt();
  channel.on('data', (data: Buffer) => {
    const s = data.toString('utf8');
    if (!pty) {
      buffer += s;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        enqueue(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
      return;
    }
    for (let i = 0; i < s.length; i++) {
      const c = s[i] as string;
      if (c === '\x1b') {
        // Skip escape sequences (arrow keys …): ESC [ params final-byte.
        if (s[i + 1] === '[') for (i += 2; i < s.length && !/[@-~]/.test(s[i] as string); i++);
        continue;
      }
      if (c === '\r' || c === '\n') {
        write('\n');
        enqueue(buffer);
        buffer = '';
      } else if (c === '\x7f' || c === '\b') {
        if (buffer.length > 0) {
          buffer = buffer.slice(0, -1);
          write('\b \b');
        }
      } else if (c === '\x03') {
        running?.abort();
        buffer = '';
        write('^C\n');
        if (!running) prompt();
      } else if (c === '\x04') {
        if (buffer === '') queue = queue.then(() => finish(lastCode));
      } else if (c >= ' ') {
        buffer += c;
        write(c);
      }
    }
  });
  channel.on('end', () => {
    if (pty) return;
    if (buffer.trim() !== '') enqueue(buffer);
    queue = queue.then(() => finish(lastCode));
  });
  channel.on('close', () => {
    ended = true;
    running?.abort();
  });
}
