/**
 * doctor never crashes and never hangs: random bytes, binaries and a 50 MB log all give a valid
 * version-1 report (every fixture cut at every 97th byte: cuts-*.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { allFixtures, expectValid } from './robustness-helpers.js';

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

  it('reads 50 MB of log', () => {
    const nccl = allFixtures().find((f) => f.includes('nccl_info_torch_allreduce')) ?? allFixtures()[0]!;
    const unit = readFileSync(nccl, 'utf8');
    const big = unit.repeat(Math.ceil((50 * 1024 * 1024) / unit.length));
    expect(big.length).toBeGreaterThanOrEqual(50 * 1024 * 1024);
    expectValid(doctorText(big).report);
  });
});
