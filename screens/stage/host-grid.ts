/**
 * The stage view's host grid (more than two hosts) as pure functions: how wide a cell is, how many
 * fit a row, how many rows the grid may take from the panes, which rows show around the cursor and
 * what each cell and the header say. The view maps these to <Text>, so "never wider or taller than
 * the terminal" is decided and tested here.
 */
import type { HostEntry } from '../../src/engine/host-status.js';
import { entryRank } from '../../src/engine/host-status.js';
import type { StageStatus } from '../../src/engine/types.js';
import { fit, STATUS_COLOR, STATUS_GLYPH } from '../format.js';

/** Longer names are cut: sixteen columns tell hosts apart, and more cells fit a row. */
export const GRID_NAME_MAX = 16;
/** The panes are what the stage view is for: the grid never leaves them fewer rows than this. */
export const MIN_PANE_HEIGHT = 12;

export interface GridCell {
  index: number;
  /** The cell less the one column between cells: glyph, name, pane mark. */
  text: string;
  color: string | undefined;
  cursor: boolean;
}

export function gridNameWidth(hostOrder: readonly string[]): number {
  return Math.max(1, Math.min(GRID_NAME_MAX, Math.max(0, ...hostOrder.map((h) => Array.from(h).length))));
}

/** glyph, space, name, pane mark (◧ left, ◨ right), then one column between cells. */
export function gridCellWidth(hostOrder: readonly string[]): number {
  return gridNameWidth(hostOrder) + 4;
}

export function gridPerRow(width: number, hostOrder: readonly string[]): number {
  return Math.max(1, Math.floor(width / gridCellWidth(hostOrder)));
}

/**
 * The stage view's vertical split with more than two hosts: the grid's header and rows, then the
 * panes. The grid takes at most one row in eight of the body (4 rows at 40 lines, 5 at 48) and
 * never takes the panes under MIN_PANE_HEIGHT; what does not fit scrolls with the cursor.
 */
export function stageLayout(o: { height: number; hostCount: number; perRow: number; fixedRows: number }): {
  gridRows: number;
  paneHeight: number;
} {
  const grid = o.hostCount > 2;
  const needed = grid ? Math.ceil(o.hostCount / Math.max(1, o.perRow)) : 0;
  const room = o.height - o.fixedRows - 1 - MIN_PANE_HEIGHT; // 1: the grid's header
  const gridRows = grid ? Math.max(1, Math.min(needed, Math.floor(o.height / 8), room)) : 0;
  const paneHeight = Math.max(8, o.height - o.fixedRows - (grid ? 1 + gridRows : 0));
  return { gridRows, paneHeight };
}

const GLYPH_TROUBLE = '⊘';

export function entryGlyph(e: Pick<HostEntry, 'status' | 'trouble'>): { glyph: string; color: string | undefined } {
  return e.trouble
    ? { glyph: GLYPH_TROUBLE, color: 'red' }
    : { glyph: STATUS_GLYPH[e.status], color: STATUS_COLOR[e.status] };
}

export interface GridView {
  rows: GridCell[][];
  /** Hosts on rows above and below the window. */
  above: number;
  below: number;
}

/**
 * The rows shown: the first `maxRows`, or, once the cursor goes lower, the window whose last row
 * holds the cursor. `entries` are in the grid's order (worst first); `cursor`, `left` and `right`
 * are hostOrder indexes.
 */
export function gridView(
  entries: readonly HostEntry[],
  o: { cursor: number; left: number; right: number; perRow: number; maxRows: number; nameWidth: number },
): GridView {
  const perRow = Math.max(1, o.perRow);
  const total = Math.ceil(entries.length / perRow);
  const at = Math.max(
    0,
    entries.findIndex((e) => e.index === o.cursor),
  );
  const cursorRow = Math.floor(at / perRow);
  const top = Math.max(0, Math.min(total - o.maxRows, cursorRow - o.maxRows + 1));
  const rows: GridCell[][] = [];
  for (let r = top; r < Math.min(total, top + o.maxRows); r++) {
    rows.push(
      entries.slice(r * perRow, (r + 1) * perRow).map((e) => {
        const { glyph, color } = entryGlyph(e);
        const side = e.index === o.left ? '◧' : e.index === o.right ? '◨' : ' ';
        return {
          index: e.index,
          text: `${glyph} ${fit(e.host, o.nameWidth)}${side}`,
          color,
          cursor: e.index === o.cursor,
        };
      }),
    );
  }
  const shown = rows.reduce((n, r) => n + r.length, 0);
  const above = top * perRow;
  return { rows, above, below: entries.length - above - shown };
}

const WORD: Record<StageStatus, string> = {
  error: 'error',
  fail: 'fail',
  warn: 'warn',
  running: 'running',
  pending: 'not run',
  skip: 'skipped',
  pass: 'pass',
};

/** "64 hosts: 1 ⊘ unreachable · 2 ✘ fail · 61 ✔ pass", worst first, as the cells are ordered. */
export function gridCounts(entries: readonly HostEntry[]): string {
  const counts = new Map<string, { rank: number; n: number }>();
  for (const e of entries) {
    const { glyph } = entryGlyph(e);
    const label = e.trouble ? `${glyph} unreachable` : `${glyph} ${WORD[e.status]}`;
    const c = counts.get(label);
    if (c) c.n++;
    else counts.set(label, { rank: entryRank(e), n: 1 });
  }
  const parts = [...counts].sort((a, b) => a[1].rank - b[1].rank).map(([label, c]) => `${c.n} ${label}`);
  return `${entries.length} hosts: ${parts.join(' · ')}`;
}

/** The line over the grid: counts, what scrolled out of view, and the grid's keys (they are not in the footer, which is full). */
export function gridHeader(
  entries: readonly HostEntry[],
  view: Pick<GridView, 'above' | 'below'>,
  width: number,
  keys: string,
): string {
  const more = [view.above > 0 ? `↑ ${view.above} more` : '', view.below > 0 ? `+${view.below} more ↓` : '']
    .filter(Boolean)
    .join(' ');
  return fit(`${gridCounts(entries)}${more ? `   ${more}` : ''}   ${keys}`, width);
}
