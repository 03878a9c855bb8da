/**
 * Remote output is untrusted: it must never drive the operator's terminal. We remove every C0/C1
 * control except tab and newline, every escape sequence (CSI, OSC, DCS, APC, PM, SOS, screen's
 * ESC k title, and the two- and three-byte escapes such as ESC c or ESC ( 0), in their 7-bit and
 * 8-bit (C1) forms, and Unicode bidi overrides/isolates/marks, which can make text render in a
 * misleading order. Bytes are decoded before this (StringDecoder in transport/output.ts): invalid
 * UTF-8 arrives here as U+FFFD, so the C1 forms below are the UTF-8 encoded code points U+0080–U+009F.
 */

/*
 * One left-to-right pass over every sequence form, so one sequence's terminator is never taken for
 * another's text (removing ESC \ first would leave a C1 OSC running to the end of the line).
 *   CSI     ESC [ or U+009B, parameters, intermediates, final byte
 *   OSC     ESC ] or U+009D … BEL or ST (ESC \ or U+009C); an unterminated one runs to the end of its line
 *   strings ESC P/X/^/_/k or U+0090/98/9E/9F … ST; an ESC inside (tmux passthrough doubles them) stays in the string
 *   escapes ESC, intermediates (ESC ( 0, ESC # 8), one final byte (ESC c, ESC 7)
 *   ESC     anything else: the ESC and the one code point after it, unless that is a control (a terminal
 *           executes a control met inside a sequence; CONTROLS below removes it, but keeps tab and newline)
 * No sequence crosses a newline: an unterminated OSC must not swallow the lines after it (the evidence).
 */
const SEQUENCES =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c\n]*(?:\u0007|\u001b\\|\u009c)?|(?:\u001b[PX^_k]|[\u0090\u0098\u009e\u009f])(?:[^\u001b\u009c\n]|\u001b[^\\\n])*(?:\u001b\\|\u009c)?|\u001b[ -/]*[0-~]|\u001b[^\u0000-\u001f]?/gu;

const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/**
 * Every character that sanitize or collapseCarriageReturns acts on (each sequence starts with ESC or a C1
 * control; \r is a control): text without any of them comes out of both unchanged.
 */

const NEEDS_CLEANING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

/** Removes control sequences; keeps text, tabs and newlines. `\r` is removed too (callers collapse it first). */
export function sanitize(text: string): string {
  return text.replace(SEQUENCES, '').replace(CONTROLS, '').replace(BIDI, '');
}

declare const cleanBrand: unique symbol;
/**
 * Text that went through sanitize: it cannot drive a terminal. Text from a host or a file (transport errors,
 * step results, file names) is made clean where it enters; the sinks that reach the operator (engine events,
 * CLI printers) take CleanText, so a raw string fails to compile there instead of reaching a screen.
 */
export type CleanText = string & { readonly [cleanBrand]: true };

/** The one constructor of CleanText. Idempotent and cheap on text with nothing to remove. */
export function clean(text: string): CleanText {
  return (NEEDS_CLEANING.test(text) ? sanitize(text) : text) as CleanText;
}

/**
 * A carriage return inside a line is a progress redraw: keep what the terminal would finally show
 * (the text after the last `\r`, overlaid on what came before it). Escape sequences take no columns,
 * so they go first: a coloured progress line must not overlay its redraw onto half an escape.
 */
export function collapseCarriageReturns(line: string): string {
  if (!line.includes('\r')) return line;
  const parts = line.replace(SEQUENCES, '').replace(/\r+$/, '').split('\r');
  let shown = '';
  for (const part of parts) shown = part + shown.slice(part.length);
  return shown;
}

/**
 * Splits a stream into display lines across chunk boundaries: holds the partial last line,
 * collapses `\r` redraws, removes control sequences, expands nothing else.
 */
export class LineSplitter {
  private partial = '';

  push(chunk: string): CleanText[] {
    const text = this.partial + chunk;
    const pieces = text.split('\n');
    this.partial = pieces.pop() ?? '';
    // A runaway line without newline must not grow without bound.
    if (this.partial.length > 64 * 1024) {
      pieces.push(this.partial);
      this.partial = '';
    }
    // Most output has nothing to remove: one scan of the whole chunk spares a sanitize per line (a host
    // pouring out a million lines spends its time here). The partial line is scanned again with the next chunk.
    if (!NEEDS_CLEANING.test(text)) return pieces as CleanText[];
    return pieces.map((l) => clean(collapseCarriageReturns(l)));
  }

  /** The held partial line, if any, as a final line. */
  flush(): CleanText[] {
    if (this.partial === '') return [];
    const last = clean(collapseCarriageReturns(this.partial));
    this.partial = '';
    return [last];
  }
}

/**
 * For messages that quote what was typed (usage errors): every control, bidi, zero-width and BOM
 * character shown as a \u escape — nothing can drive the terminal or hide or reorder text, and the
 * value is still named exactly. Newlines and tabs stay; other text (…, —, accents) is untouched.
 */
export function escapeInvisible(text: string): CleanText {
  const escaped = text.replace(INVISIBLE, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
  return escaped as CleanText;
}

const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/gu;
