/**
 * A Map that keeps at most `limit` entries, dropping the least recently used: Ink's text caches, bounded.
 * Ink 6.8 keeps every string it measures or wraps for layout in module-level caches that are never emptied
 * (upstream: vadimdemedes/ink#986), so a screen whose text changes every second (the live monitor) grew the
 * heap by about 7 KB a frame, over 600 MB a day. Recomputing an evicted entry costs one measure.
 */
export class BoundedMap {
  /** @param {number} limit */
  constructor(limit) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`BoundedMap limit must be a positive integer, got ${limit}`);
    this.limit = limit;
    /** @type {Map<string, unknown>} */
    this.map = new Map();
  }

  get size() {
    return this.map.size;
  }

  /** The value, marked as just used; undefined when absent. */
  get(key) {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key, value) {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value);
  }
}

/** Entries per cache: a frame of 64 hosts lays out a few hundred distinct strings; room for several frames. */
export const CACHE_ENTRIES = 4096;
