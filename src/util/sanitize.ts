/**
 * Remote output is untrusted: it must never drive the operator's terminal. We remove every C0/C1
 * control except tab and newline, every ESC sequence (CSI, OSC, DCS, APC, PM, SOS and two-byte
 * escapes), and Unicode bidi overrides/isolates, which can make text render in a misleading order.
 */

// ESC [ … final   |  ESC ] … (BEL | ESC \)   |  ESC P/X/^/_ … ESC \   |  ESC + one char
const ESCAPES = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[PX^_][^\u001b]*(?:\u001b\\)?|[@-Z\\-_]|.)?/gs;
// C1 CSI/OSC introducers used by some terminals as 8-bit controls.
const C1_SEQUENCES = /[\u009b][0-?]*[ -/]*[@-~]|[\u009d\u0090\u0098\u009e\u009f][^\u009c\u0007]*(?:\u009c|\u0007)?/g;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/** Removes control sequences; keeps text, tabs and newlines. `\r` is removed too (callers collapse it first). */
export function sanitize(text: string): string {
  return text.replace(ESCAPES, '').replace(C1_SEQUENCES, '').replace(CONTROLS, '').replace(BIDI, '');
}

/**
 * A carriage return inside a line is a progress redraw: keep what the terminal would finally show
 * (the text after the last `\r`, overlaid on what came before it).
 */
export function collapseCarriageReturns(line: string): string {
  if (!line.includes('\r')) return line;
  const parts = line.replace(/\r+$/, '').split('\r');
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

  push(chunk: string): string[] {
    const text = this.partial + chunk;
    const pieces = text.split('\n');
    this.partial = pieces.pop() ?? '';
    // A runaway line without newline must not grow without bound.
    if (this.partial.length > 64 * 1024) {
      pieces.push(this.partial);
      this.partial = '';
    }
    return pieces.map((l) => sanitize(collapseCarriageReturns(l)));
  }

  /** The held partial line, if any, as a final line. */
  flush(): string[] {
    if (this.partial === '') return [];
    const last = sanitize(collapseCarriageReturns(this.partial));
    this.partial = '';
    return [last];
  }
}
