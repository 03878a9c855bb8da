/** Pure row formatting for the views: trivial to unit-test, no React. */
import type { CheckStatus, StageStatus } from '../src/engine/types.js';

export const STATUS_GLYPH: Record<StageStatus, string> = {
  pending: '·',
  running: '…',
  pass: '✔',
  warn: '!',
  fail: '✘',
  error: '?', // cannot tell: distinct from a failure even without colour
  skip: '-',
};

export const STATUS_COLOR: Record<StageStatus, string | undefined> = {
  pending: 'gray',
  running: 'cyan',
  pass: 'green',
  warn: 'yellow',
  fail: 'red',
  error: 'magenta',
  skip: 'gray',
};

export function statusWord(s: StageStatus | CheckStatus): string {
  return s === 'pending' ? 'pending' : s;
}

/** Fits text to exactly `width` columns (cut with an ellipsis, or padded). */
export function fit(text: string, width: number): string {
  if (width <= 0) return '';
  const chars = Array.from(text);
  if (chars.length <= width) return text + ' '.repeat(width - chars.length);
  return `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

export function formatExit(exitCode: number | null | undefined, timedOut?: boolean, cancelled?: boolean): string {
  if (timedOut) return 'timed out';
  if (cancelled) return 'cancelled';
  if (exitCode === undefined) return '';
  return exitCode === null ? 'no exit code' : `exit ${exitCode}`;
}
