/** doctor reads every fixture cut at every 97th byte (shard 1 of 2; shards run in parallel). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { allFixtures, expectValid } from './robustness-helpers.js';

describe('doctor on truncated outputs', () => {
  it('reads every fixture of shard 1/2 cut at every 97th byte', { timeout: 300_000 }, () => {
    const files = allFixtures().filter((_, i) => i % 2 === 0);
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
});
