/**
 * Every rule id the product reports resolves in the catalog, and every catalog rule is reported somewhere (or is
 * marked retired / not implemented). Read from the source of the finding-producing code: a rule id is a string
 * literal there (`rule: 'R21'`, `id: 'R01'`, `rules: ['R26', 'R29']`), so a regex over the text finds them all.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRules, ruleById } from '../../src/rules/catalog/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** The code that produces findings, check results and diagnoses. */
const FINDING_CODE = ['src/rules', 'src/doctor', 'checks', 'src/lint', 'src/troubleshoot', 'src/monitor'];
/** The catalog itself names every id: it says what the ids mean, it does not report them. */
const CATALOG = 'src/rules/catalog';

const RULE_ID = /\b[RD]\d{2}\b/g;
const QUOTED_RULE_ID = /['"`]([RD]\d{2})['"`]/g;
/** A line that sets a finding's, check's or diagnosis's rule: what follows the key on that line is reported. */
const REPORTING_KEY = /\b(?:rule|id|rules)\s*:(.*)$/;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** Ids a source text reports: quoted ids after `rule:`, `id:` or `rules:` on the same line. */
function reportedIds(text: string): Set<string> {
  const ids = new Set<string>();
  for (const line of text.split('\n')) {
    const after = REPORTING_KEY.exec(line)?.[1];
    if (after !== undefined) for (const m of after.matchAll(QUOTED_RULE_ID)) ids.add(m[1]!);
  }
  return ids;
}

/** Every rule id a source text names, in code, strings or comments, with its line. */
function citedIds(text: string): Array<{ id: string; line: number }> {
  return text.split('\n').flatMap((line, i) => [...line.matchAll(RULE_ID)].map((m) => ({ id: m[0], line: i + 1 })));
}

const files = FINDING_CODE.flatMap((dir) => sourceFiles(join(ROOT, dir))).map((path) => ({
  rel: relative(ROOT, path),
  text: readFileSync(path, 'utf8'),
}));

describe('rule ids in the code', () => {
  it('the scanner sees the forms findings use (so the checks below can fail)', () => {
    const sample = [
      "  rule: 'R21', severity: 'low',",
      "export const R01: CfgRule = {\n  id: 'R01',",
      "status: 'fail', rule: dead.length > 0 ? 'R07' : 'R06',",
      "  rules: ['R26', 'R29'],",
      "const wanted = new Set(['R18']); // filters, does not report",
      '  return { rule: "D99", evidence }',
    ].join('\n');
    expect([...reportedIds(sample)].sort()).toEqual(['D99', 'R01', 'R06', 'R07', 'R21', 'R26', 'R29']);
    expect(ruleById('D99')).toBeUndefined();
  });

  it('scans a real tree', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(files.some((f) => f.rel.startsWith('checks/'))).toBe(true);
  });

  it('every rule id the finding code names (reported, filtered on, or cited in a message) is in the catalog', () => {
    const unknown = files.flatMap((f) =>
      citedIds(f.text)
        .filter((c) => ruleById(c.id) === undefined)
        .map((c) => `${f.rel}:${c.line} ${c.id}`),
    );
    expect(unknown, 'add the rule to src/rules/catalog/ (and regenerate docs/RULES.md), or fix the id').toEqual([]);
  });

  it('every implemented rule is reported somewhere; retired and not-implemented ones nowhere', () => {
    const reporting = files.filter((f) => !f.rel.startsWith(`${CATALOG}/`));
    const reported = new Set(reporting.flatMap((f) => [...reportedIds(f.text)]));
    const neverReported = allRules()
      .filter((r) => r.status === 'implemented' && !reported.has(r.id))
      .map((r) => r.id);
    expect(neverReported, 'implement the rule, or mark its record not-implemented / retired').toEqual([]);
    const stale = allRules()
      .filter((r) => r.status !== 'implemented' && reported.has(r.id))
      .map((r) => r.id);
    expect(stale, 'the code reports these: mark their records implemented').toEqual([]);
  });
});
