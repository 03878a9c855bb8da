#!/usr/bin/env node
/**
 * Bundles the CLI (dist/src/cli.js, from tsc) into dist/bundle with esbuild: one start-up read instead of
 * hundreds of module loads (bench/startup.mjs). ssh2 (optional native parts), just-bash (the lab, loaded only
 * by `--lab` and `lab`) and react-devtools-core (never loaded in production) stay outside. Ink's text caches
 * are replaced by bounded ones on the way (ink-bounded-caches.mjs).
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { inkBoundedCaches } from './ink-bounded-caches.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist/bundle');
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, 'dist/src/cli.js')],
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir,
  external: ['ssh2', 'just-bash', 'react-devtools-core'],
  logLevel: 'warning',
  // Bundled CommonJS (ssh2's helpers, React) calls require(); ESM output has none.
  banner: { js: "import { createRequire as l20CreateRequire } from 'node:module'; const require = l20CreateRequire(import.meta.url);" },
  plugins: [inkBoundedCaches()],
});
