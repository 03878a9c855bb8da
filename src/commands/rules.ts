/**
 * `l20-setup rules [ID…] [--json]`: what a rule id in a finding means. Prints each rule's severity, scope,
 * title, condition, reasoning and fix from the catalog (src/rules/catalog/, the source docs/RULES.md is
 * generated from), wrapped for the terminal; --json prints the records. An unknown id is a usage error (exit 2).
 */
import { asciiSafe } from '../config/errors.js';
import { allRules, ruleById, ruleIdRange, severityLine } from '../rules/catalog/index.js';
import type { RuleRecord } from '../rules/catalog/schema.js';
import { wrapText } from '../util/wrap-text.js';
import { UsageError, useColor, type CliValues } from './common.js';

const LIST_ITEM = /^(- |\d+\. )/;
const LABEL_WIDTH = 10;
/** Narrower terminals still get readable lines; wider ones do not get lines too long to scan. */
const MIN_WIDTH = 60;
const MAX_WIDTH = 110;
const PIPE_WIDTH = 100;

/** The rules named on the command line (any case, commas allowed), in the order given, each once. */
export function selectRules(ids: readonly string[]): RuleRecord[] {
  const wanted = ids
    .flatMap((arg) => arg.split(','))
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (wanted.length === 0) return [...allRules()];
  const unknown = wanted.filter((id) => ruleById(id) === undefined);
  if (unknown.length > 0) {
    // Quoted as typed, escaped: an id pasted from a hostile log cannot drive the terminal.
    const named = unknown.map((id) => `"${asciiSafe(id.slice(0, 40))}"`).join(', ');
    const noun = unknown.length > 1 ? 'ids' : 'id';
    throw new UsageError(`rules: unknown rule ${noun} ${named}; rule ids are ${ruleIdRange()}`);
  }
  const picked = new Map<string, RuleRecord>();
  for (const id of wanted) {
    const rule = ruleById(id)!;
    if (!picked.has(rule.id)) picked.set(rule.id, rule);
  }
  return [...picked.values()];
}

/** One field under its label: paragraphs wrapped beside the label, list items with a hanging indent. */
function fieldLines(label: string, text: string, width: number): string[] {
  const pad = ' '.repeat(2 + LABEL_WIDTH);
  const out: string[] = [];
  text.split('\n').forEach((line, index) => {
    const lead = index === 0 ? `  ${label.padEnd(LABEL_WIDTH)}` : pad;
    const item = LIST_ITEM.exec(line);
    const restIndent = item ? pad + ' '.repeat(item[1]!.length) : pad;
    out.push(...wrapText(line, { width, firstIndent: lead, restIndent }));
  });
  return out;
}

export function formatRule(rule: RuleRecord, width: number, color: boolean): string {
  const status = rule.status === 'implemented' ? '' : `, ${rule.status.replace('-', ' ')}`;
  const head = `${rule.id}  ${rule.title}  [${severityLine(rule)}${status}]`;
  const lines = [color ? `\u001b[1m${head}\u001b[0m` : head];
  lines.push(...fieldLines('detect', rule.detect, width));
  if (rule.evidence !== undefined) lines.push(...fieldLines('evidence', rule.evidence, width));
  lines.push(...fieldLines('why', rule.why, width), ...fieldLines('fix', rule.fix, width));
  return lines.join('\n');
}

function terminalWidth(): number {
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, columns ?? PIPE_WIDTH));
}

export function runRules(values: CliValues, ids: readonly string[]): number {
  const rules = selectRules(ids);
  if (values.json) {
    process.stdout.write(`${JSON.stringify(rules, null, 2)}\n`);
    return 0;
  }
  const width = terminalWidth();
  const color = useColor();
  process.stdout.write(`${rules.map((rule) => formatRule(rule, width, color)).join('\n\n')}\n`);
  return 0;
}
