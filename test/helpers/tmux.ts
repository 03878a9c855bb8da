/**
 * A private tmux server for end-to-end tests in a real terminal: sessions running a clean bash in the
 * repository with a fresh HOME; keys in, screens out, and waits on what the screen shows.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface Terminal {
  /** The fresh HOME the session's shell runs with. */
  home: string;
  shot(): string;
  keys(...keys: string[]): string;
  until(pred: (screen: string) => boolean, what: string, timeoutMs?: number): Promise<string>;
}

export function tmuxServer(socket: string) {
  const tmux = (...args: string[]): string => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
  function terminal(name: string, cols = 160, rows = 48): Terminal {
    const home = mkdtempSync(join(tmpdir(), 'l20-e2e-home-'));
    tmux(
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      name,
      '-x',
      String(cols),
      '-y',
      String(rows),
      '-c',
      ROOT,
      `env HOME=${home} XDG_STATE_HOME=${home}/state TERM=xterm-256color bash --norc --noprofile`,
    );
    const shot = (): string => tmux('capture-pane', '-p', '-t', name);
    return {
      home,
      shot,
      keys: (...keys) => tmux('send-keys', '-t', name, ...keys),
      async until(pred, what, timeoutMs = 60_000) {
        const deadline = Date.now() + timeoutMs;
        let last = '';
        while (Date.now() < deadline) {
          last = shot();
          if (pred(last)) return last;
          await new Promise((r) => setTimeout(r, 50)); // polling interval for the condition, not a fixed wait
        }
        throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
      },
    };
  }
  function close(): void {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  }
  return { tmux, terminal, close };
}
