/**
 * Replaces ink/build/wrap-text.js in the bundle (scripts/bundle.mjs): the same wrapping and truncation, with
 * the cache bounded (bounded-map.js says why) and keyed without ambiguity (Ink joins text, width and mode
 * with nothing between them).
 */
import wrapAnsi from 'wrap-ansi';
import cliTruncate from 'cli-truncate';
import { BoundedMap, CACHE_ENTRIES } from './bounded-map.js';

export const cache = new BoundedMap(CACHE_ENTRIES);

const wrapText = (text, maxWidth, wrapType) => {
  const key = `${maxWidth}\u0000${wrapType}\u0000${text}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  let wrapped = text;
  if (wrapType === 'wrap') {
    wrapped = wrapAnsi(text, maxWidth, { trim: false, hard: true });
  }
  if (wrapType.startsWith('truncate')) {
    const position = wrapType === 'truncate-middle' ? 'middle' : wrapType === 'truncate-start' ? 'start' : 'end';
    wrapped = cliTruncate(text, maxWidth, { position });
  }
  cache.set(key, wrapped);
  return wrapped;
};

export default wrapText;
