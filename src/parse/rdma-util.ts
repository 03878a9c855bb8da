/**
 * Small helpers shared by the RDMA / NIC / host-software parsers and their doctor kinds: line access that
 * keeps the input's line numbers, IB rate strings, the RoCE GID ↔ IPv4 mapping, and linear-time counting
 * for detectors. Everything here is total (never throws) and linear in the input.
 */
import { sanitize } from '../util/sanitize.js';
import { cleanText, isEditorMarker, toNum, type CleanOptions } from './common.js';

/**
 * The text's lines with their numbering kept (1-based index = array index + 1): CRLF handled, control
 * sequences removed, trailing whitespace trimmed, editor markers blanked (not removed, so numbers hold).
 */
export function textLines(text: string): string[] {
  if (typeof text !== 'string' || text === '') return [];
  return text.split('\n').map((raw) => {
    const l = sanitize(raw.replace(/\r+$/, '')).trimEnd();
    return isEditorMarker(l) ? '' : l;
  });
}

/**
 * `cleanLines` with a linear trailing-whitespace trim: cleaned text (common.ts `cleanText`) split into lines,
 * each `trimEnd()`-ed. (A `/\s+$/` replace is quadratic on a long run of spaces not at the end.)
 */
export function rdmaLines(text: unknown, options: CleanOptions = {}): string[] {
  return cleanText(text, options)
    .split('\n')
    .map((l) => l.trimEnd());
}

/** Index of the first line at or after `from` that satisfies `pred`, or -1. */
export function findLine(lines: readonly string[], pred: (l: string) => boolean, from = 0, to = lines.length): number {
  for (let i = Math.max(0, from); i < Math.min(to, lines.length); i++) if (pred(lines[i] ?? '')) return i;
  return -1;
}

/** Counts matches of a global regex, stopping at `cap` (detectors must stay cheap on huge inputs). */
export function countMatches(text: string, re: RegExp, cap = 1000): number {
  const g = re.global ? re : new RegExp(re.source, re.flags + 'g');
  g.lastIndex = 0;
  let n = 0;
  let m: RegExpExecArray | null;
  while ((m = g.exec(text)) !== null) {
    n++;
    if (n >= cap) break;
    if (m[0] === '') g.lastIndex++;
  }
  g.lastIndex = 0;
  return n;
}

/** Index of the first match of `re` in `text`, or -1. */
export function firstMatch(text: string, re: RegExp): number {
  const r = new RegExp(re.source, re.flags.replace('g', ''));
  const m = r.exec(text);
  return m ? m.index : -1;
}

/**
 * A detector's confidence from its structural strength, lowered slightly the later the structure starts in
 * the text, so that in a file holding several outputs the first one wins among equals.
 */
export function scoreAt(strength: number, index: number, length: number): number {
  if (!(strength > 0) || index < 0) return 0;
  const rel = length > 0 ? Math.min(1, index / length) : 0;
  return Math.max(0, Math.min(1, strength - 0.04 * rel));
}

/** `200 Gb/sec (4X HDR)`, `400`, `2.5`, `56 (FDR10)` → Gb/s. */
export function parseRateGbps(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)/.exec(s);
  return m ? toNum(m[1]) : undefined;
}

/** The IPv4 address an IPv4-mapped GID carries (`0000:…:ffff:c0a8:0684`, `::ffff:192.168.6.132`). */
export function gidIpv4(gid: string | undefined): string | undefined {
  if (!gid) return undefined;
  const g = gid.trim().toLowerCase();
  const dotted =
    /^(?:0{1,4}:){0,5}:?:?ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(g) ??
    /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(g);
  if (dotted) return dotted[1];
  const full =
    /^0{1,4}:0{1,4}:0{1,4}:0{1,4}:0{1,4}:ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(g) ??
    /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(g);
  if (!full || full[1] === undefined || full[2] === undefined) return undefined;
  const hi = parseInt(full[1], 16);
  const lo = parseInt(full[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** perftest prints GIDs as 16 decimal bytes `00:…:255:255:192:168:100:15`; the IPv4 of a mapped one. */
export function perftestGidIpv4(gid: string | undefined): string | undefined {
  if (!gid) return undefined;
  const parts = gid.trim().split(':');
  if (parts.length !== 16 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const b = parts.map(Number);
  if (b.slice(0, 10).some((x) => x !== 0) || b[10] !== 255 || b[11] !== 255) return undefined;
  return b.slice(12).join('.');
}

/** A `0x…` or decimal integer. */
export function toIntAny(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = s.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) {
    const n = parseInt(t, 16);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  if (/^-?\d+$/.test(t)) {
    const n = Number(t);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}
