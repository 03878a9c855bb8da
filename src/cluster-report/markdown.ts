/**
 * The report as Markdown (stdout by default): verdict, stage table, each stage's checks with their
 * evidence, the hosts' configurations side by side (a `≠` column marks differing lines), and the
 * performance next to the tutorial's claims.
 */
import { cell } from '../bundle/summary.js';
import type { ReportData } from './data.js';
import type { ConfigSection } from './side-by-side.js';

/** A fenced block that no line of the content can close. */
function fence(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}text\n${text.replace(/\n+$/, '')}\n${f}`;
}

function configMd(s: ConfigSection): string[] {
  const out = [`### ${s.title}${s.differs ? ' — differs' : ' — identical'}`, ''];
  if (s.rows.length === 0) return [...out, 'Nothing on either host.', ''];
  out.push(`| ≠ | ${cell(s.leftLabel)} | ${cell(s.rightLabel)} |`, '|---|---|---|');
  for (const r of s.rows) {
    const code = (t: string | undefined) =>
      t === undefined ? '' : t.trim() === '' ? ' ' : `\`${t.replace(/`/g, 'ˋ').replace(/\|/g, '\\|')}\``;
    out.push(`| ${r.same ? '' : '≠'} | ${code(r.left)} | ${code(r.right)} |`);
  }
  out.push('');
  return out;
}

/** The checks that decide the verdict, listed under it. */
function failingLines(d: ReportData): string[] {
  const bad = d.stages.flatMap((s) => s.checks).filter((c) => c.status === 'fail' || c.status === 'error');
  if (bad.length === 0) return [];
  const lines = bad
    .slice(0, 12)
    .map(
      (c) =>
        `- ${c.status.toUpperCase()} \`${c.id}\` on ${c.host ?? 'the cluster'}${c.rule ? ` (${c.rule})` : ''}: ${c.summary.replace(/\n/g, ' ')}`,
    );
  if (bad.length > 12) lines.push(`- and ${bad.length - 12} more under "Checks and evidence"`);
  return [...lines, ''];
}

export function renderMarkdown(d: ReportData): string {
  const out: string[] = [
    `# l20-setup report — ${d.verdict.toUpperCase()}`,
    '',
    `Run ${d.runId}, ${d.created}, l20-setup ${d.toolVersion}, ${d.source}.`,
    `Hosts: ${d.hosts.map((h) => `${h.name} (${h.address}, ${h.role})`).join(', ')}.`,
    '',
    `Checks: ${d.counts.pass} passed, ${d.counts.warn} warnings, ${d.counts.fail} failed, ${d.counts.error} errors, ${d.counts.skip} skipped.`,
    '',
    ...failingLines(d),
    '## Stages',
    '',
    '| stage | state | checks | what it covers |',
    '|---|---|---|---|',
    ...d.stages.map((s) => {
      const bad = s.checks.filter((c) => c.status !== 'pass' && c.status !== 'skip').length;
      return `| ${s.id} | ${s.status.toUpperCase()} | ${s.checks.length}${bad ? ` (${bad} not passing)` : ''} | ${cell(s.title)} |`;
    }),
    '',
    "## Performance against the tutorial's claims",
    '',
    '| measurement | measured | the tutorial / expected | reads |',
    '|---|---|---|---|',
    ...d.perf.map(
      (p) =>
        `| ${cell(p.what)}${p.note ? `<br>${cell(p.note)}` : ''} | ${cell(p.measured)} | ${cell(p.claim)} | ${p.verdict === 'none' ? 'n/a' : p.verdict} |`,
    ),
    '',
  ];
  if (d.configs.length > 0) {
    const n1 = d.hosts[0]?.name ?? 'node 1';
    const n2 = d.hosts[1]?.name ?? 'node 2';
    const differ = d.configs.filter((c) => c.differs).map((c) => c.title);
    out.push(
      `## Configuration: ${n1} and ${n2} side by side`,
      '',
      differ.length > 0 ? `Differs: ${differ.join('; ')}.` : 'Identical in every section.',
      '',
      ...d.configs.flatMap(configMd),
    );
  }
  out.push('## Checks and evidence', '');
  for (const s of d.stages) {
    out.push(`### ${s.id} — ${s.status.toUpperCase()}`, '');
    for (const c of s.checks) {
      out.push(
        `- **${c.status.toUpperCase()}** \`${c.id}\` on ${c.host ?? 'the cluster'}${c.rule ? ` (${c.rule})` : ''}: ${c.summary.replace(/\n/g, ' ')}`,
      );
      if (c.fix && c.status !== 'pass' && c.status !== 'skip') out.push(`  - fix: ${c.fix.replace(/\n/g, ' ')}`);
      if (c.evidence.trim()) out.push('', fence(c.evidence).replace(/^/gm, '  '), '');
    }
    out.push('');
  }
  out.push(`Redacted from evidence and configuration: ${d.redaction}.`, '');
  return out.join('\n');
}
