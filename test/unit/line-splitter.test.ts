/**
 * LineSplitter skips the per-line clean-up for chunks with nothing to clean (issue 8: a host printing a
 * million lines spent its time there). The shortcut must give exactly what cleaning every line gives.
 */
import { describe, expect, it } from 'vitest';
import { collapseCarriageReturns, LineSplitter, sanitize } from '../../src/util/sanitize.js';

/** What the splitter promises: split on \n, each complete line's \r redraws collapsed and controls removed. */
function reference(text: string): string[] {
  const pieces = text.split('\n');
  const last = pieces.pop() ?? '';
  return [...pieces, ...(last === '' ? [] : [last])].map((l) => sanitize(collapseCarriageReturns(l)));
}

function viaSplitter(chunks: readonly string[]): string[] {
  const s = new LineSplitter();
  return [...chunks.flatMap((c) => s.push(c)), ...s.flush()];
}

describe('LineSplitter', () => {
  const clean = Array.from({ length: 3000 }, (_, i) => `line ${i}\twith text — ünï`).join('\n');
  const hostile = [
    'plain',
    'colour \u001b[31mred\u001b[0m',
    'title \u001b]0;pwned\u0007 gone',
    'progress 10%\r50%\r100%',
    'c1 \u009b31m and bidi \u202e override',
    'nul \u0000 and bell \u0007',
    'split escape \u001b',
    '[2J after',
  ].join('\n');

  it('gives what cleaning every line gives, for clean, hostile and mixed text cut anywhere', () => {
    for (const text of [clean, hostile, `${clean}\n${hostile}\n${clean}`, `${hostile}\n`]) {
      for (const size of [1, 7, 64, 1000, 65536]) {
        const chunks: string[] = [];
        for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size));
        expect(viaSplitter(chunks)).toEqual(reference(text));
      }
    }
  });

  it('cleans a line whose escape sequence starts in one chunk and ends in the next', () => {
    expect(viaSplitter(['ok line\nred \u001b[3', '1mtext\u001b[0m\n'])).toEqual(['ok line', 'red text']);
    expect(viaSplitter(['a\r', 'b\n'])).toEqual(['b']);
  });
});
