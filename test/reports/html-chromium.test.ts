/**
 * The HTML report in a real browser: headless Chromium renders the reports of the lab's `ready` and
 * `pfc-mismatch` to PNG (a real page, a sane size), and its DOM (after parsing, as a browser sees it)
 * holds the stage table and, on pfc-mismatch, the differing-lines markup of the host diff.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labTarget } from '../helpers/lab-target.js';
import { gatherReport } from '../../src/cluster-report/data.js';
import { renderHtml } from '../../src/cluster-report/html.js';

const WIDTH = 1280;
const HEIGHT = 2000;

function chromiumBinary(): string {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim();
    } catch {
      // next name
    }
  }
  throw new Error('chromium is not installed (apt-get install chromium; .ci/run installs it)');
}

/** Headless Chromium as root in a container: no sandbox, no GPU, a throwaway profile. */
function chromium(args: string[], profile: string): string {
  return execFileSync(
    chromiumBinary(),
    ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--user-data-dir=${profile}`, ...args],
    {
      encoding: 'utf8',
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

/** Width and height from the PNG's IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const b = readFileSync(file);
  expect(b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(b.subarray(12, 16).toString('ascii')).toBe('IHDR');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

describe.each(['ready', 'pfc-mismatch'])('HTML report of %s in headless Chromium', (scenario) => {
  let dir: string;
  let html: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `l20-report-${scenario}-`));
    const t = await labTarget({ scenario });
    try {
      const data = await gatherReport({
        config: t.config,
        hosts: t.hosts,
        source: `lab ${scenario}`,
        runId: '20260101T000000Z',
      });
      html = join(dir, 'report.html');
      writeFileSync(html, renderHtml(data));
    } finally {
      await t.close();
    }
  }, 300_000);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders to a PNG of the window size with real content', () => {
    const png = join(dir, 'report.png');
    chromium([`--screenshot=${png}`, `--window-size=${WIDTH},${HEIGHT}`, html], join(dir, 'profile-shot'));
    expect(existsSync(png)).toBe(true);
    expect(pngSize(png)).toEqual({ width: WIDTH, height: HEIGHT });
    // A blank page compresses to a few kB; the header, tables and text make it much larger.
    expect(statSync(png).size).toBeGreaterThan(50_000);
  }, 150_000);

  it('parses into a DOM with the stage table and the host diff', () => {
    const dom = chromium(['--dump-dom', html], join(dir, 'profile-dom'));
    expect(dom).toContain('<table class="stages">');
    expect(dom).toMatch(/<tr class="st-\w+"><td><a href="#stage-qos">qos<\/a><\/td>/);
    expect(dom).toContain('<table class="diff">');
    // netplan's addresses differ on every lab; pfc-mismatch adds node 2's PFC vector.
    expect(dom).toMatch(
      /<tr class="differs"><td class="mark">≠<\/td><td> +ens1f0: \{renderer: networkd, optional: true, mtu: 9000, addresses: \[192\.168\.101\.<mark>1<\/mark>\/24\]\}<\/td><td> +ens1f0: \{renderer: networkd, optional: true, mtu: 9000, addresses: \[192\.168\.101\.<mark>2<\/mark>\/24\]\}<\/td><\/tr>/,
    );
    if (scenario === 'pfc-mismatch') {
      expect(dom).toMatch(/<header class="verdict s-fail">/);
      expect(dom).toMatch(
        /<tr class="differs"><td class="mark">≠<\/td><td>prio-pfc 0:off 1:off 2:off 3:<mark>on<\/mark>/,
      );
    } else {
      expect(dom).toMatch(/<header class="verdict s-pass">/);
    }
  }, 150_000);
});
