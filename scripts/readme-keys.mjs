#!/usr/bin/env node
/**
 * Writes README.md's key list from the binding tables (screens/input/keys-doc.ts): run it after changing a
 * binding; test/ui/readme-keys.test.ts fails until then. Bundles the generator with esbuild (packages stay in
 * node_modules) into dist/readme-keys and replaces what lies between the list's markers.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importBundled } from './esbuild-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { keysMarkdown, KEYS_BEGIN, KEYS_END } = await importBundled(root, 'screens/input/keys-doc.ts', 'readme-keys');
const readme = join(root, 'README.md');
const text = readFileSync(readme, 'utf8');
const begin = text.indexOf(KEYS_BEGIN);
const end = text.indexOf(KEYS_END);
if (begin < 0 || end < begin) throw new Error(`README.md has no key list between "${KEYS_BEGIN}" and "${KEYS_END}"`);
// A temporary file renamed over README.md: an interrupted run leaves the old file whole.
const tmp = `${readme}.l20tmp.${process.pid}`;
writeFileSync(tmp, text.slice(0, begin) + keysMarkdown() + text.slice(end + KEYS_END.length));
renameSync(tmp, readme);
process.stdout.write('README.md: key list written from the binding tables\n');
