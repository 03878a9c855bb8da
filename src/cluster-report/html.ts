/**
 * The report as one self-contained HTML file: inline CSS, no script, no external resource (it opens
 * offline and from a ticket attachment). Every piece of host output is escaped. Layout: a header
 * with the verdict, the stage table with status colours, the performance against the tutorial's
 * claims, the hosts' configurations as two columns with differing lines highlighted, and each
 * stage's checks with their evidence folded in <details>.
 */
import { diffWordsWithSpace } from 'diff';
import type { CheckStatus } from '../engine/types.js';
import type { ReportData } from './data.js';
import type { ConfigSection } from './side-by-side.js';

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const e = escapeHtml;

const CSS = `
:root { --pass:#1a7f37; --warn:#9a6700; --fail:#cf222e; --error:#8250df; --skip:#6e7781; --line:#d0d7de; --muted:#57606a; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color:#1f2328; margin:0; background:#f6f8fa; }
main { max-width: 1200px; margin: 0 auto; padding: 0 24px 48px; }
header.verdict { padding: 20px 24px; color:#fff; margin-bottom: 20px; }
header.verdict h1 { margin: 0 0 4px; font-size: 26px; }
header.verdict p { margin: 2px 0; opacity: .92; }
header.s-pass { background: var(--pass); } header.s-warn { background: var(--warn); } header.s-fail { background: var(--fail); }
header.s-error { background: var(--error); } header.s-skip { background: var(--skip); }
h2 { margin: 32px 0 10px; font-size: 20px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { margin: 20px 0 8px; font-size: 16px; }
section.card { background:#fff; border:1px solid var(--line); border-radius:6px; padding: 12px 16px; margin: 12px 0; }
table { border-collapse: collapse; width: 100%; background:#fff; }
th, td { border: 1px solid var(--line); padding: 6px 8px; text-align: left; vertical-align: top; }
th { background:#f6f8fa; font-weight: 600; }
.badge { display:inline-block; min-width: 52px; text-align:center; padding: 1px 8px; border-radius: 12px; color:#fff; font-size: 12px; font-weight: 700; letter-spacing: .03em; }
.b-pass { background: var(--pass); } .b-warn { background: var(--warn); } .b-fail { background: var(--fail); } .b-error { background: var(--error); } .b-skip { background: var(--skip); }
.b-ok { background: var(--pass); } .b-low { background: var(--fail); } .b-none { background: var(--skip); }
tr.st-fail td:first-child, tr.st-error td:first-child { border-left: 4px solid var(--fail); }
tr.st-warn td:first-child { border-left: 4px solid var(--warn); }
.muted { color: var(--muted); font-size: 13px; }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { background:#f6f8fa; border:1px solid var(--line); border-radius:6px; padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-word; margin: 6px 0; max-height: 32em; overflow-y: auto; }
details { margin: 4px 0 8px; }
details > summary { cursor: pointer; padding: 4px 0; }
details > summary .id { font-family: ui-monospace, monospace; font-size: 13px; }
.check-fix { margin: 2px 0 4px 0; }
table.diff { table-layout: fixed; }
table.diff td { font: 12.5px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-all; padding: 2px 8px; }
table.diff th { font-size: 13px; }
table.diff td.mark { width: 28px; text-align: center; color: var(--fail); font-weight: 700; }
table.diff tr.differs td { background: #fff8c5; }
table.diff tr.differs td.gap { background: #ffebe9; }
table.diff mark { background: #ffb8b0; color: inherit; border-radius: 2px; padding: 0 1px; }
header.verdict ul { margin: 6px 0 0; padding-left: 20px; }
header.verdict li { margin: 1px 0; }
header.verdict code { background: rgba(255,255,255,.18); padding: 0 4px; border-radius: 3px; }
.same-tag { color: var(--pass); font-weight: 600; font-size: 13px; } .differs-tag { color: var(--fail); font-weight: 600; font-size: 13px; }
`;

function badge(s: CheckStatus | 'ok' | 'low' | 'none'): string {
  return `<span class="badge b-${s}">${s === 'none' ? 'N/A' : s.toUpperCase()}</span>`;
}

/** Both sides of a changed line, with the words that differ wrapped in <mark>. */
function markedPair(left: string, right: string): [string, string] {
  let l = '';
  let r = '';
  for (const part of diffWordsWithSpace(left, right)) {
    const t = e(part.value);
    if (part.added) r += `<mark>${t}</mark>`;
    else if (part.removed) l += `<mark>${t}</mark>`;
    else {
      l += t;
      r += t;
    }
  }
  return [l, r];
}

