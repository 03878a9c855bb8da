/**
 * README's key list is the binding tables' (screens/input/keys-doc.ts renders them; scripts/readme-keys.mjs
 * writes them into README.md): a binding added, changed or removed fails here until the script is run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEYS_BEGIN, KEYS_END, keysMarkdown } from '../../screens/input/keys-doc.js';
import { pipelineBindings } from '../../screens/input/bindings.js';

const README = join(import.meta.dirname, '../../README.md');

function readmeKeys(): string {
  const text = readFileSync(README, 'utf8');
  const begin = text.indexOf(KEYS_BEGIN);
  const end = text.indexOf(KEYS_END);
  expect(begin, "the key list's first marker in README.md").toBeGreaterThanOrEqual(0);
  expect(end, "the key list's last marker after the first").toBeGreaterThan(begin);
  return text.slice(begin, end + KEYS_END.length);
}

describe("README's key list", () => {
  it('is what the binding tables say (after changing a binding: node scripts/readme-keys.mjs)', () => {
    expect(readmeKeys()).toBe(keysMarkdown());
  });

  it('names every key of a table with what it does, and wraps at 120 columns', () => {
    const md = keysMarkdown();
    const unwrapped = md.replace(/\n {2}/g, ' ');
    for (const b of pipelineBindings) expect(unwrapped).toContain(b.description);
    expect(md).toContain('- **Help**: `Esc`/`?` close this help.');
    for (const line of md.split('\n')) expect(Array.from(line).length, line).toBeLessThanOrEqual(120);
  });
});
