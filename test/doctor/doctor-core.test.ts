import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import type { KindDef } from '../../src/doctor/types.js';
import { renderDoctor } from '../../src/doctor/render.js';

const alpha: KindDef<{ n: number }> = {
  kind: 'alpha',
  detect: (t) => (/^ALPHA \d+$/m.test(t) ? 0.9 : 0),
  parse: (t) => ({ n: Number(/ALPHA (\d+)/.exec(t)?.[1] ?? 0) }),
  findings: (f) =>
    f.n > 5
      ? [
          {
            rule: 'D08',
            severity: 'high',
            title: 'too many',
            evidence: `ALPHA ${f.n}\u001b]0;x\u0007`,
            fix: 'lower it',
            line: 1,
          },
        ]
      : [],
  summary: (f) => [['n', String(f.n)]],
};
const beta: KindDef<object> = {
  kind: 'beta',
  detect: (t) => (t.includes('BETA') ? 0.6 : 0),
  parse: () => ({}),
  findings: () => [],
  summary: () => [],
};
const broken: KindDef<object> = {
  kind: 'broken',
  detect: (t) => (t.includes('BROKEN') ? 1 : 0),
  parse: () => {
    throw new Error('parser bug');
  },
  findings: () => [],
  summary: () => [],
};

describe('doctor core', () => {
  it('picks the best kind, lists the others under also, strips control characters from findings', () => {
    const { report, summary } = doctorText('$ alpha\nALPHA 7\nBETA\n', [alpha, beta]);
    expect(report.kind).toBe('alpha');
    expect(report.also).toEqual(['beta']);
    expect(report.facts).toEqual({ n: 7 });
    expect(report.findings).toHaveLength(1);
    expect(report.findings[0]!.evidence).toBe('ALPHA 7');
    expect(summary).toEqual([['n', '7']]);
  });

  it('reports unknown input with the formats it knows', () => {
    const { report } = doctorText('hello world', [alpha, beta]);
    expect(report).toMatchObject({ version: 1, kind: 'unknown', findings: [] });
    expect(report.message).toContain('alpha, beta');
  });

  it('turns a crashing parser into a reported error, not an exception', () => {
    const { report } = doctorText('BROKEN', [broken]);
    expect(report.kind).toBe('broken');
    expect(report.errors?.[0]).toContain('parser bug');
  });

  it('renders the kind, facts and findings for people, coloured only when asked', () => {
    const r = doctorText('ALPHA 9\n', [alpha]);
    const plain = renderDoctor(r, false);
    expect(plain).toContain('kind: alpha');
    expect(plain).toMatch(/HIGH\s+D08\s+too many\s+\(line 1\)/);
    expect(plain).toContain('fix: lower it');
    expect(plain).not.toMatch(/\u001b/);
    expect(renderDoctor(r, true)).toMatch(/\u001b\[31m/);
  });
});
