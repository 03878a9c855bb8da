#!/usr/bin/env node
/**
 * Bundles the CLI (dist/src/cli.js, from tsc) into dist/bundle with esbuild: one start-up read instead of
 * hundreds of module loads (bench/startup.mjs). What stays outside and what is replaced: esbuild-node.mjs.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from './esbuild-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist/bundle');
rmSync(outdir, { recursive: true, force: true });
await build({ ...nodeBundleOptions(), entryPoints: [join(root, 'dist/src/cli.js')], outdir });
