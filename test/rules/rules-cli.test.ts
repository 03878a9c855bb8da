/** `l20-setup rules` through the built binary (`npm run build` first): text, JSON, case, unknown ids, help. */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { allRules, ruleById, ruleIdRange } from '../../src/rules/catalog/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/l20-setup.js');
const run = promisify(execFile);

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Wrapping splits at spaces only: with runs of blanks folded, every field reads as in the record. */
const unwrapped = (text: string): string => text.replace(/\s+/g, ' ');

describe('l20-setup rules', () => {
  it('rules R21 prints its severity, title, condition, reasoning and fix, wrapped to at most 110 columns', async () => {
    const r = await cli(['rules', 'R21']);
    expect(r.code).toBe(0);
    const r21 = ruleById('R21')!;
    expect(r.stdout.split('\n')[0]).toBe('R21  Netplan hygiene  [low, graded · cfg]');
    for (const text of [r21.title, r21.detect, r21.why, r21.fix]) {
      expect(unwrapped(r.stdout)).toContain(unwrapped(text));
    }
    expect(r.stdout).toMatch(/^ {2}fix {7}\S/m);
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(110);
    expect(r.stdout).not.toContain('R22');
  });

  it('ids are case-insensitive and printed in the order given, each once', async () => {
    const r = await cli(['rules', 'd03', 'r21', 'R21']);
    expect(r.code).toBe(0);
    const heads = r.stdout
      .split('\n')
      .filter((l) => /^[RD]\d\d {2}/.test(l))
      .map((l) => l.slice(0, 3));
    expect(heads).toEqual(['D03', 'R21']);
  });

  it('rules --json R01 D03 parses to exactly those two records', async () => {
    const r = await cli(['rules', '--json', 'R01', 'D03']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([ruleById('R01'), ruleById('D03')]);
  });

  it('without an id, every rule of the catalog', async () => {
    const r = await cli(['rules', '--json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((x) => x.id)).toEqual(allRules().map((x) => x.id));
  });

  it('an unknown id exits 2, naming it and the valid range, and prints no rule', async () => {
    const r = await cli(['rules', 'R21', 'R99']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('"R99"');
    expect(r.stderr).toContain(ruleIdRange());
    expect(r.stderr).not.toContain('"R21"');
  });

  it('--help describes the verb; the main help lists it', async () => {
    const help = await cli(['rules', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: l20-setup rules \[ID…\] \[--json\]/);
    const main = await cli(['--help']);
    expect(main.stdout).toMatch(/^ {2}l20-setup rules \[ID…\] \[--json\]/m);
  });
});
