/**
 * doctor never crashes and never hangs: random bytes, binaries, every fixture cut at every 97th byte,
 * and a 50 MB log all give a valid version-1 report.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorText, type DoctorReport } from '../../src/doctor/doctor.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures');

function allFixtures(dir = FIXTURES): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? allFixtures(p) : [p];
  });
}

function expectValid(report: DoctorReport): void {
  expect(report.version).toBe(1);
  expect(typeof report.kind).toBe('string');
  expect(Array.isArray(report.findings)).toBe(true);
  for (const f of report.findings) {
    expect(f.rule).toMatch(/^[RD]\d\d$/);
    expect(['blocker', 'high', 'medium', 'low', 'info']).toContain(f.severity);
    expect(typeof f.evidence).toBe('string');
    expect(typeof f.fix).toBe('string');
  }
  expect(() => JSON.stringify(report)).not.toThrow();
  expect(report.errors ?? []).toEqual([]);
}

describe('doctor on hostile input', () => {
  it('reads random bytes and binary data as unknown (or as what they happen to contain), without errors', () => {
    for (let i = 0; i < 50; i++) expectValid(doctorText(randomBytes(1 + i * 997)).report);
    const binary = readFileSync(process.execPath).subarray(0, 4 * 1024 * 1024);
    const r = doctorText(binary).report;
    expectValid(r);
    expect(r.kind).toBe('unknown');
    expect(r.message).toContain('it reads:');
    expectValid(doctorText('').report);
    expectValid(doctorText('\u0000\u0000\u0000').report);
  });

  it('reads every fixture cut at every 97th byte', () => {
    const files = allFixtures();
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (let cut = 0; cut < bytes.length; cut += 97) {
        const { report } = doctorText(bytes.subarray(0, cut));
        try {
          expectValid(report);
        } catch (err) {
          throw new Error(`${file} cut at ${cut}: ${(err as Error).message}`);
        }
      }
    }
  });

  it('reads 50 MB of log', () => {
    const nccl = allFixtures().find((f) => f.includes('nccl_info_torch_allreduce')) ?? allFixtures()[0]!;
    const unit = readFileSync(nccl, 'utf8');
    const big = unit.repeat(Math.ceil((50 * 1024 * 1024) / unit.length));
    expect(big.length).toBeGreaterThanOrEqual(50 * 1024 * 1024);
    expectValid(doctorText(big).report);
  });
});
