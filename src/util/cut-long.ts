/**
 * Output bounds for doctor and lint: a value they echo from the input (evidence, a fact, a summary cell) can
 * be one line of 200 MB. Each line longer than MAX_LINE_CHARS is cut there and says how long it was.
 */
export const MAX_LINE_CHARS = 1000;
/** Lines kept of one value; the rest is counted. */
export const MAX_VALUE_LINES = 200;

export function cutLong(text: string, maxLine = MAX_LINE_CHARS, maxLines = MAX_VALUE_LINES): string {
  if (text.length <= maxLine && !text.includes('\n')) return text;
  const out: string[] = [];
  let start = 0;
  let lines = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    if (lines === maxLines) {
      const rest = text.slice(start).split('\n').length;
      out.push(`… (${rest} more lines)`);
      break;
    }
    const len = end - start;
    out.push(len > maxLine ? `${text.slice(start, start + maxLine)}… (${len} characters)` : text.slice(start, end));
    lines++;
    if (nl === -1) break;
    start = nl + 1;
  }
  return out.join('\n');
}

/** cutLong over every string of a JSON-like value (parsers' facts), to a bounded depth, never recursing further. */
export function cutLongDeep<T>(value: T, depth = 16): T {
  if (typeof value === 'string') return cutLong(value) as T;
  if (depth <= 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => cutLongDeep(v, depth - 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[cutLong(k)] = cutLongDeep(v, depth - 1);
  return out as T;
}
