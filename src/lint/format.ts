/** Human output of `lint`: per file its kind, findings worst first with line, evidence and fix, then a summary. */
import { NOT_CHECKED } from '../rules/cfg/index.js';
import type { LintKind } from '../rules/cfg/context.js';
import type { Severity } from '../rules/types.js';
import type { LintReport } from './report.js';
import { ruleHint } from '../rules/hint.js';

const ORDER: Severity[] = ['blocker', 'high', 'medium', 'low', 'info'];
const COLOR: Record<Severity, string> = {
  blocker: '\u001b[1;31m',
  high: '\u001b[31m',
  medium: '\u001b[33m',
  low: '\u001b[36m',
  info: '\u001b[2m',
};
const RESET = '\u001b[0m';
const DIM = '\u001b[2m';
const BOLD = '\u001b[1m';

const KIND_LABEL: Record<string, string> = {
  'nccl-conf': 'nccl.conf',
  env: 'env file',
  'netplan-yaml': 'netplan YAML',
  'systemd-unit': 'systemd unit',
  'shell-script': 'shell script',
  'command-line': 'command line',
  'python-launcher': 'Python launcher',
  markdown: 'Markdown / prose',
  empty: 'empty',
  binary: 'binary (not checked)',
  unknown: 'unknown (not a format lint knows)',
  unreadable: 'unreadable',
};

function indent(text: string, pad: string): string {
  return text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');
}

export function formatHuman(report: LintReport, color: boolean): string {
  const c = (code: string, s: string): string => (color ? `${code}${s}${RESET}` : s);
  const out: string[] = [];
  const totals: Record<Severity, number> = { blocker: 0, high: 0, medium: 0, low: 0, info: 0 };
  for (const f of report.files) {
    out.push(`${c(BOLD, f.file)}  ${c(DIM, `(${KIND_LABEL[f.kind] ?? f.kind})`)}`);
    if (f.error !== undefined) {
      out.push(`  error: ${f.error}`, '');
      continue;
    }
    if (f.findings.length === 0) out.push('  no findings');
    for (const x of f.findings) {
      totals[x.severity]++;
      const where = x.line === null ? '' : `line ${x.line}  `;
      out.push(`  ${c(COLOR[x.severity], x.severity.toUpperCase().padEnd(7))} ${x.rule}  ${where}${x.title}`);
      out.push(indent(x.evidence, '      '));
      out.push(indent(`fix: ${x.fix}`, '      '));
    }
    const nc = NOT_CHECKED[f.kind as LintKind];
    if (nc && f.findings.length > 0) out.push(c(DIM, `  not checked (needs host): ${nc}`));
    out.push('');
  }
  const n = report.files.length;
  const unreadable = report.files.filter((f) => f.error !== undefined).length;
  const parts = ORDER.filter((s) => totals[s] > 0).map((s) => c(COLOR[s], `${totals[s]} ${s}`));
  out.push(
    `${n} file${n === 1 ? '' : 's'}: ${parts.length > 0 ? parts.join(', ') : 'no findings'}${unreadable > 0 ? `; ${unreadable} unreadable` : ''}`,
  );
  const firstRule = report.files.flatMap((f) => f.findings)[0]?.rule;
  if (firstRule !== undefined) out.push(c(DIM, ruleHint(firstRule)));
  return `${out.join('\n')}\n`;
}
