/** Helpers for lint tests: lint in-memory files together, and pick findings. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFile, contextOf } from '../../src/lint/build.js';
import { runCfgRules } from '../../src/rules/cfg/index.js';
import type { Finding } from '../../src/rules/types.js';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const TUTORIAL = join(HERE, '..', 'fixtures', 'tutorial');
export const DESIGN_A = join(HERE, 'fixtures', 'design-a');

/** Lints several texts as one run (cross-file facts shared); returns findings per name. */
export function lintMany(files: Record<string, string>): Record<string, Finding[]> {
  const built = Object.entries(files).map(([name, text]) => buildFile(name, text));
  const ctx = contextOf(built);
  return Object.fromEntries(built.map((f) => [f.name, runCfgRules(f, ctx)]));
}

/** Lints one text alone. */
export function lintOne(text: string): Finding[] {
  return lintMany({ input: text }).input ?? [];
}

export function ids(findings: readonly Finding[]): string[] {
  return findings.map((f) => f.rule);
}

export function only(findings: readonly Finding[], rule: string): Finding[] {
  return findings.filter((f) => f.rule === rule);
}
