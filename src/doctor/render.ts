/** Human output for doctor: the kind, its key facts as a compact table, findings worst first. */
import type { DoctorResult } from './doctor.js';
import type { Severity } from '../rules/types.js';
import { ruleHint } from '../rules/hint.js';

const SEVERITY_COLOR: Record<Severity, string> = { blocker: '1;31', high: '31', medium: '33', low: '36', info: '90' };

export function renderFindingBlock(
  f: { rule: string; severity: Severity; title: string; evidence: string; fix: string; line?: number },
  color: boolean,
): string[] {
  const sev = f.severity.toUpperCase().padEnd(7);
  const head = `${color ? `\u001b[${SEVERITY_COLOR[f.severity]}m${sev}\u001b[0m` : sev} ${f.rule}  ${f.title}${f.line !== undefined ? `  (line ${f.line})` : ''}`;
  const indent = ' '.repeat(9);
  const evidence = f.evidence.split('\n').map((l, i) => `${indent}${i === 0 ? 'evidence: ' : '          '}${l}`);
  const fix = f.fix.split('\n').map((l, i) => `${indent}${i === 0 ? 'fix: ' : '     '}${l}`);
  return [head, ...evidence, ...fix];
}

export function renderDoctor(result: DoctorResult, color: boolean): string {
  const r = result.report;
  const bold = (s: string) => (color ? `\u001b[1m${s}\u001b[0m` : s);
  const out: string[] = [];
  out.push(`${bold('kind')}: ${r.kind}${r.also?.length ? `  (also: ${r.also.join(', ')})` : ''}`);
  if (r.kind === 'unknown') {
    out.push(r.message ?? '');
    return `${out.join('\n')}\n`;
  }
  if (result.summary.length > 0) {
    const width = Math.min(24, Math.max(...result.summary.map(([k]) => k.length)));
    for (const [k, v] of result.summary) out.push(`  ${k.padEnd(width)}  ${v}`);
  }
  if (r.findings.length === 0) out.push('no findings: nothing in this output breaks a rule');
  else {
    out.push(bold(`${r.findings.length} finding${r.findings.length === 1 ? '' : 's'}:`));
    for (const f of r.findings) out.push(...renderFindingBlock(f, color));
    out.push(ruleHint(r.findings[0]!.rule));
  }
  if (r.errors?.length)
    out.push(`doctor could not fully read this output (a bug in l20-setup): ${r.errors.join('; ')}`);
  return `${out.join('\n')}\n`;
}
