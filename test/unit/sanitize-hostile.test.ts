/**
 * Hostile remote output through the path a probe's output takes to the screen: bytes decoded by the
 * transport's StreamCollector (a streaming UTF-8 decoder), split into lines by the LineSplitter (which
 * holds a partial line, so a sequence split across SSH packets is sanitized whole), sanitized. Every
 * kind in HOSTILE alone, split at every byte offset, and between ordinary text.
 */
import { describe, expect, it } from 'vitest';
import { StreamCollector, tailLines } from '../../src/transport/output.js';
import { collapseCarriageReturns, LineSplitter, sanitize } from '../../src/util/sanitize.js';
import { expectedLine, FORBIDDEN, HOSTILE, hostileLines } from '../helpers/hostile-output.js';

/** Feeds `chunks` through decoder and splitter as an SSH channel delivers them; returns the display lines. */
function display(chunks: readonly Buffer[]): string[] {
  const splitter = new LineSplitter();
  const lines: string[] = [];
  const collector = new StreamCollector(1 << 20, (text) => lines.push(...splitter.push(text)));
  for (const c of chunks) collector.push(c);
  collector.finish();
  lines.push(...splitter.flush());
  return lines;
}

/** Every way of cutting `buf` into two chunks, and the one-byte-at-a-time delivery. */
function deliveries(buf: Buffer): Buffer[][] {
  const out: Buffer[][] = [];
  for (let i = 0; i <= buf.length; i++) out.push([buf.subarray(0, i), buf.subarray(i)]);
  out.push([...buf].map((b) => Buffer.from([b])));
  return out;
}

function expectInert(line: string, what: string): void {
  const bad = FORBIDDEN.exec(line);
  expect(
    bad,
    `${what}: U+${bad?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} in ${JSON.stringify(line)}`,
  ).toBeNull();
}

describe('hostile remote output is inert once sanitized', () => {
  let splits = 0;

  it.each(HOSTILE.map((e) => [e.name, e] as const))(
    '%s: alone, split at every byte offset, and mid-line',
    (_name, e) => {
      // Alone, as a line of its own.
      const alone = display([Buffer.concat([e.bytes, Buffer.from('\n')])]);
      expect(alone).toEqual([e.shows]);
      expectInert(alone[0]!, 'alone');

      // Between ordinary text, with a tab kept; and as the last line without a newline (flushed at the end).
      const before = 'ok\tbefore ';
      const after = ' after ok';
      const line = Buffer.concat([Buffer.from(before), e.bytes, Buffer.from(after)]);
      const want = expectedLine(e, before, after);
      expect(display([line, Buffer.from('\nnext line\n')])).toEqual([want, 'next line']);
      expect(display([line])).toEqual([want]);
      expectInert(want.replace(/\t/g, ' '), 'mid-line');
      if (!e.repaints) expect(want.startsWith(before) && want.endsWith(after)).toBe(true);

      // The same bytes however the stream is cut: the splitter holds the partial line, the decoder a partial character.
      const stream = Buffer.concat([Buffer.from('first\n'), line, Buffer.from('\nlast\n')]);
      for (const chunks of deliveries(stream)) {
        expect(display(chunks)).toEqual(['first', want, 'last']);
        splits++;
      }
    },
  );

  it('every kind, one per line as a file holds them, in one stream', () => {
    const { bytes, expected } = hostileLines();
    const lines = display([bytes]);
    expect(lines).toEqual(expected);
    for (const l of lines) expectInert(l, 'file line');
    // The transport's tail (a failed command's error) and the whole-output path agree.
    const collector = new StreamCollector(1 << 20);
    collector.push(bytes);
    const whole = collector.finish();
    expect(sanitize(whole).split('\n').filter(Boolean)).toHaveLength(HOSTILE.length);
    expectInert(sanitize(whole).replace(/\n/g, ' '), 'whole output');
    // tailLines (a failed command's last lines) drops a carriage return instead of redrawing: the same text otherwise.
    const tail = tailLines(whole, 1000);
    expect(tail).toHaveLength(HOSTILE.length);
    HOSTILE.forEach((e, i) => {
      expectInert(tail[i]!, `tail of ${e.name}`);
      if (!e.repaints) expect(tail[i]).toBe(expected[i]);
    });
    console.log(
      `sanitize-hostile: ${HOSTILE.length} kinds of control sequence checked alone, mid-line and cut at every byte offset (${splits} deliveries): all inert, surrounding text kept`,
    );
  });

  it('decodes a stream with a streaming decoder: characters split across chunks stay whole, bad bytes become U+FFFD', () => {
    const text = 'ü € 😀 中文 — ok';
    const buf = Buffer.from(`${text}\n`);
    for (const chunks of deliveries(buf)) expect(display(chunks)).toEqual([text]);
    // A character cut off at the end of the stream is replaced, not dropped silently nor passed on raw.
    expect(display([Buffer.from([0x61, 0xe2, 0x82])])).toEqual(['a\ufffd']);
    expect(display([Buffer.from([0x61, 0xf0, 0x9f, 0x98])])).toEqual(['a\ufffd']);
  });

  it('an unterminated sequence ends with its line: it cannot swallow the lines after it', () => {
    expect(sanitize('a\u001b]0;title\nb\u0007c\n')).toBe('a\nbc\n');
    expect(sanitize('a\u001bPq no end\nb\n')).toBe('a\nb\n');
    expect(sanitize('end of line\u001b\nnext')).toBe('end of line\nnext');
    // A C1 OSC ended by the 7-bit ST: the text after it stays (taking ESC \\ out first would let the OSC run on).
    expect(sanitize('a\u009d0;title\u001b\\b')).toBe('ab');
  });

  it('a coloured progress redraw collapses to what the terminal shows, not to half an escape', () => {
    expect(collapseCarriageReturns('\u001b[32m 50%\u001b[0m\r\u001b[32m100%\u001b[0m')).toBe('100%');
    expect(display([Buffer.from('\u001b[1mabcdef\u001b[0m\rXY\n')])).toEqual(['XYcdef']);
  });
});
