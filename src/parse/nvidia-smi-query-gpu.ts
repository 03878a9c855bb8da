/**
 * `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`.
 *
 * Rows are `, `-separated. The header (when printed) names the fields, with units in brackets even
 * under `nounits` (`memory.total [MiB]`); without `nounits` values carry units (`46068 MiB`,
 * `78.39 W`, `0 %`). Unavailable values print `[N/A]`, `[Not Supported]`,
 * `[Requested functionality has been deprecated]` → null. Without a header the caller's field list
 * names the columns. Without one either, the rows are labelled only as one of the field lists this
 * program itself asks for (`known`), and only when the width and every cell's shape fit that list
 * (an index, a `GPU-…` uuid, a bus id, a driver version, numbers with their unit): a headerless CSV of
 * any other query is reported as such (`columnsUnknown`), never labelled by a guess. Error texts instead
 * of rows: `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`,
 * `Failed to initialize NVML: …`, `No devices were found`.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, normalizeBdf, toNum, validate } from './common.js';

/** The fields `inventory.gpus` queries, in order. */
export const INVENTORY_GPU_FIELDS = [
  'index',
  'name',
  'uuid',
  'pci.bus_id',
  'memory.total',
  'driver_version',
  'pcie.link.gen.current',
  'pcie.link.width.current',
] as const;

const Value = z.union([z.string(), z.number(), z.null()]);

export const QueryGpuSchema = z.object({
  index: z.number().int().optional(),
  name: z.string().optional(),
  uuid: z.string().optional(),
  /** As printed (`00000000:18:00.0`). */
  busId: z.string().optional(),
  /** `busId` in the kernel's form (`0000:18:00.0`). */
  bdf: z.string().optional(),
  memoryTotalMiB: z.number().optional(),
  driverVersion: z.string().optional(),
  pcieLinkGenCurrent: z.number().int().optional(),
  pcieLinkWidthCurrent: z.number().int().optional(),
  /** Every column of the row: numbers where numeric, null for `[N/A]`-style values. */
  values: z.record(z.string(), Value),
});
export type QueryGpu = z.infer<typeof QueryGpuSchema>;

export const NvidiaSmiQueryGpuFactsSchema = z.object({
  /** Field names without unit suffix, in column order (when known). */
  columns: z.array(z.string()),
  /** Unit per column from the header (`MiB`, `W`, `%`), when printed. */
  units: z.record(z.string(), z.string()).optional(),
  gpus: z.array(QueryGpuSchema),
  /** Rows keyed by column (docs/DOCTOR.md `nvidia-smi-csv` contract). */
  rows: z.array(z.record(z.string(), Value)),
  /** False for `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver`. */
  driverLoaded: z.boolean().optional(),
  /** NVML initialisation error text (e.g. `Driver/library version mismatch`). */
  nvmlError: z.string().optional(),
  noDevices: z.boolean().optional(),
  notInstalled: z.boolean().optional(),
  /** Rows had no header, no field list was given, and they fit none of the known queries: columns unknown. */
  columnsUnknown: z.boolean().optional(),
});
export type NvidiaSmiQueryGpuFacts = z.infer<typeof NvidiaSmiQueryGpuFactsSchema>;

// Columns whose values are identifiers even when they look numeric (`515.76`, `0x1e`).
const STRING_COLUMNS = new Set([
  'name',
  'gpu_name',
  'uuid',
  'gpu_uuid',
  'serial',
  'pci.bus_id',
  'gpu_bus_id',
  'pci.bus',
  'pci.domain',
  'pci.device',
  'pci.device_id',
  'pci.sub_device_id',
  'driver_version',
  'vbios_version',
  'inforom.img',
  'pstate',
  'timestamp',
  'compute_mode',
  'persistence_mode',
  'display_mode',
  'display_active',
  'mig.mode.current',
  'mig.mode.pending',
]);

const NA =
  /^\[(?:N\/A|Not Supported|Unknown Error|GPU is lost|Insufficient Permissions|Requested functionality has been deprecated|[^\]]*)\]$|^N\/A$/;