function diffTable(s: ConfigSection): string {
  if (s.rows.length === 0) return '<p class="muted">Nothing on either host.</p>';
  const rows = s.rows.map((r) => {
    const [l, rr] =
      !r.same && r.left !== undefined && r.right !== undefined
        ? markedPair(r.left, r.right)
        : [r.left === undefined ? undefined : e(r.left), r.right === undefined ? undefined : e(r.right)];
    const td = (html: string | undefined) => (html === undefined ? '<td class="gap"></td>' : `<td>${html}</td>`);
    return `<tr class="${r.same ? 'same' : 'differs'}"><td class="mark">${r.same ? '' : '≠'}</td>${td(l)}${td(rr)}</tr>`;
  });
  return `<table class="diff"><colgroup><col style="width:28px"><col><col></colgroup><thead><tr><th></th><th>${e(s.leftLabel)}</th><th>${e(s.rightLabel)}</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The checks that decide the verdict, right under it (at most eight; the rest are below). */
function failingList(d: ReportData): string {
  const bad = d.stages.flatMap((s) => s.checks).filter((c) => c.status === 'fail' || c.status === 'error');
  if (bad.length === 0) return '';
  const items = bad
    .slice(0, 8)
    .map(
      (c) =>
        `<li><code>${e(c.id)}</code> on ${e(c.host ?? 'the cluster')}${c.rule ? ` (${e(c.rule)})` : ''}: ${e(c.summary)}</li>`,
    );
  if (bad.length > 8) items.push(`<li>and ${bad.length - 8} more below</li>`);
  return `<ul class="failing">${items.join('')}</ul>`;
}

export function renderHtml(d: ReportData): string {
  const stageRows = d.stages.map((s) => {
    const bad = s.checks.filter((c) => c.status !== 'pass' && c.status !== 'skip').length;
    return `<tr class="st-${s.status}"><td><a href="#stage-${e(s.id)}">${e(s.id)}</a></td><td>${badge(s.status)}</td><td>${s.checks.length}${bad ? ` <span class="muted">(${bad} not passing)</span>` : ''}</td><td>${e(s.title)}</td></tr>`;
  });
  const perfRows = d.perf.map(
    (p) =>
      `<tr><td>${e(p.what)}${p.note ? `<div class="muted">${e(p.note)}</div>` : ''}</td><td><strong>${e(p.measured)}</strong></td><td>${e(p.claim)}</td><td>${badge(p.verdict)}</td></tr>`,
  );
  const n1 = d.hosts[0]?.name ?? 'node 1';
  const n2 = d.hosts[1]?.name ?? 'node 2';
  const configs = d.configs.map(
    (s) =>
      `<section class="card"><h3>${e(s.title)} ${s.differs ? '<span class="differs-tag">— differs</span>' : '<span class="same-tag">— identical</span>'}</h3>${diffTable(s)}</section>`,
  );
  const checks = d.stages.map((s) => {
    const items = s.checks.map((c) => {
      const fix =
        c.fix && c.status !== 'pass' && c.status !== 'skip'
          ? `<p class="check-fix"><strong>fix:</strong> ${e(c.fix)}</p>`
          : '';
      const ev = c.evidence.trim() ? `<pre>${e(c.evidence)}</pre>` : '<p class="muted">no evidence recorded</p>';
      const open = c.status === 'fail' || c.status === 'error' ? ' open' : '';
      return `<details${open}><summary>${badge(c.status)} <span class="id">${e(c.id)}</span> <span class="muted">on ${e(c.host ?? 'the cluster')}${c.rule ? ` · ${e(c.rule)}` : ''}</span> — ${e(c.summary)}</summary>${fix}${ev}</details>`;
    });
    return `<section class="card" id="stage-${e(s.id)}"><h3>${e(s.id)} ${badge(s.status)} <span class="muted">${e(s.title)}</span></h3>${items.join('\n')}</section>`;
  });
  const differ = d.configs.filter((c) => c.differs).map((c) => c.title);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>l20-setup report — ${e(d.verdict.toUpperCase())} — ${e(d.runId)}</title>
<style>${CSS}</style>
</head>
<body>
<header class="verdict s-${d.verdict}">
<h1>l20-setup report: ${e(d.verdict.toUpperCase())}</h1>
<p>${d.counts.pass} passed · ${d.counts.warn} warnings · ${d.counts.fail} failed · ${d.counts.error} errors · ${d.counts.skip} skipped</p>
<p>Run ${e(d.runId)} · ${e(d.created)} · l20-setup ${e(d.toolVersion)} · ${e(d.source)}</p>
<p>Hosts: ${d.hosts.map((h) => `${e(h.name)} (${e(h.address)}, ${e(h.role)})`).join(', ')}</p>
${failingList(d)}
</header>
<main>
<h2 id="stages">Stages</h2>
<table class="stages"><thead><tr><th>stage</th><th>state</th><th>checks</th><th>what it covers</th></tr></thead><tbody>
${stageRows.join('\n')}
</tbody></table>
<h2 id="performance">Performance against the tutorial's claims</h2>
<table class="perf"><thead><tr><th>measurement</th><th>measured</th><th>the tutorial / expected</th><th>reads</th></tr></thead><tbody>
${perfRows.join('\n')}
</tbody></table>
${
  d.configs.length > 0
    ? `<h2 id="configs">Configuration: ${e(n1)} and ${e(n2)} side by side</h2>
<p>${differ.length > 0 ? `Differs: ${e(differ.join('; '))}. Differing lines are highlighted and marked ≠.` : 'Identical in every section.'}</p>
${configs.join('\n')}`
    : ''
}
<h2 id="checks">Checks and evidence</h2>
${checks.join('\n')}
<p class="muted">Redacted from evidence and configuration: ${e(d.redaction)}.</p>
</main>
</body>
</html>
`;
}
