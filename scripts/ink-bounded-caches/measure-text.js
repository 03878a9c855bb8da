/**
 * Replaces ink/build/measure-text.js in the bundle (scripts/bundle.mjs): the same measurement, with the cache
 * bounded (bounded-map.js says why). Ink's own module is the reference: test/build/ink-bounded-caches.test.ts
 * compares the two.
 */
import widestLine from 'widest-line';
import { BoundedMap, CACHE_ENTRIES } from './bounded-map.js';

export const cache = new BoundedMap(CACHE_ENTRIES);

const measureText = (text) => {
  if (text.length === 0) return { width: 0, height: 0 };
  const cached = cache.get(text);
  if (cached) return cached;
  const dimensions = { width: widestLine(text), height: text.split('\n').length };
  cache.set(text, dimensions);
  return dimensions;
};

export default measureText;
