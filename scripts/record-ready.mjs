#!/usr/bin/env node
/**
 * Re-records the lab's `ready` scenario from the stages' own apply (test/lab/record-ready.ts): run it
 * after changing anything the apply writes (a generator, a unit, a script); test/lab/ready-from-apply.test.ts
 * fails naming the file until then. Bundles the recorder with esbuild (packages stay in node_modules) and runs it.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist/record-ready');
rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, 'record-ready.mjs');
await build({
  entryPoints: [join(root, 'test/lab/record-ready.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
const { recordReady } = await import(pathToFileURL(outfile).href);
await recordReady(join(root, 'lab/scenarios/ready/snapshot.ts'));
