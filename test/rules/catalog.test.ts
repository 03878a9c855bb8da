/** The rule catalog is well formed: every record passes the schema, ids are unique and gap-free, lookups work. */
import { describe, expect, it } from 'vitest';
import { allRules, ruleById, ruleIdRange, severityLine } from '../../src/rules/catalog/index.js';
import { ruleRecordSchema, SEVERITIES } from '../../src/rules/catalog/schema.js';

const SEVERITY_IN_TEXT = new RegExp(`\`(?:${SEVERITIES.join('|')})\``);

describe('rule catalog', () => {
  it('every record passes the schema (non-empty texts, known severity, scope, family and status)', () => {
    const problems = allRules().flatMap((rule) => {
      const parsed = ruleRecordSchema.safeParse(rule);
      if (parsed.success) return [];
      return [`${rule.id}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`];
    });
    expect(problems).toEqual([]);
  });

  it('the schema rejects what a careless edit produces (so the test above can fail)', () => {
    const r21 = ruleById('R21')!;
    expect(ruleRecordSchema.safeParse({ ...r21, fix: '  ' }).success).toBe(false);
    expect(ruleRecordSchema.safeParse({ ...r21, severity: 'critical' }).success).toBe(false);
    expect(ruleRecordSchema.safeParse({ ...r21, id: 'R1' }).success).toBe(false);
    expect(ruleRecordSchema.safeParse({ ...r21, scope: ['output'] }).success).toBe(false);
    expect(ruleRecordSchema.safeParse({ ...r21, family: 'output' }).success).toBe(false);
    expect(ruleRecordSchema.safeParse({ ...r21, extra: 'field' }).success).toBe(false);
  });

  it('ids are unique and, per prefix, numbered from 01 without gaps (retired ids stay listed)', () => {
    const ids = allRules().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const prefix of ['R', 'D']) {
      const numbers = ids.filter((id) => id.startsWith(prefix)).map((id) => Number(id.slice(1)));
      expect(numbers, `${prefix} ids`).toEqual(numbers.map((_, i) => i + 1));
    }
    expect(ids.slice(0, 2)).toEqual(['R01', 'R02']);
    expect(ids.filter((id) => id.startsWith('R'))).toHaveLength(51);
    expect(ids.filter((id) => id.startsWith('D')).length).toBeGreaterThanOrEqual(26);
  });

  it('a graded rule says which sub-condition gets which severity', () => {
    const silent = allRules()
      .filter((r) => r.graded && !SEVERITY_IN_TEXT.test(r.detect))
      .map((r) => r.id);
    expect(silent).toEqual([]);
  });

  it('ruleById ignores case and blanks; unknown ids are undefined; the range names both prefixes', () => {
    expect(ruleById('r21')?.title).toBe('Netplan hygiene');
    expect(ruleById(' d03 ')?.id).toBe('D03');
    expect(ruleById('R99')).toBeUndefined();
    expect(ruleById('R2')).toBeUndefined();
    expect(ruleIdRange()).toMatch(/^R01–R51, D01–D\d\d$/);
  });

  it('the severity line carries grading, the severity note and (R rules only) the scope', () => {
    expect(severityLine(ruleById('R05')!)).toBe('high, graded · cfg+host');
    expect(severityLine(ruleById('D24')!)).toBe('high (doctor: only with an expectation)');
    expect(severityLine(ruleById('D03')!)).toBe('blocker');
  });
});
