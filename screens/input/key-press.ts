/**
 * Keys as the bindings see them. Ink hands over one chunk per read: a single key with its flags, or —
 * when keys come faster than it reads them, or text is pasted — several characters at once ("jjj⏎",
 * "\x7f\x7f\x7f", "10.0.0.1"), with no flags. A chunk is split here into one press per key, Enter,
 * Tab, Backspace (both the DEL and the ^H form) and Ctrl-letters included.
 */
import type { Key } from 'ink';

export type KeyName =
  | 'up'
  | 'down'
  | 'left'
  | 'right'
  | 'pageup'
  | 'pagedown'
  | 'home'
  | 'end'
  | 'return'
  | 'escape'
  | 'tab'
  | 'backspace'
  | 'delete';

export interface KeyPress {
  /** A named key; undefined for a character. */
  name?: KeyName;
  /** The character typed ('' for a named key; the letter for a Ctrl-letter). */
  text: string;
  ctrl: boolean;
  meta: boolean;
  shift: boolean;
}

/**
 * What a binding's `keys` name: a named key ('up', 'enter', 'escape', 'shift+tab', 'backspace' — which
 * takes Delete too), 'ctrl+c', a character ('q', '?', '['), 'text' (any printable character) or 'any'.
 */
export type KeySpec = string;

const PLAIN = { ctrl: false, meta: false, shift: false };

function nameOf(key: Key): KeyName | undefined {
  if (key.upArrow) return 'up';
  if (key.downArrow) return 'down';
  if (key.leftArrow) return 'left';
  if (key.rightArrow) return 'right';
  if (key.pageUp) return 'pageup';
  if (key.pageDown) return 'pagedown';
  if (key.home) return 'home';
  if (key.end) return 'end';
  if (key.return) return 'return';
  if (key.escape) return 'escape';
  if (key.tab) return 'tab';
  if (key.backspace) return 'backspace';
  if (key.delete) return 'delete';
  return undefined;
}

/** One character of a chunk Ink did not take apart. */
function pressOfChar(ch: string): KeyPress {
  if (ch === '\r' || ch === '\n') return { name: 'return', text: '', ...PLAIN };
  if (ch === '\t') return { name: 'tab', text: '', ...PLAIN };
  // Terminals send DEL for Backspace (Ink names a lone one "delete"); ^H is the other form.
  if (ch === '\u007f' || ch === '\b') return { name: 'backspace', text: '', ...PLAIN };
  const code = ch.codePointAt(0) ?? 0;
  if (code >= 1 && code <= 26) return { text: String.fromCharCode(code + 96), ...PLAIN, ctrl: true };
  return { text: ch, ...PLAIN, shift: ch !== ch.toLowerCase() };
}

/** The presses of one chunk, in order. */
export function pressesOf(input: string, key: Key): KeyPress[] {
  const name = nameOf(key);
  if (Array.from(input).length > 1 && !name && !key.ctrl && !key.meta) return Array.from(input, pressOfChar);
  // A lone DEL: Ink says "delete", the terminal meant Backspace (forward Delete comes as ESC [3~, also "delete").
  if (name) return [{ name, text: '', ctrl: key.ctrl, meta: key.meta && name !== 'escape', shift: key.shift }];
  return [{ text: input, ctrl: key.ctrl, meta: key.meta, shift: key.shift }];
}

function isPrintable(p: KeyPress): boolean {
  return p.name === undefined && !p.ctrl && !p.meta && p.text !== '' && !/[\u0000-\u001f\u007f]/.test(p.text);
}

export function matchesKey(spec: KeySpec, p: KeyPress): boolean {
  switch (spec) {
    case 'any':
      return true;
    case 'text':
      return isPrintable(p);
    case 'enter':
      return p.name === 'return';
    case 'tab':
      return p.name === 'tab' && !p.shift;
    case 'shift+tab':
      return p.name === 'tab' && p.shift;
    case 'backspace':
      return p.name === 'backspace' || p.name === 'delete';
    case 'up':
    case 'down':
    case 'left':
    case 'right':
    case 'pageup':
    case 'pagedown':
    case 'escape':
      return p.name === spec;
    case 'ctrl+c':
      return p.ctrl && p.text === 'c';
    default:
      return p.name === undefined && !p.ctrl && !p.meta && p.text === spec;
  }
}
