/**
 * `nvidia-smi dmon` and `nvidia-smi pmon`: two `#` header lines (names, then units), then whitespace-separated
 * rows; `-` marks an unsupported cell. Columns grow with the driver (`jpg`, `ofa` from 570) and with `-s`/`-o`
 * (`#Date Time gpu …`), so they are read from the header. The header repeats every screenful; pmon's last
 * column (`command`) may hold a name with spaces. `--format csv` (driver 580) separates the same header lines
 * and rows with `, ` instead (`#gpu, pwr, …`, `#Idx, W, …`, ` 0, 82, 36`). Values are numbers where numeric,
 * null for `-`.
 */
import { z } from 'zod';
import { compact, guard, toNum, validate } from './common.js';
import { logLines } from './log-lines.js';

const Value = z.union([z.string(), z.number(), z.null()]);

export const NvidiaSmiDmonFactsSchema = z.object({
  mode: z.enum(['dmon', 'pmon']).optional(),
  columns: z.array(z.string()),
  /** Unit per column from the second header line (`W`, `C`, `%`, `MHz`). */
  units: z.record(z.string(), z.string()).optional(),
  rows: z.array(z.record(z.string(), Value)),
  /** GPU indices seen. */
  gpus: z.array(z.number().int()),
});
export type NvidiaSmiDmonFacts = z.infer<typeof NvidiaSmiDmonFactsSchema>;

const STRING_COLS = new Set(['command', 'type', 'Date', 'Time', 'date', 'time']);

export function parseNvidiaSmiDmon(text: string): NvidiaSmiDmonFacts {
  return guard(
    () => {
      const facts: NvidiaSmiDmonFacts = { columns: [], rows: [], gpus: [] };
      const units: Record<string, string> = {};
      let expectUnits = false;
      const gpus = new Set<number>();
      let csv = false;
      const split = (s: string): string[] => s.split(csv ? /\s*,\s*/ : /\s+/).filter((c) => c !== '');
      for (const line of logLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        if (t.startsWith('#')) {
          const head = t.replace(/^#\s*/, '');
          if (/^(?:Date\s*,\s*Time\s*,\s*)?gpu\s*,/.test(head)) csv = true;
          else if (/^(?:Date\s+Time\s+)?gpu\s/.test(head)) csv = false;
          const cells = split(head);
          if (cells.length === 0) continue;
          if (cells.includes('gpu')) {
            facts.columns = cells;
            facts.mode = cells.includes('pid') ? 'pmon' : 'dmon';
            expectUnits = true;
            continue;
          }
          if (expectUnits && cells.length === facts.columns.length) {
            facts.columns.forEach((c, k) => {
              const u = cells[k];
              if (u && u !== '#' && u !== 'Idx') units[c] = u;
            });
          }
          expectUnits = false;
          continue;
        }
        if (facts.columns.length === 0) continue;
        const cols = facts.columns;
        let cells = split(t);
        if (cells.length > cols.length && cols[cols.length - 1] === 'command') {
          cells = [...cells.slice(0, cols.length - 1), cells.slice(cols.length - 1).join(csv ? ', ' : ' ')];
        }
        // A cut last row has fewer cells: keep the complete ones, drop the (possibly partial) last.
        if (cells.length !== cols.length) {
          if (cells.length < cols.length && cells.length > 1 && /^\d+$/.test(cells[cols.indexOf('gpu')] ?? ''))
            cells = cells.slice(0, -1);
          else continue;
        }
        const row: Record<string, string | number | null> = {};
        cells.forEach((c, k) => {
          const name = cols[k] ?? `col${k}`;
          if (c === '-') row[name] = null;
          else if (STRING_COLS.has(name)) row[name] = c;
          else row[name] = toNum(c) ?? c;
        });
        const g = row.gpu;
        if (typeof g !== 'number') continue;
        gpus.add(g);
        facts.rows.push(row);
      }
      facts.gpus = [...gpus].sort((a, b) => a - b);
      return validate(
        NvidiaSmiDmonFactsSchema,
        compact({ ...facts, units: Object.keys(units).length > 0 ? units : undefined }),
      );
    },
    () => ({ columns: [], rows: [], gpus: [] }),
  );
}
