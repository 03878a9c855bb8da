/** Unified diffs of files a step writes, as `plan` shows them (`--- PATH` / `+++ PATH`, 3 lines of context). */
import { createTwoFilesPatch } from 'diff';

/** `before` undefined: the file does not exist yet; `after` undefined: the step removes it. */
export function fileDiff(path: string, before: string | undefined, after: string | undefined): string {
  const patch = createTwoFilesPatch(
    before === undefined ? '/dev/null' : path,
    after === undefined ? '/dev/null' : path,
    before ?? '',
    after ?? '',
    '',
    '',
    { context: 3 },
  );
  // jsdiff starts with a line of '=' and writes tab-separated empty timestamps: drop both.
  return patch
    .split('\n')
    .filter((l, i) => !(i === 0 && /^=+$/.test(l)))
    .map((l) => (l.startsWith('--- ') || l.startsWith('+++ ') ? l.replace(/\t$/, '') : l))
    .join('\n');
}
