/**
 * `nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]` and `--query-compute-apps=…` (same CSV rules).
 *
 * Built on `parseNvidiaSmiQueryGpu` (units, `[N/A]` → null, error texts). Columns that are identifiers even
 * when they look numeric (`gpu_serial`, `serial`, `process_name`, `timestamp`) keep their text. Without a header,
 * and unless the rows fit one of the field lists the caller knows it asked for, the columns are unknown: `rows`
 * stays empty, `values[]` holds the raw cells and `note` says so.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, validate } from './common.js';
import { parseNvidiaSmiQueryGpu, type QueryGpuOptions } from './nvidia-smi-query-gpu.js';

const Value = z.union([z.string(), z.number(), z.null()]);

export const NvidiaSmiCsvFactsSchema = z.object({
  /** `gpu` for `--query-gpu`, `compute-apps` for `--query-compute-apps` (by its columns). */
  query: z.enum(['gpu', 'compute-apps']).optional(),
  columns: z.array(z.string()),
  units: z.record(z.string(), z.string()).optional(),
  rows: z.array(z.record(z.string(), Value)),
  /** Rows without a header: cells converted, names unknown. */
  values: z.array(z.array(Value)).optional(),
  driverLoaded: z.boolean().optional(),
  nvmlError: z.string().optional(),
  noDevices: z.boolean().optional(),
  notInstalled: z.boolean().optional(),
  columnsUnknown: z.boolean().optional(),
  /** Set with `columnsUnknown`: what a reader is told instead of column names. */
  note: z.string().optional(),
});
export type NvidiaSmiCsvFacts = z.infer<typeof NvidiaSmiCsvFactsSchema>;

const ID_COLUMNS = new Set([
  'gpu_serial',
  'serial',
  'process_name',
  'timestamp',
  'name',
  'gpu_name',
  'vbios_version',
  'driver_version',
  'pci.bus_id',
  'gpu_bus_id',
  'uuid',
  'gpu_uuid',
]);
const APPS_COLUMNS = /^(?:pid|process_name|used_gpu_memory|used_memory)$/;
const NA = /^\[[^\]]*\]$|^N\/A$/;

export const HEADERLESS_UNKNOWN = 'headerless CSV: cannot tell which columns';

export function parseNvidiaSmiCsv(text: string, options: QueryGpuOptions = {}): NvidiaSmiCsvFacts {
  return guard(
    () => {
      const base = parseNvidiaSmiQueryGpu(text, options);
      const facts: NvidiaSmiCsvFacts = compact({
        columns: base.columns,
        units: base.units,
        rows: base.rows.map((r) => ({ ...r })),
        driverLoaded: base.driverLoaded,
        nvmlError: base.nvmlError,
        noDevices: base.noDevices,
        notInstalled: base.notInstalled,
        columnsUnknown: base.columnsUnknown,
        note: base.columnsUnknown ? HEADERLESS_UNKNOWN : undefined,
      });
      const cols = facts.columns;
      if (cols.some((c) => APPS_COLUMNS.test(c))) facts.query = 'compute-apps';
      else if (cols.length > 0) facts.query = 'gpu';
      // Data lines in the order the base parser kept them (same filter: one cell per column, last may be cut).
      const data = cleanLines(text, { commands: ['nvidia-smi'] })
        .map((l) => l.trim())
        .filter(
          (l) =>
            l.includes(',') &&
            !/^[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?(?:\s*,\s*[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?)+$/.test(l),
        )
        .map((l) => l.split(',').map((c) => c.trim()));
      if (cols.length > 0) {
        const kept = data.filter(
          (cells, r) => cells.length === cols.length || (r === data.length - 1 && cells.length < cols.length),
        );
        if (kept.length === facts.rows.length) {
          kept.forEach((cells, r) => {
            const row = facts.rows[r];
            if (!row) return;
            cols.forEach((c, k) => {
              const raw = cells[k];
              if (ID_COLUMNS.has(c) && typeof row[c] === 'number' && raw !== undefined && !NA.test(raw)) row[c] = raw;
            });
          });
        }
      } else if (data.length > 0) {
        facts.values = data.map((cells) =>
          cells.map((c) => {
            if (NA.test(c)) return null;
            const m = /^([-+]?\d+(?:\.\d+)?)(?:\s*(?:%|[A-Za-z]+))?$/.exec(c);
            return m && !/^0\d/.test(c) ? Number(m[1]) : c;
          }),
        );
      }
      return validate(NvidiaSmiCsvFactsSchema, compact(facts));
    },
    () => ({ columns: [], rows: [] }),
  );
}
