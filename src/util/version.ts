/** The package version, found by walking up from this file (works from src/ and from dist/src/). */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'l20-setup' && pkg.version) return pkg.version;
    } catch {
      // one level further up (dist/)
    }
  }
  return 'unknown';
}
