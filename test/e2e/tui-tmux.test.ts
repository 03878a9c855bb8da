/**
 * End to end in a real terminal: the built binary under tmux, on the lab. Reaches the pipeline,
 * runs inventory on both hosts, sees both panes pass, quits, and finds the terminal restored.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SOCKET = `l20e2e-${process.pid}`;

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
}

function screen(): string {
  return tmux('capture-pane', '-p', '-t', 'e2e');
}

async function waitFor(pred: (s: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = screen();
    if (pred(last)) return last;
    await new Promise((r) => setTimeout(r, 50)); // polling interval for the condition, not a fixed wait
  }
  throw new Error(`timed out waiting for ${what}; screen:\n${last}`);
}

describe('TUI in a real terminal (tmux)', () => {
  afterAll(() => {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  });

  it('runs inventory on both lab hosts side by side and restores the terminal on quit', async () => {
    const home = mkdtempSync(join(tmpdir(), 'l20-e2e-home-'));
    tmux('-f', '/dev/null', 'new-session', '-d', '-s', 'e2e', '-x', '160', '-y', '48', '-c', ROOT,
      `env HOME=${home} XDG_STATE_HOME=${home}/state TERM=xterm-256color bash --norc --noprofile`);
    tmux('set-option', '-t', 'e2e', 'remain-on-exit', 'on');
    tmux('send-keys', '-t', 'e2e', 'clear; echo BEFORE-MARKER; node bin/l20-setup.js --lab; echo EXIT-CODE=$?', 'Enter');
    const pipeline = await waitFor((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    expect(pipeline).toContain('inventory');
    expect(pipeline).not.toContain('BEFORE-MARKER'); // the alternate screen is on
    expect(tmux('display', '-p', '-t', 'e2e', '#{alternate_on}').trim()).toBe('1');
    tmux('send-keys', '-t', 'e2e', 'r');
    const done = await waitFor((s) => /cluster checks/.test(s) && /✔ inventory\.cabling/.test(s) && /idle/.test(s), 'inventory to finish', 60_000);
    // Both panes, each with its verdicts.
    expect(done).toMatch(/l20-n1\s+127\.0\.0\.1:\d+\s+connected/);
    expect(done).toMatch(/l20-n2\s+127\.0\.0\.1:\d+\s+connected/);
    const passRows = done.split('\n').filter((l) => (l.match(/✔ gpus/g) ?? []).length > 0);
    expect(passRows.some((l) => (l.match(/✔ gpus\s+8 × NVIDIA L20/g) ?? []).length === 2)).toBe(true);
    expect(done).not.toMatch(/✘/);
    tmux('send-keys', '-t', 'e2e', 'q');
    const after = await waitFor((s) => s.includes('EXIT-CODE='), 'the shell prompt after quitting');
    expect(after).toContain('EXIT-CODE=0');
    expect(after).toContain('BEFORE-MARKER'); // the normal screen is back, with what was there before
    expect(after).not.toContain('l20-setup · pipeline');
    expect(tmux('display', '-p', '-t', 'e2e', '#{alternate_on}').trim()).toBe('0');
    expect(tmux('display', '-p', '-t', 'e2e', '#{cursor_flag}').trim()).toBe('1');
  });
});
