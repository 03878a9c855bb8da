/** `l20-setup monitor` as scripts use it: one sample as JSON, plain lines, a JSONL recording and its replay. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MonitorSample } from '../../src/monitor/types.js';
import { BIN, cli as run, cliEnv } from '../helpers/cli.js';

const env = cliEnv();
const cli = (args: string[]) => run(args, env);

/** Every field docs/DESIGN.md's `monitor --once --json` shape names, with values a real L20 host could show. */
function expectDesignShape(s: MonitorSample): void {
  expect(s.version).toBe(1);
  expect(Number.isNaN(Date.parse(s.time))).toBe(false);
  expect(s.hosts.map((h) => h.name)).toEqual(['l20-n1', 'l20-n2']);
  for (const h of s.hosts) {
    expect(h.stale).toBe(false);
    expect(h).toHaveProperty('vllm');
    expect(h.gpus).toHaveLength(8);
    for (const g of h.gpus) {
      expect(Object.keys(g)).toEqual(
        expect.arrayContaining([
          'index',
          'name',
          'utilPct',
          'memUsedMiB',
          'memTotalMiB',
          'tempC',
          'powerW',
          'powerCapW',
          'smClockMHz',
        ]),
      );
      expect(g.name).toBe('NVIDIA L20');
      expect(g.utilPct).toBeGreaterThanOrEqual(0);
      expect(g.utilPct).toBeLessThanOrEqual(100);
      expect(g.memUsedMiB).toBeLessThanOrEqual(g.memTotalMiB!);
      expect(g.tempC).toBeGreaterThan(20);
      expect(g.tempC).toBeLessThan(95);
      expect(g.powerW).toBeGreaterThan(15);
      expect(g.powerW).toBeLessThanOrEqual(g.powerCapW!);
      expect(g.smClockMHz).toBeGreaterThanOrEqual(210);
      expect(g.smClockMHz).toBeLessThanOrEqual(2520);
    }
    expect(h.ports).toHaveLength(4);
    for (const p of h.ports) {
      expect(Object.keys(p)).toEqual(
        expect.arrayContaining([
          'netdev',
          'rdmaDevice',
          'speedGbps',
          'up',
          'txGbps',
          'rxGbps',
          'pauseRxPerSec',
          'pauseTxPerSec',
          'discardsPerSec',
        ]),
      );
      expect(p).toMatchObject({ up: true, speedGbps: 25 });
      expect(p.txGbps).toBeGreaterThanOrEqual(0);
      expect(p.txGbps).toBeLessThanOrEqual(25);
      expect(p.rxGbps).toBeGreaterThanOrEqual(0);
      expect(p.discardsPerSec).toBe(0);
    }
  }
}

describe('l20-setup monitor', () => {
  it('--lab --once --json prints one complete sample in the docs/DESIGN.md shape', async () => {
    const r = await cli(['monitor', '--lab', '--once', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout) as MonitorSample;
    expectDesignShape(s);
    // The lab serves a model on the head: vLLM's metrics are there.
    // Two readings of its counters: tokens/s is a rate, not null.
    expect(s.hosts[0]?.vllm).toMatchObject({
      running: expect.any(Number),
      waiting: expect.any(Number),
      kvCacheUsagePct: expect.any(Number),
      generationTokensPerSec: expect.any(Number),
    });
  }, 60_000);

  it('--lab --once prints a line per host and port without a terminal', async () => {
    const r = await cli(['monitor', '--lab', '--once']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\[l20-n1\] gpus 8 util% /m);
    expect(r.stdout).toMatch(
      /^\[l20-n2\] ens2f1\/rocep\S+ up 25G tx \d+\.\d rx \d+\.\d Gb\/s pause \d+\/s discards 0\/s$/m,
    );
  }, 60_000);

  it('--record writes one sample per line until interrupted; --replay reads it back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-rec-'));
    const file = join(dir, 'rec.jsonl');
    const child = spawn(process.execPath, [BIN, 'monitor', '--lab', '--interval', '250', '--json', '--record', file], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // Wait for five recorded samples (the file grows with each), then stop it as an operator would.
    await new Promise<void>((resolveDone, reject) => {
      const timer = setTimeout(() => reject(new Error(`no 5 samples recorded: ${out.slice(-500)}`)), 45_000);
      child.stdout.on('data', () => {
        if (existsSync(file) && readFileSync(file, 'utf8').split('\n').filter(Boolean).length >= 5) {
          clearTimeout(timer);
          resolveDone();
        }
      });
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    const recorded = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as MonitorSample);
    expect(recorded.length).toBeGreaterThanOrEqual(5);
    // What went to stdout (JSONL) is what was recorded.
    expect(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as MonitorSample).time)
        .slice(0, 5),
    ).toEqual(recorded.slice(0, 5).map((s) => s.time));
    expectDesignShape(recorded.at(-1)!);

    const once = await cli(['monitor', '--replay', file, '--once', '--json']);
    expect(once.code).toBe(0);
    expect(JSON.parse(once.stdout)).toEqual(recorded[0]);
    const plain = await cli(['monitor', '--replay', file]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.match(/^# /gm)).toHaveLength(recorded.length);
  }, 90_000);

  it('refuses a recording that is not one, naming the line and field, and contradictory flags', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-bad-'));
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(
      bad,
      `${JSON.stringify({ version: 1, time: '2026-11-29T12:00:00Z', hosts: [] })}\n${JSON.stringify({ version: 1, time: '2026-11-29T12:00:01Z', hosts: [{ name: 'a', stale: false, gpus: 'x', ports: [], vllm: null }] })}\n`,
    );
    const r = await cli(['monitor', '--replay', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--replay ${bad} line 2: not a version-1 monitor sample: hosts.0.gpus`);
    const missing = await cli(['monitor', '--replay', join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read it (ENOENT)');
    const both = await cli(['monitor', '--lab', '--record', 'a', '--replay', 'b']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--record and --replay exclude each other');
    const interval = await cli(['monitor', '--lab', '--interval', '5', '--once']);
    expect(interval.code).toBe(2);
    expect(interval.stderr).toContain('--interval "5"');
  }, 30_000);
});
