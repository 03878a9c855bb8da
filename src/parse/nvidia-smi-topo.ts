/**
 * `nvidia-smi topo -m` / `-mp`: a header row of device columns (`GPU0 … NIC0 …`, or `mlx5_N` in old
 * drivers) followed by `CPU Affinity`, `NUMA Affinity` and (newer drivers) `GPU NUMA ID`; one row per
 * device with a connection code per column (`X`, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`, `NV#`); GPU
 * rows end with their affinity cells, NIC rows have none. Then `Legend:` and `NIC Legend:`
 * (`NIC0: mlx5_0`).
 *
 * Cells are TAB-separated (`X` printed as ` X `, an empty cell before `GPU NUMA ID`), but pasted
 * copies turn tabs into spaces and wide tables misalign, so rows are split on whitespace: device
 * names and codes never contain spaces, and affinity values fill the remaining cells in order.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, toInt, validate } from './common.js';

export const TopoAffinitySchema = z.object({
  cpuAffinity: z.string().optional(),
  /** As printed: `0`, `0-1`, `N/A`. */
  numaAffinity: z.string().optional(),
  /** `numaAffinity` when it is a single node. */
  numaNode: z.number().int().optional(),
  /** `GPU NUMA ID` when numeric (N/A on most GPUs). */
  gpuNumaId: z.number().int().optional(),
});
export type TopoAffinity = z.infer<typeof TopoAffinitySchema>;

export const NvidiaSmiTopoFactsSchema = z.object({
  /** Column order of the matrix. */
  devices: z.array(z.string()),
  gpus: z.array(z.string()),
  nics: z.array(z.string()),
  /** matrix[row][column] = code, for the cells present. */
  matrix: z.record(z.string(), z.record(z.string(), z.string())),
  /** Same object as `matrix`, under docs/DOCTOR.md's contract name. */
  links: z.record(z.string(), z.record(z.string(), z.string())),
  affinity: z.record(z.string(), TopoAffinitySchema),
  /** `NIC Legend:` entries: `{ NIC0: 'mlx5_0' }`. */
  nicLegend: z.record(z.string(), z.string()),
  /** Same object as `nicLegend`, under docs/DOCTOR.md's contract name. */
  nicNames: z.record(z.string(), z.string()),
  /** Codes explained in `Legend:` (`-mp` has no `NV#`). */
  legendCodes: z.array(z.string()).optional(),
  error: z.string().optional(),
});
export type NvidiaSmiTopoFacts = z.infer<typeof NvidiaSmiTopoFactsSchema>;

// Codes nvidia-smi prints (and older drivers' SOC/PSB). A cell is accepted only if it is one of
// these or a code the output's own Legend explains: a row cut mid-cell leaves a fragment (`SY`).
const KNOWN_CODE = /^(?:X|SYS|NODE|PHB|PXB|PIX|PSB|SOC|NV\d+|C2C)$/;
const AFFINITY_LABELS = ['CPU Affinity', 'NUMA Affinity', 'GPU NUMA ID'] as const;

/** Splits a header row into device columns and the affinity labels after them. */
function parseHeader(line: string): { devices: string[]; labels: string[] } | undefined {
  const tokens = line.trim().split(/\s+/);
  const devices: string[] = [];
  const labels: string[] = [];
  let i = 0;
  while (i < tokens.length) {
    const rest = tokens.slice(i).join(' ');
    const label = AFFINITY_LABELS.find((l) => rest === l || rest.startsWith(`${l} `));
    if (label) {
      labels.push(label);
      i += label.split(' ').length;
      continue;
    }
    if (labels.length > 0) break; // junk after the labels
    devices.push(tokens[i] ?? '');
    i++;
  }
  // A matrix row (`GPU0  X  NV18 …`) is not a header: headers hold no connection codes.
  if (!devices.some((d) => /^GPU\d+$/.test(d)) || devices.some((d) => KNOWN_CODE.test(d))) return undefined;
  return { devices, labels };
}

