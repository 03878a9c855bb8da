/**
 * Deterministic randomness for the lab. Every value that would differ between real machines
 * (MACs, GUIDs, UUIDs, serials, timings) comes from a stream keyed by (seed, host, subsystem), so
 * the same seed reproduces byte-identical output and adding a new subsystem never shifts the
 * values of existing ones.
 */
import { createHash } from 'node:crypto';

export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** `n` random bytes. */
  bytes(n: number): number[];
  /** `n` lowercase hex digits. */
  hex(n: number): string;
  /** A decimal string of `n` digits (leading digit non-zero). */
  digits(n: number): string;
}

/** sfc32: small, fast, and good enough statistically; seeded from a SHA-256 of the key parts. */
export function rng(...key: Array<string | number>): Rng {
  const h = createHash('sha256').update(key.map(String).join('\u0000')).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const next32 = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return t >>> 0;
  };
  // Warm up so that similar keys diverge immediately.
  for (let i = 0; i < 12; i++) next32();
  const next = (): number => next32() / 4294967296;
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    bytes: (n) => Array.from({ length: n }, () => next32() & 0xff),
    hex: (n) => Array.from({ length: n }, () => (next32() & 0xf).toString(16)).join(''),
    digits: (n) => Array.from({ length: n }, (_, i) => String(i === 0 ? 1 + (next32() % 9) : next32() % 10)).join(''),
  };
}

export function macToString(bytes: readonly number[]): string {
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');
}
