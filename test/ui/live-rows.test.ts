/**
 * LiveRows' rows (issue 8): a pane's output is written into a blank Ink laid out, so each row must be exactly
 * as wide as the blank, counted as Ink's grid counts columns, or the pane's border would move.
 */
import { describe, expect, it } from 'vitest';
import { colorWanted, fitColumns, outputRow } from '../../screens/stage/live-rows.js';

/** Columns as Ink's grid counts them after SGR codes are gone: one per character, two for wide ones. */
function columns(row: string): number {
  return Array.from(row.replace(/\u001b\[[0-9;]*m/g, '')).reduce(
    (n, c) =>
      n +
      (/[\u1100-\u115f\u2e80-\u9fff\uac00-\ud7a3\uff00-\uff60\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}]/u.test(c) ? 2 : 1),
    0,
  );
}

describe('live rows', () => {
  it('fits any text to exactly the width: padded, or cut with an ellipsis, wide characters counted twice', () => {
    for (const text of [
      '',
      'short',
      'x'.repeat(200),
      'größe ✓ naïve',
      '漢字かな混じり文です。とても長い行になります',
      'emoji 🚀🚀🚀 end',
      'tab\tinside',
    ]) {
      for (const width of [1, 2, 5, 12, 40]) {
        const row = fitColumns(text, width);
        expect(columns(row)).toBe(width);
      }
    }
    expect(fitColumns('abcdef', 4)).toBe('abc…');
    expect(fitColumns('abc', 5)).toBe('abc  ');
    expect(fitColumns('ab漢字', 5)).toBe('ab漢…');
    // A wide character that does not fit before the ellipsis leaves a blank column instead.
    expect(fitColumns('abcd漢字', 6)).toBe('abcd… ');
    expect(fitColumns('漢字漢字', 6)).toBe('漢字… ');
  });

  it('an output row is the probe tag, a bar and the line, exactly the pane width, with or without colour', () => {
    for (const color of [false, true]) {
      for (const line of [
        { text: 'PFC configuration:', stderr: false, probe: 'mlnx_qos' },
        { text: 'warning: 漢字 '.repeat(20), stderr: true, probe: 'a-very-long-probe-name' },
      ]) {
        const row = outputRow(line, 60, 12, color);
        expect(columns(row)).toBe(60);
      }
    }
    expect(outputRow({ text: 'x\ty', stderr: false, probe: 'p' }, 20, 4, false)).toBe('p   │x  y           ');
    expect(outputRow({ text: 'oops', stderr: true, probe: 'p' }, 12, 2, true)).toBe(
      '\u001b[2mp │\u001b[22m\u001b[33moops     \u001b[39m',
    );
  });

  it('colours as Ink does: FORCE_COLOR first, then a terminal that is not dumb; never with NO_COLOR', () => {
    expect(colorWanted({}, true)).toBe(true);
    expect(colorWanted({}, false)).toBe(false);
    expect(colorWanted({ TERM: 'dumb' }, true)).toBe(false);
    expect(colorWanted({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorWanted({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorWanted({ FORCE_COLOR: '0' }, true)).toBe(false);
  });
});
