/**
 * Loads a copied real sample from test/fixtures/. Corpus samples start with `# source:` and
 * `# context:` lines and a blank line, which are not tool output and are stripped here.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** The file exactly as stored (header included). */
export function loadRaw(relPath: string): string {
  return readFileSync(join(FIXTURES, relPath), 'utf8');
}

/** The tool output of a fixture: the 3 header lines removed when present. */
export function loadFixture(relPath: string): string {
  const raw = loadRaw(relPath);
  if (!raw.startsWith('# source:')) return raw;
  return raw.split('\n').slice(3).join('\n');
}

/**
 * Splits a fixture that combines several samples with curator separators
 * (`=== A ... ===`) into its parts, in order.
 */
export function splitSamples(text: string): string[] {
  return text
    .split(/^=== .* ===\s*$/m)
    .map((s) => s.replace(/^\n+/, ''))
    .filter((s) => s.trim() !== '');
}

// ---- variation helpers: the same output as real captures distort it ----

export const toCrlf = (s: string): string => s.replace(/\r?\n/g, '\r\n');

/** Wraps every non-empty line in colour escapes, as a TTY capture would. */
export const ansiWrap = (s: string): string =>
  s
    .split('\n')
    .map((l) => (l.trim() === '' ? l : `\u001b[1;32m${l}\u001b[0m`))
    .join('\n');

export const tabsToSpaces = (s: string): string => s.replace(/\t/g, '    ');
export const spacesToTabs = (s: string): string => s.replace(/ {2,}/g, '\t');

export const withPrompt = (s: string, command: string): string => `user@l20-n1:~$ ${command}\n${s}`;

/** The text cut after `fraction` of its characters (mid-line in general). */
export const truncateAt = (s: string, fraction: number): string => s.slice(0, Math.floor(s.length * fraction));

export const withTrailingSpaces = (s: string): string =>
  s
    .split('\n')
    .map((l) => (l === '' ? l : `${l}   `))
    .join('\n');

export const CUTS = [0.1, 0.25, 0.5, 0.75, 0.9, 0.99] as const;
