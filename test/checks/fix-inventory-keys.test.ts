/**
 * No fix suggests what the schema refuses (issue 16 item 7): every inventory setting a fix text names
 * (`network.design in the inventory`, `(inventory vllm.model)`) is a key the zod schema accepts, and no fix
 * sends a password, passphrase or token to the inventory (the schema has no such key: they are given at run
 * time, --ask-sudo-password / --sudo-password-stdin).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { z } from 'zod';
import { clusterSchema, hostSchema } from '../../src/config/schema.js';
import { ROOT } from '../helpers/cli.js';

/** The object shapes under a schema, through defaults, optionals, arrays and refinements. */
function objectOf(s: z.ZodType): z.ZodObject | undefined {
  let cur: z.ZodType = s;
  for (let i = 0; i < 8; i++) {
    if (cur instanceof z.ZodObject) return cur;
    if (cur instanceof z.ZodArray) cur = cur.element as z.ZodType;
    else if ('unwrap' in cur && typeof cur.unwrap === 'function') cur = cur.unwrap() as z.ZodType;
    else if (cur instanceof z.ZodDefault) cur = cur.def.innerType as z.ZodType;
    else return undefined;
  }
  return undefined;
}

/** Whether `a.b.c` is a path of keys the cluster schema accepts (`hosts.x` for a per-host key). */
function acceptedPath(path: string): boolean {
  let cur: z.ZodType | undefined = clusterSchema;
  for (const part of path.split('.')) {
    const obj: z.ZodObject | undefined = cur ? objectOf(cur) : undefined;
    if (!obj || !(part in obj.shape)) return false;
    cur = obj.shape[part] as z.ZodType;
  }
  return true;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => join(d.parentPath, d.name));
}

/**
 * Every fix text of checks/ and src/ that mentions the inventory, with where it is: the initializer of each
 * property, variable or function whose name says fix (`fix:`, `MIGRATE_FIX`), read with the TypeScript parser, so a
 * text that spans lines (a ternary of two templates) is one text.
 */
const FIX_LINES = [...sourceFiles(join(ROOT, 'checks')), ...sourceFiles(join(ROOT, 'src'))].flatMap((f) => {
  const source = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ where: string; line: string }> = [];
  const visit = (node: ts.Node): void => {
    const fixNamed = (name: ts.Node | undefined): boolean => !!name && ts.isIdentifier(name) && /fix/i.test(name.text);
    let init: ts.Node | undefined;
    if ((ts.isPropertyAssignment(node) || ts.isVariableDeclaration(node)) && fixNamed(node.name))
      init = node.initializer;
    else if (ts.isFunctionDeclaration(node) && fixNamed(node.name)) init = node.body;
    if (init) {
      const text = init.getText(source).replace(/\s*\n\s*/g, ' ');
      const at = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      if (/\binventory\b/.test(text)) found.push({ where: `${f.slice(ROOT.length + 1)}:${at}`, line: text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
});

/** Inventory settings a fix names: `X.Y in the inventory`, `inventory X.Y` (check ids are `inventory.x`). */
function namedKeys(line: string): string[] {
  const keys = [
    ...[...line.matchAll(/\b([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+) in the inventory/g)].map((m) => m[1]!),
    ...[...line.matchAll(/\binventory ([a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)+)/g)].map((m) => m[1]!),
  ];
  return keys.filter((k) => !k.startsWith('inventory.'));
}

describe('fix texts name only inventory keys the schema accepts', () => {
  it('finds the fix texts that mention the inventory', () => {
    expect(FIX_LINES.length).toBeGreaterThan(5);
    const named = FIX_LINES.flatMap((l) => namedKeys(l.line));
    expect(named).toEqual(expect.arrayContaining(['network.design', 'vllm.model']));
  });

  it('every key a fix names is in the schema', () => {
    const bad = FIX_LINES.flatMap((l) =>
      namedKeys(l.line)
        .filter((k) => !acceptedPath(k))
        .map((k) => `${l.where}: ${k}`),
    );
    expect(bad).toEqual([]);
    // The check is not vacuous: a key the schema lacks is told apart.
    expect(acceptedPath('network.design')).toBe(true);
    expect(acceptedPath('hosts.knownHostsFile')).toBe(true);
    expect(acceptedPath('hosts.sudoPassword')).toBe(false);
    expect(acceptedPath('network.password')).toBe(false);
  });

  it('no fix puts a password, passphrase or token into the inventory (the schema refuses them)', () => {
    const secretInInventory = new RegExp(
      String.raw`\b(?:password|passphrase|token|secret)\b[^.;\x60]*\binventory\b` +
        String.raw`|\binventory\b[^.;\x60]*\b(?:password|passphrase)\b`,
      'i',
    );
    expect(FIX_LINES.filter((l) => secretInInventory.test(l.line)).map((l) => l.where)).toEqual([]);
    expect(secretInInventory.test('or configure a sudo password in the inventory (sent on stdin only)')).toBe(true);
    const host = { name: 'a', address: '10.0.0.1', role: 'head' };
    for (const key of ['sudoPassword', 'password', 'passphrase']) {
      expect(hostSchema.safeParse({ ...host, [key]: 'x' }).success, key).toBe(false);
    }
  });
});
