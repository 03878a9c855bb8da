/**
 * The product does not read anything from the simulator: no file of checks/** or src/** outside src/lab/**
 * imports a module under src/lab/, except the few whose job is to start the lab. If the product took a
 * value from the lab (a version pin, a file path, a generator), the lab would be confirming itself.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const LAB_DIR = join(ROOT, 'src', 'lab');

/** Files allowed to import the lab, each with why: they start it or name its scenarios for the CLI. */
const LAB_STARTERS: Readonly<Record<string, string>> = {
  'src/lab-serve.ts': '`l20-setup lab serve`: starts the lab and writes its inventory',
  'src/target.ts': '`--lab`: starts an in-process lab as the target of a run',
  'src/commands/common.ts': '`--scenario`: checks the scenario name against the lab\'s list before starting it',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return path === LAB_DIR ? [] : sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every module specifier of the file: `import … from`, `export … from`, side-effect and dynamic imports. */
function importSpecifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/gm,
    /^\s*import\s*['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) found.push(m[1]!);
  return found;
}

/** The relative specifiers of `file` that resolve into src/lab/. */
function labImports(file: string, text: string): string[] {
  return importSpecifiers(text).filter((s) => {
    if (!s.startsWith('.')) return false;
    const target = resolve(dirname(file), s);
    return target === LAB_DIR || target.startsWith(`${LAB_DIR}/`);
  });
}

describe('the product imports nothing from the lab', () => {
  it('the scanner sees every import form (so the boundary check below can fail)', () => {
    const file = join(ROOT, 'checks', 'nccl', 'x.ts');
    const text = [
      "import { PINS } from '../../src/lab/model/python.js';",
      "import type {\n  Machine,\n} from '../../src/lab/model/types.js';",
      "export { x } from '../../src/lab/x.js';",
      "import '../../src/lab/side-effect.js';",
      "const m = await import('../../src/lab/index.js');",
      "import { ok } from '../common/pins.js';",
      "import { lab } from '../../src/lab-serve.js';",
    ].join('\n');
    expect(labImports(file, text)).toEqual([
      '../../src/lab/model/python.js',
      '../../src/lab/model/types.js',
      '../../src/lab/x.js',
      '../../src/lab/side-effect.js',
      '../../src/lab/index.js',
    ]);
  });

  it('no file of checks/ or src/ outside src/lab/ imports src/lab/ (except the lab starters, listed)', () => {
    for (const path of Object.keys(LAB_STARTERS)) {
      expect(existsSync(join(ROOT, path)), `listed starter ${path}`).toBe(true);
    }
    const offenders: string[] = [];
    for (const file of [...sourceFiles(join(ROOT, 'checks')), ...sourceFiles(join(ROOT, 'src'))]) {
      const rel = relative(ROOT, file);
      if (rel in LAB_STARTERS) continue;
      for (const s of labImports(file, readFileSync(file, 'utf8'))) offenders.push(`${rel} imports ${s}`);
    }
    expect(offenders, 'the product must not read from the simulator: move the value into checks/ or src/').toEqual([]);
  });
});
