/**
 * docs/RULES.md, rendered from the rule records and the surrounding prose (doc-text.ts). `npm run docs:rules`
 * writes it; test/rules/rules-doc.test.ts fails when the committed file differs from what this renders now.
 */
import { wrapText } from '../../util/wrap-text.js';
import { OUTPUT_RULES_LEAD, RULES_DOC_ACCEPTANCE, RULES_DOC_DEFINITIONS, RULES_DOC_LEAD } from './doc-text.js';
import { allRules, FAMILY_TITLES, severityLine } from './index.js';
import { FAMILIES, type RuleRecord } from './schema.js';

/** The width the spec's prose is wrapped at, kept so the generated file reads like the hand-written one. */
const WIDTH = 110;

const LIST_ITEM = /^(- |\d+\. )/;

/** One labelled field: its first paragraph led by the bold label, items as Markdown list items. */
function fieldLines(label: string, text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, index) => {
    const item = LIST_ITEM.exec(line);
    if (item) {
      const marker = item[1]!;
      const body = line.slice(marker.length);
      const restIndent = ' '.repeat(marker.length);
      out.push(...wrapText(body, { width: WIDTH, firstIndent: marker, restIndent, markdown: true }));
      return;
    }
    // A paragraph after an item would be read as the item's lazy continuation without the blank line.
    if (index > 0) out.push('');
    out.push(...wrapText(index === 0 ? `**${label}:** ${line}` : line, { width: WIDTH, markdown: true }));
  });
  return out;
}

function ruleSection(rule: RuleRecord): string[] {
  const status = rule.status === 'implemented' ? '' : ` · *${rule.status.replace('-', ' ')}*`;
  const fields: Array<[string, string | undefined]> = [
    ['Detect', rule.detect],
    ['Evidence', rule.evidence],
    ['Why', rule.why],
    ['Fix', rule.fix],
  ];
  const out = [`#### ${rule.id} ${rule.title} — ${severityLine(rule)}${status}`];
  for (const [label, text] of fields) if (text !== undefined) out.push('', ...fieldLines(label, text));
  return out;
}

/** `R01–R51`: the first and last id of the listed rules. */
function span(rules: readonly RuleRecord[]): string {
  return rules.length === 0 ? 'none' : `${rules[0]!.id}–${rules[rules.length - 1]!.id}`;
}

export function renderRulesMarkdown(rules: readonly RuleRecord[] = allRules()): string {
  const configRules = rules.filter((r) => r.id.startsWith('R'));
  const outputRules = rules.filter((r) => r.id.startsWith('D'));
  const blocks: string[][] = [
    ['# l20-setup rules catalog'],
    ['<!-- Generated from src/rules/catalog/ by `npm run docs:rules`: edit the records there, not this file. -->'],
    [...RULES_DOC_LEAD, '`l20-setup rules [ID…]` prints any of them in a terminal; `--json` gives the records.'],
    [...RULES_DOC_DEFINITIONS],
    [`## 2. Configuration, host and pair rules (${span(configRules)})`],
  ];
  for (const family of FAMILIES) {
    const members = configRules.filter((r) => r.family === family);
    if (members.length === 0) continue;
    blocks.push([`### ${FAMILY_TITLES[family]}`]);
    for (const rule of members) blocks.push(ruleSection(rule));
  }
  blocks.push([`## 3. Diagnostic-output rules (${span(outputRules)})`], [...OUTPUT_RULES_LEAD]);
  for (const rule of outputRules) blocks.push(ruleSection(rule));
  blocks.push([...RULES_DOC_ACCEPTANCE]);
  return `${blocks.map((b) => b.join('\n')).join('\n\n')}\n`;
}
