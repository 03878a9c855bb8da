/** The package version, found by walking up from this file (works from src/, dist/src/ and dist/bundle/). */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function packageVersion(): string {
  if (cached) return cached;
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'l20-setup' && pkg.version) return (cached = pkg.version);
    } catch {
      // one level further up (dist/)
    }
  }
  return (cached = 'unknown');
}
