/**
 * Findings: what every rule (R01–R51, D01–D25 in docs/RULES.md) produces, shared by `lint`, `doctor` and the
 * live stage checks. Rules are small pure functions; each rule id has exactly one implementation.
 */
export type Severity = 'blocker' | 'high' | 'medium' | 'low' | 'info';

export const SEVERITY_RANK: Record<Severity, number> = { blocker: 4, high: 3, medium: 2, low: 1, info: 0 };

export interface Finding {
  /** Rule id from docs/RULES.md: `R06`, `D01`. */
  rule: string;
  /** For graded rules, the severity of the sub-condition that applied. */
  severity: Severity;
  /** One line: what is wrong. */
  title: string;
  /** The exact triggering lines or values, verbatim (control characters stripped), with derived arithmetic. */
  evidence: string;
  /** A concrete action with real names filled in. */
  fix: string;
  /** 1-based line in the input (lint: the file's line; doctor: the output's line), when one line triggered it. */
  line?: number;
  /** Host for live findings. */
  host?: string;
  /** Origin: `file:line`, `command@host` or the output kind. */
  source?: string;
}

/** Worst first, then by line. */
export function sortFindings(findings: readonly Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] ||
      (a.line ?? 0) - (b.line ?? 0) ||
      a.rule.localeCompare(b.rule),
  );
}
