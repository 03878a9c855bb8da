/** Shared by the robustness tests: the fixture list and what a valid doctor report is. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { doctorText, type DoctorReport } from '../../src/doctor/doctor.js';

export const FIXTURES = resolve(import.meta.dirname, '../fixtures');
export function allFixtures(dir = FIXTURES): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? allFixtures(p) : [p];
  });
}

export function expectValid(report: DoctorReport): void {
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

/**
 * Every fixture of one shard (of `shards`) read by doctor when cut at every 97th byte. A fixture of n bytes
 * costs about n²: the fixtures are dealt largest first to the shard with the least cost so far, so the shard
 * files take about as long as each other.
 */
export function readCutsOfShard(shard: number, shards: number): void {
  const cost = new Array<number>(shards).fill(0);
  const mine: string[] = [];
  const bySize = allFixtures()
    .map((file) => ({ file, size: statSync(file).size }))
    .sort((a, b) => b.size - a.size || a.file.localeCompare(b.file));
  for (const { file, size } of bySize) {
    const least = cost.indexOf(Math.min(...cost));
    cost[least]! += size * size;
    if (least === shard) mine.push(file);
  }
  expect(mine.length).toBeGreaterThan(20);
  for (const file of mine) {
    const bytes = readFileSync(file);
    for (let cut = 0; cut < bytes.length; cut += 97) {
      const { report } = doctorText(bytes.subarray(0, cut));
      try {
        expectValid(report);
      } catch (err) {
        throw new Error(`${file} cut at ${cut}: ${(err as Error).message}`, { cause: err });
      }
    }
  }
}
