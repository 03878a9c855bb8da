#!/usr/bin/env node
/**
 * `npm run docs:rules`: writes docs/RULES.md from the rule records (src/rules/catalog/). The TypeScript is
 * bundled in memory with esbuild, so the document can be regenerated without a full build.
 * With --check it writes nothing and exits 1 when docs/RULES.md is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'docs/RULES.md');

const bundled = await build({
  entryPoints: [join(root, 'src/rules/catalog/markdown.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  write: false,
  logLevel: 'error',
});
const source = bundled.outputFiles[0].text;
const { renderRulesMarkdown } = await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);
const markdown = renderRulesMarkdown();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    /* a missing file is out of date too */
  }
  if (current !== markdown) {
    process.stderr.write('docs/RULES.md is out of date: run `npm run docs:rules`\n');
    process.exit(1);
  }
} else {
  writeFileSync(target, markdown);
  process.stdout.write(`wrote docs/RULES.md (${markdown.split('\n').length - 1} lines)\n`);
}