export function parseNvidiaSmiTopo(text: string): NvidiaSmiTopoFacts {
  const empty = (error?: string): NvidiaSmiTopoFacts =>
    compact({
      devices: [],
      gpus: [],
      nics: [],
      matrix: {},
      links: {},
      affinity: {},
      nicLegend: {},
      nicNames: {},
      error,
    });
  return guard(
    () => {
      const lines = cleanLines(text, { commands: ['nvidia-smi'] });
      let header: { devices: string[]; labels: string[] } | undefined;
      const matrix: Record<string, Record<string, string>> = {};
      const affinity: Record<string, TopoAffinity> = {};
      const nicLegend: Record<string, string> = {};
      const legendCodes: string[] = [];
      let section: 'table' | 'legend' | 'nicLegend' = 'table';
      // Legend codes first (they follow the table), so the table can accept codes it explains.
      let inLegend = false;
      const explained = new Set<string>();
      for (const l of lines) {
        const t = l.trim();
        if (t === 'Legend:') inLegend = true;
        else if (t === 'NIC Legend:') inLegend = false;
        else if (inLegend) {
          const m = /^([A-Z][A-Z0-9]*)\s+=\s/.exec(t);
          if (m?.[1]) explained.add(m[1]);
        }
      }
      const isCode = (c: string): boolean => KNOWN_CODE.test(c) || explained.has(c);
      const lastIdx = lines.map((l) => l.trim() !== '').lastIndexOf(true);
      lines.forEach((line, idx) => {
        const t = line.trim();
        if (t === '') return;
        if (/^NIC Legend:$/.test(t)) return void (section = 'nicLegend');
        if (/^Legend:$/.test(t)) return void (section = 'legend');
        if (section === 'nicLegend') {
          const m = /^(NIC\d+):\s*(\S+)$/.exec(t);
          if (m && m[1] !== undefined && m[2] !== undefined) nicLegend[m[1]] = m[2];
          return;
        }
        if (section === 'legend') {
          const m = /^(\S+)\s+=\s/.exec(t);
          if (m && m[1] !== undefined) legendCodes.push(m[1]);
          return;
        }
        if (!header) {
          header = parseHeader(t);
          return;
        }
        const h = header;
        const tokens = t.split(/\s+/);
        const row = tokens[0] ?? '';
        if (!h.devices.includes(row)) return;
        const n = h.devices.length;
        const cells: Record<string, string> = {};
        for (let c = 0; c < n && c + 1 < tokens.length; c++) {
          const code = tokens[c + 1] ?? '';
          if (!isCode(code)) break;
          cells[h.devices[c] ?? ''] = code;
        }
        matrix[row] = { ...(matrix[row] ?? {}), ...cells };
        // Affinity cells follow a complete set of matrix cells (GPU rows only; NIC rows have none).
        const extra = Object.keys(cells).length === n ? tokens.slice(n + 1) : [];
        if (extra.length === 0 || h.labels.length === 0) return;
        // Only the last line of the text can be cut: there, a final cell that leaves labels unfilled
        // may be partial (`0-3` of `0-31`) and is dropped.
        const mayBeCut = idx === lastIdx;
        const aff: Record<string, string> = {};
        h.labels.forEach((label, k) => {
          const v = extra[k];
          if (v === undefined) return;
          if (mayBeCut && k === extra.length - 1 && k < h.labels.length - 1) return;
          aff[label] = v;
        });
        if (Object.keys(aff).length === 0) return;
        const numa = aff['NUMA Affinity'];
        affinity[row] = compact({
          cpuAffinity: aff['CPU Affinity'],
          numaAffinity: numa,
          numaNode: toInt(numa),
          gpuNumaId: toInt(aff['GPU NUMA ID']),
        });
      });
      if (!header)
        return empty(lines.some((l) => l.trim() !== '') ? 'no topology header (GPU0 …) found' : 'empty output');
      const devices = header.devices;
      return validate(
        NvidiaSmiTopoFactsSchema,
        compact({
          devices,
          gpus: devices.filter((d) => /^GPU\d+$/.test(d)),
          nics: devices.filter((d) => !/^GPU\d+$/.test(d)),
          matrix,
          links: matrix,
          affinity,
          nicLegend,
          nicNames: nicLegend,
          legendCodes: legendCodes.length > 0 ? legendCodes : undefined,
        }),
      );
    },
    () => empty('unreadable topology output'),
  );
}
