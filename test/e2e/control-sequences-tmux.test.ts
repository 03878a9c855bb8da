/**
 * Hostile control sequences in remote output, in a real terminal: `lab serve` runs in its own process,
 * every kind in HOSTILE is written as root over SSH into /etc/systemd/system/l20-ray.service on both
 * hosts (the ray stage's `ray-unit` probe cats it), and the built TUI runs the ray stage under tmux so
 * the lines are in both panes' live output. tmux is the witness: with set-clipboard on an OSC 52 would
 * create a paste buffer, OSC 0/2 would set the pane title, ESC k (allow-rename on) the window name,
 * BEL the window's bell flag, CSI 3J would empty the history, 2J/H/A/ESC c would break the frame,
 * ?1000h would turn mouse reporting on. (Ink's own rendering drops some sequences — the CSI ones, ESC k —
 * but passes OSC 52, OSC 0/2 and BEL: with sanitize() an identity, this test fails on the paste buffer,
 * the title, the bell and the screen text.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadInventoryFile } from '../../src/config/store.js';
import { hostsFromConfig } from '../../src/target.js';
import { FORBIDDEN, HOSTILE, hostileLines } from '../helpers/hostile-output.js';
import { tmuxServer } from '../helpers/tmux.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/l20-setup.js');
const UNIT_FILE = '/etc/systemd/system/l20-ray.service';
const COLS = 160;
// Tall enough that the ray stage's whole live output (≈ 60 lines on a fresh lab, plus ours) fits in a pane.
const ROWS = 150;
const TITLE = 'l20-ctl-title';
const WINDOW = 'l20-ctl-window';

const server = tmuxServer(`l20ctl-${process.pid}`);
const { tmux } = server;
const fmt = (f: string): string => tmux('display', '-p', '-t', 'ctl', f).trim();

/** `lab serve --inventory-out` in a child process, as an operator runs it. */
class ServedLab {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'l20-ctl-'));
  readonly inventory = join(this.dir, 'inv.json');

  async start(): Promise<void> {
    const env = {
      ...process.env,
      HOME: this.dir,
      XDG_STATE_HOME: join(this.dir, 'state'),
      XDG_CONFIG_HOME: join(this.dir, 'config'),
    };
    this.child = spawn(
      process.execPath,
      [BIN, 'lab', 'serve', '--scenario', 'fresh', '--speed', 'max', '--inventory-out', this.inventory],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    this.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise<void>((resolveStarted, reject) => {
      const poll = setInterval(() => {
        if (existsSync(this.inventory) && out.includes('serving; Ctrl-C to stop')) {
          clearInterval(poll);
          resolveStarted();
        }
      }, 50);
      this.child!.once('exit', (code) => {
        clearInterval(poll);
        reject(new Error(`lab serve exited ${code}: ${out}`));
      });
    });
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child!.once('exit', r));
      this.child.kill('SIGINT');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Writes raw bytes to a file as root over SSH. Not writeFileAtomic: its content is a string, and the
 * invalid UTF-8 must reach the file as bytes; base64 on stdin carries them through unchanged.
 */
async function writeBytesAsRoot(inventory: string, path: string, bytes: Buffer): Promise<void> {
  const hosts = hostsFromConfig(await loadInventoryFile(inventory));
  try {
    for (const h of hosts) {
      await h.connect();
      const w = await h.run(
        { argv: ['sh', '-c', 'base64 -d > "$1"', 'sh', path] },
        { sudo: true, stdin: bytes.toString('base64') },
      );
      expect(w.exitCode, `${h.name}: ${w.stderr}`).toBe(0);
      const back = await h.run({ argv: ['base64', '-w', '0', path] }, {});
      expect(
        Buffer.from(back.stdout.trim(), 'base64').equals(bytes),
        `${h.name}: ${path} holds the bytes written`,
      ).toBe(true);
    }
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
  }
}

/** Parameters of every SGR sequence in a `capture-pane -e` row, colour arguments (38/48;5;n, 38/48;2;r;g;b) skipped. */
function sgrAttributes(row: string): number[] {
  const attrs: number[] = [];

  for (const m of row.matchAll(/\u001b\[([0-9;]*)m/g)) {
    const ps = (m[1] || '0').split(';').map(Number);
    for (let i = 0; i < ps.length; i++) {
      const p = ps[i]!;
      if ((p === 38 || p === 48 || p === 58) && ps[i + 1] === 5) i += 2;
      else if ((p === 38 || p === 48 || p === 58) && ps[i + 1] === 2) i += 4;
      else attrs.push(p);
    }
  }
  return attrs;
}

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('hostile control sequences in remote output are inert in a real terminal (tmux)', () => {
  const lab = new ServedLab();
  const { bytes, expected } = hostileLines();
  /** A hostile line in a pane's live output: the probe tag, the sanitized text, the pane's padding up to its border. */
  const inPane = expected.map((e) => new RegExp(`ray-unit    │${escapeRe(e)} *│`, 'gu'));

  beforeAll(async () => {
    // The TUI runs the built CLI: a dist older than the sanitizer would test yesterday's code.
    expect(
      statSync(join(ROOT, 'dist/src/util/sanitize.js')).mtimeMs,
      'dist is older than src/util/sanitize.ts: npm run build',
    ).toBeGreaterThanOrEqual(statSync(join(ROOT, 'src/util/sanitize.ts')).mtimeMs);
    await lab.start();
    await writeBytesAsRoot(lab.inventory, UNIT_FILE, bytes);
  }, 90_000);
  afterAll(async () => {
    server.close();
    await lab.stop();
  });

  it(`${HOSTILE.length} kinds, in both panes' live output: no clipboard, title, rename, bell, mouse mode or cleared history; the frame is intact`, async () => {
    const started = Date.now();
    const t = server.terminal('ctl', COLS, ROWS);
    tmux('set-option', '-s', 'set-clipboard', 'on');
    tmux('set-window-option', '-t', 'ctl', 'allow-rename', 'on');
    tmux('set-window-option', '-t', 'ctl', 'monitor-bell', 'on');
    tmux('set-option', '-t', 'ctl', 'remain-on-exit', 'on');
    tmux('rename-window', '-t', 'ctl', WINDOW); // also turns automatic-rename off for the window
    tmux('select-pane', '-t', 'ctl', '-T', TITLE);
    // Scrollback for CSI 3J to erase (`clear` would erase it itself: not used here).
    t.keys(`seq -f 'history-line-%g' 1 300; node ${BIN} --inventory ${lab.inventory}; echo EXIT-CODE=$?`, 'Enter');
    await t.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
    const history = Number(fmt('#{history_size}'));
    expect(history).toBeGreaterThan(100);
    expect(fmt('#{alternate_on}')).toBe('1');

    for (let i = 0; i < 9; i++) t.keys('j');
    t.keys('Enter');
    await t.until((s) => s.includes('stage 10/11 ray'), 'the ray stage view');
    t.keys('r');
    // Waiting for the sanitized lines can time out when sanitization is broken; the terminal's state is
    // checked either way (soft: every broken promise is listed), then the wait's failure is raised.
    const waited = await t
      .until(
        (s) =>
          /idle/.test(s.split('\n')[0] ?? '') &&
          (s.match(/12\/12 commands done/g) ?? []).length === 2 &&
          inPane.every((re) => (s.match(re) ?? []).length === 2),
        'every hostile line in both panes, the stage idle',
        60_000,
      )
      .then(
        (s) => ({ s }),
        (err: Error) => ({ err }),
      );

    // The terminal's state: nothing the hostile bytes ask for happened.
    expect.soft(tmux('list-buffers'), 'OSC 52 made a paste buffer').toBe('');
    expect.soft(fmt('#{pane_title}'), 'OSC 0/2 set the title').toBe(TITLE);
    expect.soft(fmt('#{window_name}'), 'ESC k renamed the window').toBe(WINDOW);
    expect.soft(fmt('#{window_bell_flag}'), 'BEL rang').toBe('0');
    expect
      .soft(fmt('#{mouse_standard_flag}#{mouse_button_flag}#{mouse_any_flag}#{mouse_sgr_flag}'), 'mouse reporting on')
      .toBe('0000');
    expect.soft(fmt('#{alternate_on}'), 'the alternate screen').toBe('1');
    expect.soft(Number(fmt('#{history_size}')), 'CSI 3J cleared the scrollback').toBeGreaterThanOrEqual(history);
    expect.soft(fmt('#{pane_width}x#{pane_height}'), 'the pane was resized').toBe(`${COLS}x${ROWS}`);
    if ('err' in waited) throw waited.err;
    const screen = waited.s;
    const rows = screen.split('\n');

    // The frame: header on the first row, two bordered panes of COLS/2 side by side, the footer last;
    // a clear, a cursor jump or a reset would have torn it (Ink redraws relative to where it left the cursor).
    expect(rows[0]).toMatch(/^l20-setup · stage 10\/11 ray/);
    const top = rows.findIndex((r) => r.startsWith('╭') && r.includes('╮╭'));
    const bottom = rows.findIndex((r) => r.startsWith('╰') && r.includes('╯╰'));
    expect(top).toBeGreaterThan(0);
    expect(bottom).toBeGreaterThan(top + inPane.length);
    const half = COLS / 2;
    for (const r of rows.slice(top + 1, bottom)) {
      expect([...r].length, r).toBe(COLS);
      expect(r[0] + r[half - 1]! + r[half]! + r[COLS - 1]!, r).toBe('││││');
    }
    expect(
      rows.slice(top + 1, bottom).filter((r) => /^│ l20-n1 .*connected.*││ l20-n2 .*connected/.test(r)),
    ).toHaveLength(1);
    expect(rows.filter((r) => r.trim() !== '').at(-1)).toMatch(/^esc back/);

    // What is visible is the text around each sequence (checked above) and nothing else of it.
    expect(FORBIDDEN.exec(screen.replace(/\n/g, ' '))).toBeNull();
    for (const leaked of ['PWNED-WINDOW', 'evil.example', 'apc-payload', 'pm-payload', 'sos-payload', ']52;'])
      expect(screen).not.toContain(leaked);
    // Attributes: no concealed or blinking text on the hostile rows (SGR 8;5 in the file).
    const styled = tmux('capture-pane', '-p', '-e', '-t', 'ctl')
      .split('\n')
      .filter((r) => r.includes('ray-unit'));
    expect(styled.length).toBeGreaterThanOrEqual(HOSTILE.length);
    for (const r of styled)
      expect(
        sgrAttributes(r).filter((a) => a === 5 || a === 8),
        r,
      ).toEqual([]);

    t.keys('q');
    const after = await t.until((s) => /EXIT-CODE=\d/.test(s), 'the exit', 30_000);
    expect(after).toContain('EXIT-CODE=0');
    expect(fmt('#{alternate_on}')).toBe('0');
    expect(fmt('#{cursor_flag}')).toBe('1');
    expect(fmt('#{mouse_any_flag}#{mouse_standard_flag}')).toBe('00');
    expect(tmux('list-buffers')).toBe('');
    expect(fmt('#{pane_title}')).toBe(TITLE);
    // The scrollback from before the TUI is all still there.
    const all = tmux('capture-pane', '-p', '-S', '-', '-E', '-', '-t', 'ctl');
    expect(all).toContain('history-line-1\n');
    expect(all).toContain('history-line-300\n');
    console.log(
      `control-sequences-tmux: ${HOSTILE.length} kinds × 2 hosts on screen inert, terminal state unchanged (${Date.now() - started} ms in the TUI)`,
    );
  }, 180_000);
});
