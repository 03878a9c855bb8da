/** docs/RULES.md is what `npm run docs:rules` renders from the catalog now, and holds every rule. */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allRules } from '../../src/rules/catalog/index.js';
import { renderRulesMarkdown } from '../../src/rules/catalog/markdown.js';

const ROOT = resolve(import.meta.dirname, '../..');
const committed = (): string => readFileSync(join(ROOT, 'docs/RULES.md'), 'utf8');

describe('docs/RULES.md', () => {
  it('is current: regenerate it with `npm run docs:rules` after editing src/rules/catalog/', () => {
    expect(committed() === renderRulesMarkdown(), 'docs/RULES.md is stale: run `npm run docs:rules`').toBe(true);
  });

  it('would be stale after a change to any record (so the check above can fail)', () => {
    const edited = allRules().map((r) => (r.id === 'R21' ? { ...r, fix: `${r.fix} Then reload.` } : r));
    expect(renderRulesMarkdown(edited)).not.toBe(committed());
  });

  it('has one section per rule, with its severity line, and keeps the definitions and the acceptance table', () => {
    const doc = committed();
    for (const rule of allRules()) expect(doc).toContain(`#### ${rule.id} ${rule.title} — `);
    expect(doc).toContain('#### R05 NCCL_IB_GID_INDEX — high, graded · cfg+host');
    expect(doc).toContain('## 1. Rules and findings');
    expect(doc).toContain('A **finding** is `{rule, severity, title, host?, source, evidence, fix}`');
    expect(doc).toContain('## 4. Acceptance');
    expect(doc).toContain('| T17 | `NCCL_ALGO=COLLNET_CHAIN`');
  });
});
