/**
 * SUMMARY.md, the bundle's first file: who and what was collected, the versions of every host side
 * by side (differences marked), the failing checks with their rule ids and fixes, what was redacted
 * (counts, never values) and what each file is. Written for a support engineer who opens nothing else.
 */
import type { CheckResult } from '../engine/types.js';
import { VERSION_ROWS, type HostVersions } from './versions.js';

export interface SummaryInput {
  runId: string;
  created: string;
  toolVersion: string;
  source: string;
  hosts: ReadonlyArray<{ name: string; address: string; role: string; error?: string }>;
  versions: ReadonlyMap<string, HostVersions>;
  checks: readonly CheckResult[];
  /** Stages whose benchmarks (cluster runs) were left out. */
  benchmarksSkipped: readonly string[];
  redaction: string;
  files: ReadonlyArray<{ path: string; what: string }>;
}

/** A Markdown table cell: one line, pipes escaped. */
export function cell(text: string | undefined): string {
  const t = (text ?? '')
    .replace(/\r?\n+/g, ' ⏎ ')
    .replace(/\|/g, '\\|')
    .trim();
  return t === '' ? '—' : t;
}

export function versionsTable(hosts: readonly string[], versions: ReadonlyMap<string, HostVersions>): string[] {
  const lines = [`| | ${hosts.map(cell).join(' | ')} | |`, `|---|${hosts.map(() => '---|').join('')}---|`];
  for (const [key, label] of VERSION_ROWS) {
    const values = hosts.map((h) => versions.get(h)?.[key]);
    if (values.every((v) => v === undefined)) continue;
    const differ = new Set(values.map((v) => v ?? '—')).size > 1;
    lines.push(`| ${label} | ${values.map(cell).join(' | ')} | ${differ ? '**differs**' : ''} |`);
  }
  return lines;
}

function checkRows(checks: readonly CheckResult[]): string[] {
  return [
    '| stage | check | host | status | rule | summary | fix |',
    '|---|---|---|---|---|---|---|',
    ...checks.map(
      (c) =>
        `| ${c.stage} | ${c.id} | ${c.host ?? 'cluster'} | ${c.status.toUpperCase()} | ${c.rule ?? '—'} | ${cell(c.summary)} | ${cell(c.fix)} |`,
    ),
  ];
}

export function renderSummary(s: SummaryInput): string {
  const names = s.hosts.map((h) => h.name);
  const failing = s.checks.filter((c) => c.status === 'fail' || c.status === 'error');
  const warnings = s.checks.filter((c) => c.status === 'warn');
  const count = (st: string) => s.checks.filter((c) => c.status === st).length;
  const out: string[] = [
    '# l20-setup evidence bundle',
    '',
    `Run ${s.runId}, collected ${s.created} by l20-setup ${s.toolVersion} from ${s.source}.`,
    '',
    `Checks: ${count('pass')} passed, ${count('warn')} warnings, ${count('fail')} failed, ${count('error')} errors, ${count('skip')} skipped` +
      (s.benchmarksSkipped.length > 0
        ? ` (read-only checks; the benchmark runs of ${s.benchmarksSkipped.join(', ')} were not run — \`l20-setup report\` runs them).`
        : '.'),
    '',
    '## Hosts',
    '',
    '| host | address | role | collected |',
    '|---|---|---|---|',
    ...s.hosts.map((h) => `| ${cell(h.name)} | ${cell(h.address)} | ${h.role} | ${h.error ? cell(h.error) : 'yes'} |`),
    '',
    '## Versions',
    '',
    ...versionsTable(names, s.versions),
    '',
    '## Failing checks',
    '',
    ...(failing.length > 0 ? checkRows(failing) : ['None.']),
    '',
  ];
  if (warnings.length > 0) out.push('## Warnings', '', ...checkRows(warnings), '');
  out.push(
    '## Redaction',
    '',
    'Every file, and this summary, went through one redaction pass before it was written: vLLM API keys (the ' +
      'VLLM_API_KEY, OPENAI_API_KEY and older L20_API_KEY variables, api-key arguments, authorization headers), ' +
      'Hugging Face tokens (hf_ tokens, the HF_TOKEN variable), passwords and passphrases, and private-key blocks; ' +
      'a value found once is removed wherever else it appears. The sudo password is sent on stdin only, and removed ' +
      `from every output a host echoes it in before anything reads it. Redacted in the files: ${s.redaction}.`,
    '',
    '## Files',
    '',
    '| file | what it is |',
    '|---|---|',
    ...s.files.map((f) => `| ${cell(f.path)} | ${cell(f.what)} |`),
    '',
    'Each host file starts with the exact command line sent over SSH (a script follows it as a here-document) and its exit code.',
    '',
  );
  return out.join('\n');
}
