/**
 * What every esbuild bundle of this project's Node code shares (scripts/bundle.mjs for the CLI, and
 * bench/ui-memory.mjs for the views): ESM for Node 20; ssh2 (optional native parts), just-bash (the lab)
 * and react-devtools-core (never loaded in production) left outside; Ink's text caches bounded.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { inkBoundedCaches } from './ink-bounded-caches.mjs';

export function nodeBundleOptions({ boundInkCaches = true } = {}) {
  return {
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['ssh2', 'just-bash', 'react-devtools-core'],
    logLevel: 'warning',
    // Bundled CommonJS (ssh2's helpers, React) calls require(); ESM output has none.
    banner: {
      js: "import { createRequire as l20CreateRequire } from 'node:module'; const require = l20CreateRequire(import.meta.url);",
    },
    plugins: boundInkCaches ? [inkBoundedCaches()] : [],
  };
}

/**
 * Bundles one TypeScript module of the project (packages stay in node_modules) into dist/<name>/ and imports
 * it: how the dev scripts run TypeScript without a full build (scripts/record-ready.mjs, readme-keys.mjs).
 */
export async function importBundled(root, entry, name) {
  const outdir = join(root, 'dist', name);
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const outfile = join(outdir, `${name}.mjs`);
  await build({
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return import(pathToFileURL(outfile).href);
}
