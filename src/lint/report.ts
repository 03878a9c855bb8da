/**
 * The document `lint` produces: `--json` prints it, format.ts renders it for people. Apart from the linter so that
 * the formatter and the linter both import it, not each other.
 */
import type { Severity } from '../rules/types.js';

export interface LintFinding {
  rule: string;
  severity: Severity;
  line: number | null;
  evidence: string;
  fix: string;
  title: string;
}

export interface LintFileReport {
  file: string;
  kind: string;
  findings: LintFinding[];
  /** Set when the file could not be read. */
  error?: string;
}

export interface LintReport {
  version: 1;
  files: LintFileReport[];
}
