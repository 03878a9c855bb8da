/**
 * The product cites only documents inside the repo: no file in src/, screens/, checks/, bin/ or README.md names a
 * path under ../shared, or a bare RULES.md, STAGES.md, DOCTOR.md, DESIGN.md or STYLE.md that is not docs/…, and
 * every docs/ file they name exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
/** Where people read the product: code, views, stage data, the launcher and the README (the lab, wherever it is). */
const SCANNED = ['src', 'screens', 'checks', 'bin', 'lab', 'README.md'];
const TEXT_FILE = /\.(?:ts|tsx|js|mjs|cjs|md|json)$/;

const OUTSIDE_PATH = /(?:\.\.\/|\/work\/)shared\b|\bshared\/spec\//;
const BARE_SPEC = /(?<![\w/.-])(?:RULES|STAGES|DOCTOR|DESIGN|STYLE|RULES-ADDITIONS)\.md\b/;
const DOCS_REFERENCE = /\bdocs\/[\w.-]+\.md\b/g;

/**
 * Lines that keep a bare name on purpose, each with why: they are the content of files the stages write on the
 * hosts, or of scripts they send there. Changing one rewrites that file on every converged host (the GRUB
 * drop-in means a reboot), and the lab's ready scenario and the device recordings hold them byte for byte.
 */
const HOST_CONTENT: ReadonlyArray<{ text: string; why: string }> = [
  { text: '# l20-setup: IOMMU passthrough for GPU and NIC DMA (RULES.md R36)', why: 'GRUB drop-in on the hosts' },
  {
    text: '# l20-setup: ACS redirect off on the PCIe bridges above the GPUs and fabric NICs (RULES.md R36)',
    why: 'boot script installed on the hosts',
  },
  { text: '# Written by l20-setup (stage ray, STAGES.md §3.10)', why: 'header of the Ray units on the hosts' },
  { text: '# Written by l20-setup (stage vllm, STAGES.md §3.11)', why: 'header of the vLLM units on the hosts' },
  {
    text: '# vLLM binds its API to the management address (RULES.md R46)',
    why: 'the monitor loop sent to every host; the device recordings match it byte for byte',
  },
];

function textFiles(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return TEXT_FILE.test(path) ? [path] : [];
  return readdirSync(path).flatMap((name) => (name === 'node_modules' ? [] : textFiles(join(path, name))));
}

const lines = SCANNED.flatMap((entry) => textFiles(join(ROOT, entry))).flatMap((path) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .map((text, i) => ({ where: `${relative(ROOT, path)}:${i + 1}`, text })),
);

const keptOnPurpose = (text: string): boolean => HOST_CONTENT.some((h) => text.includes(h.text));

describe('documents the product cites', () => {
  it('the patterns catch what they must (so the checks below can fail)', () => {
    for (const bad of ['see RULES.md R21', '(STAGES.md §3.4)', "DESIGN.md's shape", 'read ../shared/spec/DOCTOR.md']) {
      expect(BARE_SPEC.test(bad) || OUTSIDE_PATH.test(bad), bad).toBe(true);
    }
    for (const good of ['see docs/RULES.md R21', '(docs/STAGES.md §3.4)', 'docs/DESIGN.md', 'shared probes']) {
      expect(BARE_SPEC.test(good) || OUTSIDE_PATH.test(good), good).toBe(false);
    }
  });

  it('no path outside the repo, and no spec named without docs/', () => {
    expect(lines.length).toBeGreaterThan(10_000);
    const cited = (text: string): boolean => OUTSIDE_PATH.test(text) || BARE_SPEC.test(text);
    const outside = lines.filter((l) => cited(l.text) && !keptOnPurpose(l.text));
    expect(outside.map((l) => `${l.where}: ${l.text.trim().slice(0, 160)}`)).toEqual([]);
  });

  it('every line kept on purpose still exists (a stale entry would hide nothing)', () => {
    for (const h of HOST_CONTENT)
      expect(
        lines.some((l) => l.text.includes(h.text)),
        h.text,
      ).toBe(true);
  });

  it('every docs/ document they name is in the repo, the specs included', () => {
    const named = new Set(lines.flatMap((l) => [...l.text.matchAll(DOCS_REFERENCE)].map((m) => m[0])));
    for (const spec of ['docs/RULES.md', 'docs/STAGES.md', 'docs/DOCTOR.md', 'docs/DESIGN.md']) named.add(spec);
    expect([...named].filter((doc) => !existsSync(join(ROOT, doc)))).toEqual([]);
  });
});
