/** Shared helpers for the gpu-*.test.ts files: load a fixture as doctor sees it, score it, run its kind. */
import { expect } from 'vitest';
import { cleanText } from '../../src/parse/common.js';
import { doctorText } from '../../src/doctor/doctor.js';
import { gpuKinds } from '../../src/doctor/kinds/gpu.js';
import type { KindDef } from '../../src/doctor/types.js';
import type { Finding } from '../../src/rules/types.js';
import { loadFixture } from '../parse/fixtures.js';

export function kindDef(kind: string): KindDef {
  const k = gpuKinds.find((x) => x.kind === kind);
  if (!k) throw new Error(`no kind ${kind}`);
  return k;
}

/** The text doctor hands to the kinds: cleaned (no ANSI, LF, leading prompt dropped). */
export function doctorInput(relPath: string): string {
  return cleanText(loadFixture(relPath));
}

/** Asserts `kind` scores ≥ 0.5 and strictly highest among the GPU kinds. */
export function expectDetected(text: string, kind: string): void {
  const scores = gpuKinds.map((k) => ({ kind: k.kind, score: k.detect(text) }));
  const mine = scores.find((s) => s.kind === kind)?.score ?? 0;
  expect(mine, `${kind} score`).toBeGreaterThanOrEqual(0.5);
  for (const s of scores) if (s.kind !== kind) expect(s.score, `${s.kind} must score below ${kind}`).toBeLessThan(mine);
}

/** Parse + findings the way doctor runs them. */
export function run<F = Record<string, unknown>>(kind: string, text: string): { facts: F; findings: Finding[] } {
  const k = kindDef(kind);
  const facts = k.parse(text);
  const findings = k.findings(facts, text);
  const summary = k.summary(facts);
  expect(Array.isArray(summary)).toBe(true);
  return { facts: facts as F, findings };
}

export function rules(findings: readonly Finding[]): string[] {
  return findings.map((f) => f.rule).sort();
}

export function finding(findings: readonly Finding[], rule: string): Finding {
  const f = findings.find((x) => x.rule === rule);
  if (!f) throw new Error(`no ${rule} in ${findings.map((x) => x.rule).join(',')}`);
  return f;
}

/** The whole doctor report for a fixture (kind picked among every registered kind). */
export function report(relPath: string) {
  return doctorText(loadFixture(relPath)).report;
}
