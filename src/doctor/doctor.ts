/**
 * `doctor`: detect what a pasted output is by its content, parse it into facts, and run the output rules
 * over it. Total by construction: every kind's code runs behind a guard, so random bytes, binaries, cut
 * files and huge logs always give a valid report.
 */
import { cutLong, cutLongDeep } from '../util/cut-long.js';
import { cleanText } from '../parse/common.js';
import { sortFindings, type Finding } from '../rules/types.js';
import { sanitize } from '../util/sanitize.js';
import { KINDS } from './registry.js';
import type { KindDef } from './types.js';

/**
 * Detection reads the head: every format announces itself early. A first pass over 64 KB keeps doctor
 * fast on big logs; only when nothing is recognised there does a second pass read up to 2 MB (an output
 * pasted below a long preamble).
 */
const DETECT_HEAD_FAST = 64 * 1024;
const DETECT_HEAD_MAX = 2 * 1024 * 1024;
const THRESHOLD = 0.5;

export interface DoctorReport {
  version: 1;
  kind: string;
  facts: unknown;
  findings: Array<Pick<Finding, 'rule' | 'severity' | 'title' | 'evidence' | 'fix'> & { line?: number }>;
  also?: string[];
  /** For unknown input: what doctor can read. */
  message?: string;
  /** Problems inside doctor itself (a kind's parser failed): reported, never thrown. */
  errors?: string[];
}

export interface DoctorResult {
  report: DoctorReport;
  /** The kind's label/value rows for people. */
  summary: Array<[string, string]>;
}

function safe<T>(what: string, errors: string[], fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (err) {
    errors.push(`${what}: ${(err as Error).message}`);
    return fallback;
  }
}

function scoreKinds(head: string, kinds: readonly KindDef[]): Array<{ kind: KindDef; score: number }> {
  const errors: string[] = [];
  return kinds
    .map((kind) => ({ kind, score: safe(kind.kind, errors, () => kind.detect(head), 0) }))
    .filter((k) => Number.isFinite(k.score) && k.score >= THRESHOLD)
    .sort((a, b) => b.score - a.score);
}

/** Cut at a line end so no detector sees a half line that the full text does not have. */
function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const nl = text.lastIndexOf('\n', max);
  return text.slice(0, nl > 0 ? nl + 1 : max);
}

export function detectKinds(text: string, kinds: readonly KindDef[] = KINDS): Array<{ kind: KindDef; score: number }> {
  const fast = scoreKinds(headOf(text, DETECT_HEAD_FAST), kinds);
  if (fast.length > 0 || text.length <= DETECT_HEAD_FAST) return fast;
  return scoreKinds(headOf(text, DETECT_HEAD_MAX), kinds);
}

/** Reads one text. `bytes` may be anything: it is decoded as UTF-8 with replacement characters. */
export function doctorText(input: string | Buffer, kinds: readonly KindDef[] = KINDS): DoctorResult {
  const raw = typeof input === 'string' ? input : input.toString('utf8');
  const errors: string[] = [];
  const text = safe('clean', errors, () => cleanText(raw, { keepPrompts: true }), raw.replace(/\r\n?/g, '\n'));
  const detected = detectKinds(text, kinds);
  const best = detected[0];
  if (!best) {
    return {
      report: {
        version: 1,
        kind: 'unknown',
        facts: {},
        findings: [],
        message: `not an output doctor recognises; it reads: ${kinds.map((k) => k.kind).join(', ')}`,
        ...(errors.length ? { errors } : {}),
      },
      summary: [],
    };
  }
  const facts = safe(`${best.kind.kind} parser`, errors, () => best.kind.parse(text), {});
  const findings = safe(
    `${best.kind.kind} rules`,
    errors,
    () => best.kind.findings(facts as never, text),
    [] as Finding[],
  );
  const summary = safe(
    `${best.kind.kind} summary`,
    errors,
    () => best.kind.summary(facts as never),
    [] as Array<[string, string]>,
  );
  const also = detected
    .slice(1)
    .map((d) => d.kind.kind)
    .filter((k) => k !== best.kind.kind);
  return {
    report: {
      version: 1,
      kind: best.kind.kind,
      facts: cutLongDeep(facts),
      findings: sortFindings(findings).map((f) => ({
        rule: f.rule,
        severity: f.severity,
        title: cutLong(sanitize(f.title)),
        evidence: cutLong(sanitize(f.evidence)),
        fix: cutLong(sanitize(f.fix)),
        ...(f.line !== undefined ? { line: f.line } : {}),
      })),
      ...(also.length ? { also: [...new Set(also)] } : {}),
      ...(errors.length ? { errors } : {}),
    },
    summary: summary.map(([k, v]) => [cutLong(sanitize(String(k))), cutLong(sanitize(String(v)))]),
  };
}
