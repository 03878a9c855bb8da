/** `l20-setup bundle` and `report` through the built binary: files written where asked, modes, exit codes. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/l20-setup.js');
const run = promisify(execFile);
const home = mkdtempSync(join(tmpdir(), 'l20-bundle-cli-'));

async function cli(args: string[], cwd = home) {
  const env = {
    ...process.env,
    HOME: home,
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CONFIG_HOME: join(home, 'config'),
    NO_COLOR: '1',
  };
  try {
    const r = await run(process.execPath, [BIN, ...args], { env, cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('l20-setup bundle and report', () => {
  it('bundle --lab writes l20-bundle-<run-id>.tar.gz in the current directory, mode 0600, and names it', async () => {
    const dir = mkdtempSync(join(home, 'cwd-'));
    const r = await cli(['bundle', '--lab', '--scenario', 'ready', '--speed', 'max'], dir);
    expect(r.code).toBe(0);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^l20-bundle-\d{8}T\d{6}Z\.tar\.gz$/);
    expect(r.stdout.split('\n')[0]).toBe(join(dir, files[0]!));
    expect(r.stdout).toMatch(/^\d+ files, \d+ bytes; 0 failing checks; redacted: .*api-key/m);
    expect(statSync(join(dir, files[0]!)).mode & 0o777).toBe(0o600);
  }, 180_000);

  it('report --format html --out FILE writes one self-contained page and exits 1 on pfc-mismatch', async () => {
    const out = join(home, 'report.html');
    const r = await cli([
      'report',
      '--lab',
      '--scenario',
      'pfc-mismatch',
      '--speed',
      'max',
      '--format',
      'html',
      '--out',
      out,
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const html = readFileSync(out, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('<header class="verdict s-fail">');
    expect(html).not.toMatch(/\b(?:src|href)="(?:https?:)?\/\//);
  }, 180_000);

  it('refuses an unknown --format and stray arguments with exit 2', async () => {
    const a = await cli(['report', '--lab', '--format', 'pdf']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('--format "pdf": expected md or html');
    const b = await cli(['bundle', 'extra']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('bundle takes no arguments');
    const h = await cli(['bundle', '--help']);
    expect(h.stdout).toContain('Usage: l20-setup bundle');
  });
});
