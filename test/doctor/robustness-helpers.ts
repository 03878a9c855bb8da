/** Shared by the robustness tests: the fixture list and what a valid doctor report is. */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import type { DoctorReport } from '../../src/doctor/doctor.js';

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

