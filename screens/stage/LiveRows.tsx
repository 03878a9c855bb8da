/**
 * Rows whose text changes on every update (a pane's live output), drawn without Ink measuring their text.
 * Ink lays a Text out by measuring its string, and keeps every string it ever measured (a module-level cache
 * that is never emptied): a pane showing a stream grew the heap by about 20 KB a frame (a GB an hour) and
 * spent much of each frame measuring. Here Ink lays out a blank of the same size, measured once, and the
 * rows are written in its place as the frame is drawn (Transform). Each row must be exactly `width` columns
 * (live-rows.ts formats them).
 */
import React from 'react';
import { Transform } from 'ink';

const blanks = new Map<string, string>();

function blank(width: number, height: number): string {
  const key = `${width}x${height}`;
  let b = blanks.get(key);
  if (b === undefined) {
    b = Array.from({ length: height }, () => ' '.repeat(width)).join('\n');
    blanks.set(key, b);
  }
  return b;
}

export function LiveRows(props: { rows: readonly string[]; width: number; height: number }) {
  const { rows, width, height } = props;
  if (height <= 0 || width <= 0) return null;
  const empty = ' '.repeat(width);
  return <Transform transform={(_line, index) => rows[index] ?? empty}>{blank(width, height)}</Transform>;
}
