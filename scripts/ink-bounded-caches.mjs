/**
 * An esbuild plugin that swaps Ink's two text caches for bounded ones (ink-bounded-caches/ says why). Ink is
 * bundled into dist/bundle, so the CLI that operators run carries the fix without patching node_modules or
 * needing an install script. The build fails, naming what changed, if Ink's layout of these modules is not the
 * one the replacements were written against (a new Ink version: check whether it bounds its caches itself).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const REPLACED = {
  './measure-text.js': join(here, 'ink-bounded-caches/measure-text.js'),
  './wrap-text.js': join(here, 'ink-bounded-caches/wrap-text.js'),
};
/** What each replaced Ink module must still look like: a module-level unbounded cache. */
const EXPECTED = { './measure-text.js': 'const cache = new Map();', './wrap-text.js': 'const cache = {};' };
const WRITTEN_FOR = /^6\.8\./;

/** Ink's build folder (its entry point, build/index.js, lies there). */
export function inkBuildDir() {
  return dirname(fileURLToPath(import.meta.resolve('ink')));
}

/** The plugin; `inkBuild` is Ink's build folder (the installed one unless given). */
export function inkBoundedCaches(inkBuild = inkBuildDir()) {
  const version = JSON.parse(readFileSync(join(inkBuild, '..', 'package.json'), 'utf8')).version;
  for (const [spec, needle] of Object.entries(EXPECTED)) {
    const source = readFileSync(join(inkBuild, spec), 'utf8');
    if (!WRITTEN_FOR.test(version) || !source.includes(needle)) {
      throw new Error(
        `scripts/ink-bounded-caches: written for ink 6.8, found ink ${version} whose build/${spec.slice(2)} ` +
          `${source.includes(needle) ? 'still' : 'no longer'} has \`${needle}\`. See whether this Ink bounds its text caches; ` +
          'then update or drop the replacements in scripts/ink-bounded-caches/.',
      );
    }
  }
  return {
    name: 'ink-bounded-caches',
    setup(build) {
      const swapped = new Set();
      build.onResolve({ filter: /^\.\/(measure-text|wrap-text)\.js$/ }, (args) => {
        if (dirname(args.importer) + sep !== inkBuild + sep) return undefined;
        swapped.add(args.path);
        return { path: REPLACED[args.path] };
      });
      build.onEnd((result) => {
        if (result.errors.length > 0) return;
        const missing = Object.keys(REPLACED).filter((p) => !swapped.has(p));
        if (missing.length > 0) {
          result.errors.push({
            text: `ink-bounded-caches: Ink no longer imports ${missing.join(', ')}; its text caches were not replaced`,
          });
        }
      });
    },
  };
}
