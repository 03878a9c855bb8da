/**
 * Ink's text caches, bounded (scripts/ink-bounded-caches): the replacements measure, wrap and truncate exactly
 * as Ink's own modules do, never hold more than their limit, and the CLI bundle carries them. The heap figures
 * are bench/ui-memory.mjs's.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JS build helpers, no types
import { inkBoundedCaches, inkBuildDir } from '../../scripts/ink-bounded-caches.mjs';
// @ts-expect-error plain JS build helpers, no types
import { BoundedMap, CACHE_ENTRIES } from '../../scripts/ink-bounded-caches/bounded-map.js';
// @ts-expect-error plain JS build helpers, no types
import measureText, { cache as measureCache } from '../../scripts/ink-bounded-caches/measure-text.js';
// @ts-expect-error plain JS build helpers, no types
import wrapText, { cache as wrapCache } from '../../scripts/ink-bounded-caches/wrap-text.js';

type Measure = (text: string) => { width: number; height: number };
type Wrap = (text: string, width: number, mode: string) => string;

const inkBuild: string = inkBuildDir();
const inkMeasure = (await import(pathToFileURL(join(inkBuild, 'measure-text.js')).href)).default as Measure;
const inkWrap = (await import(pathToFileURL(join(inkBuild, 'wrap-text.js')).href)).default as Wrap;

const SAMPLES = [
  '',
  'GPU0  L20  93%  41210/46068 MiB  71°C  312 W',
  'two\nlines of text\n',
  '\u001b[31mred\u001b[39m and \u001b[1mbold\u001b[22m',
  '中文字符 and ascii',
  '🚀 launch ✔ done ⊘ stale',
  'a'.repeat(300),
  'word '.repeat(60),
  'tab\there',
];

describe('BoundedMap', () => {
  it('keeps at most its limit, dropping the least recently used', () => {
    const m = new BoundedMap(3);
    m.set('a', 1);
    m.set('b', 2);
    m.set('c', 3);
    expect(m.get('a')).toBe(1); // a is now the most recent
    m.set('d', 4);
    expect(m.size).toBe(3);
    expect(m.get('b')).toBeUndefined();
    expect([m.get('a'), m.get('c'), m.get('d')]).toEqual([1, 3, 4]);
    m.set('c', 30); // a set refreshes too
    m.set('e', 5);
    expect(m.get('a')).toBeUndefined();
    expect(m.get('c')).toBe(30);
  });

  it('refuses a limit that is not a positive integer, naming it', () => {
    expect(() => new BoundedMap(0)).toThrow(/positive integer, got 0/);
    expect(() => new BoundedMap(1.5)).toThrow(/got 1.5/);
  });
});

describe('the replacements behave as Ink 6.8 modules do', () => {
  it('measureText: the same width and height for every sample, cached or not', () => {
    for (const s of SAMPLES) {
      expect(measureText(s), JSON.stringify(s)).toEqual(inkMeasure(s));
      expect(measureText(s), `${JSON.stringify(s)} (cached)`).toEqual(inkMeasure(s));
    }
  });

  it('wrapText: the same text for wrap and the three truncations at widths 1 to 80', () => {
    for (const s of SAMPLES) {
      for (const mode of ['wrap', 'truncate', 'truncate-end', 'truncate-middle', 'truncate-start']) {
        for (const width of [1, 2, 5, 17, 40, 80]) {
          expect(wrapText(s, width, mode), `${JSON.stringify(s)} ${mode} ${width}`).toBe(inkWrap(s, width, mode));
        }
      }
    }
  });

  it('never hold more than their limit, however many distinct strings go through', () => {
    for (let i = 0; i < CACHE_ENTRIES * 3; i++) {
      const text = `GPU${i % 8} util ${i}% temp ${(i * 7) % 90}°C`;
      measureText(text);
      wrapText(text, 60, 'truncate');
    }
    expect(measureCache.size).toBe(CACHE_ENTRIES);
    expect(wrapCache.size).toBe(CACHE_ENTRIES);
  });

  it('key width and mode apart from the text (Ink joined them with nothing between)', () => {
    // Ink's key for ("ab1", 2) and ("ab", 12) is the same string "ab12truncate".
    expect(wrapText('ab1', 2, 'truncate')).toBe(inkWrap('ab1', 2, 'truncate'));
    expect(wrapText('ab', 12, 'truncate')).toBe('ab');
  });
});

describe('the plugin', () => {
  function fakeInk(version: string, edit: (file: string, source: string) => string = (_f, s) => s): string {
    const dir = mkdtempSync(join(tmpdir(), 'l20-fake-ink-'));
    cpSync(join(inkBuild, '..', 'package.json'), join(dir, 'package.json'));
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, version }));
    cpSync(inkBuild, join(dir, 'build'), { recursive: true });
    for (const f of ['measure-text.js', 'wrap-text.js']) {
      writeFileSync(join(dir, 'build', f), edit(f, readFileSync(join(dir, 'build', f), 'utf8')));
    }
    return dir;
  }

  it('accepts the Ink it was written for', () => {
    const dir = fakeInk('6.8.0');
    try {
      expect(inkBoundedCaches(join(dir, 'build')).name).toBe('ink-bounded-caches');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops the build, naming the version and the file, when Ink changes under it', () => {
    const newer = fakeInk('7.2.0');
    const bounded = fakeInk('6.8.0', (f, s) =>
      f === 'wrap-text.js' ? s.replace('const cache = {};', 'const cache = new LRU(1000);') : s,
    );
    try {
      expect(() => inkBoundedCaches(join(newer, 'build'))).toThrow(/found ink 7\.2\.0 .*measure-text\.js/);
      expect(() => inkBoundedCaches(join(bounded, 'build'))).toThrow(
        /build\/wrap-text\.js no longer has `const cache = \{\};`/,
      );
    } finally {
      rmSync(newer, { recursive: true, force: true });
      rmSync(bounded, { recursive: true, force: true });
    }
  });

  it('is in the CLI bundle that operators run: Ink inside it has the bounded caches, not its own', () => {
    const dir = join(import.meta.dirname, '../../dist/bundle');
    const code = readdirSync(dir)
      .filter((f) => f.endsWith('.js'))
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    expect(code).toContain('new BoundedMap(CACHE_ENTRIES)');
    expect(code).not.toContain('const cacheKey = text + String(maxWidth) + String(wrapType);');
    expect(code).toContain('wrapAnsi(text, maxWidth'); // Ink's wrapping is still there, through the replacement
  });
});