const HEADER_CELL = /^[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?$/;

function splitRow(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

function convert(column: string, raw: string): string | number | null {
  if (NA.test(raw)) return null;
  if (STRING_COLUMNS.has(column)) return raw;
  // `46068 MiB`, `78.39 W`, `100 %`, `345 MHz`: a number and a unit word.
  const m = /^([-+]?\d+(?:\.\d+)?)(?:\s*(?:%|[A-Za-z]+))?$/.exec(raw);
  if (m) {
    const n = toNum(m[1]);
    if (n !== undefined) return n;
  }
  return raw;
}

export interface QueryGpuOptions {
  /** Field list of the query, for output printed with `noheader`. */
  fields?: readonly string[];
  /** Field lists this program queries; headerless rows without `fields` may be one. Default: the inventory's. */
  known?: ReadonlyArray<readonly string[]>;
}

/** What one field's cell looks like (`[N/A]`-style values aside); a field without a shape cannot be recognised. */
const SHAPES: ReadonlyArray<[RegExp, RegExp]> = [
  [/^(?:index|pid|count)$|^pcie\.link\.(?:gen|width)\./, /^\d+$/],
  [/^(?:gpu_)?uuid$/, /^(?:GPU|MIG)-[0-9a-fA-F-]+$/],
  [/^(?:pci\.bus_id|gpu_bus_id)$/, /^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$/],
  [/^driver_version$/, /^\d+\.\d+(?:\.\d+)*$/],
  [/^pstate$/, /^P\d+$/],
  [/^clocks_(?:event|throttle)_reasons\.active$/, /^0x[0-9a-fA-F]+$/],
  [/^persistence_mode$/, /^(?:Enabled|Disabled)$/],
  [/^(?:name|gpu_name|process_name)$/, /^(?=.*[A-Za-z])(?!\d+(?:\.\d+)?\s*(?:%|[A-Za-z]+)$).+$/],
  [
    /^(?:memory|utilization|temperature|power|clocks|enforced\.power)\.|^(?:fan\.speed|used_memory|used_gpu_memory)$/,
    /^[-+]?\d+(?:\.\d+)?(?: ?(?:%|[A-Za-z]+))?$/,
  ],
];

function fitsField(field: string, cell: string): boolean {
  const shape = SHAPES.find(([name]) => name.test(field))?.[1];
  if (!shape) return false;
  return shape.test(cell) || (field !== 'index' && NA.test(cell));
}

/** The known field list that every row fits, width and shape, if exactly one does. */
function recognise(rows: readonly string[][], known: ReadonlyArray<readonly string[]>): readonly string[] | undefined {
  if (rows.length === 0) return undefined;
  // A last row with fewer cells was cut: its complete cells must fit, its final (partial) one is not judged.
  const fitsRow = (fields: readonly string[], cells: readonly string[], last: boolean): boolean =>
    cells.length === fields.length
      ? cells.every((c, i) => fitsField(fields[i] ?? '', c))
      : last && cells.length < fields.length && cells.slice(0, -1).every((c, i) => fitsField(fields[i] ?? '', c));
  const fits = known.filter((fields) => rows.every((cells, r) => fitsRow(fields, cells, r === rows.length - 1)));
  return fits.length === 1 ? fits[0] : undefined;
}

export function parseNvidiaSmiQueryGpu(text: string, options: QueryGpuOptions = {}): NvidiaSmiQueryGpuFacts {
  return guard(
    () => {
      const lines = cleanLines(text, { commands: ['nvidia-smi'] }).filter((l) => l.trim() !== '');
      const facts: NvidiaSmiQueryGpuFacts = { columns: [], gpus: [], rows: [] };
      const flags: Partial<NvidiaSmiQueryGpuFacts> = {};
      let columns: string[] | undefined = options.fields ? options.fields.map((f) => f.trim()) : undefined;
      const units: Record<string, string> = {};
      let dataRows: string[][] = [];
      let headerSeen = false;
      for (const line of lines) {
        const t = line.trim();
        if (/NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver/i.test(t)) {
          flags.driverLoaded = false;
          continue;
        }
        const nvml = /Failed to initialize NVML:\s*(.*)$/.exec(t);
        if (nvml) {
          flags.nvmlError = (nvml[1] ?? '').trim() || t;
          continue;
        }
        if (/^No devices were found/i.test(t)) {
          flags.noDevices = true;
          continue;
        }
        if (/nvidia-smi: (?:command )?not found|Command 'nvidia-smi' not found/.test(t)) {
          flags.notInstalled = true;
          continue;
        }
        if (!t.includes(',')) continue; // not CSV (junk, prompts)
        const cells = splitRow(t);
        if (!headerSeen && cells.every((c) => HEADER_CELL.test(c))) {
          headerSeen = true;
          // A header: fields and their units. It overrides a caller field list (the driver may
          // rename fields, e.g. clocks_throttle_reasons.* → clocks_event_reasons.*).
          columns = cells.map((c) => {
            const m = /^(\S+)(?: \[([^\]]+)\])?$/.exec(c);
            if (m?.[2] && m[1]) units[m[1]] = m[2];
            return m?.[1] ?? c;
          });
          continue;
        }
        dataRows.push(cells);
      }
      if (!columns) {
        const fields = recognise(dataRows, options.known ?? [INVENTORY_GPU_FIELDS]);
        if (fields) columns = [...fields];
        else if (dataRows.length > 0) flags.columnsUnknown = true;
      }
      const cols = columns ?? [];
      // Lines interleaved from other output can contain commas: a data row has exactly one cell per
      // column, except the last, which may have been cut short.
      if (cols.length > 0) {
        dataRows = dataRows.filter(
          (cells, r) => cells.length === cols.length || (r === dataRows.length - 1 && cells.length < cols.length),
        );
      }
      const lastRow = dataRows.length - 1;
      dataRows.forEach((cells, r) => {
        const values: Record<string, string | number | null> = {};
        // A last row with fewer cells than columns was cut: its final cell is partial.
        const usable = r === lastRow && cells.length < cols.length ? cells.length - 1 : cells.length;
        cols.forEach((c, i) => {
          if (i < usable && cells[i] !== undefined) values[c] = convert(c, cells[i] ?? '');
        });
        if (cols.length === 0) return;
        facts.rows.push(values);
        const s = (k: string): string | undefined =>
          typeof values[k] === 'string' ? (values[k] as string) : undefined;
        const n = (k: string): number | undefined =>
          typeof values[k] === 'number' ? (values[k] as number) : undefined;
        const busId = s('pci.bus_id') ?? s('gpu_bus_id');
        const index = n('index');
        facts.gpus.push(
          compact({
            index: index !== undefined && Number.isInteger(index) ? index : undefined,
            name: s('name') ?? s('gpu_name'),
            uuid: s('uuid') ?? s('gpu_uuid'),
            busId,
            bdf: normalizeBdf(busId),
            memoryTotalMiB: n('memory.total'),
            driverVersion: s('driver_version'),
            pcieLinkGenCurrent: n('pcie.link.gen.current'),
            pcieLinkWidthCurrent: n('pcie.link.width.current'),
            values,
          }),
        );
      });
      return validate(
        NvidiaSmiQueryGpuFactsSchema,
        compact({
          ...facts,
          columns: cols,
          units: Object.keys(units).length > 0 ? units : undefined,
          ...flags,
        }),
      );
    },
    () => ({ columns: [], gpus: [], rows: [] }),
  );
}
