/**
 * `nvidia-smi -q` facts: the zod schemas, the scan/hit shapes, value helpers, and `gpuFrom`, which turns one
 * GPU's path → value map (text names, `/`-joined; the XML reader maps onto the same paths) into facts and D21/D23 hits.
 */
import { z } from 'zod';
import { compact, toNum } from './common.js';
import { camel } from './log-lines.js';

const Counter = z.number().nullable();

export const SmiQGpuSchema = z.object({
  name: z.string().optional(),
  busId: z.string().optional(),
  uuid: z.string().optional(),
  serial: z.string().optional(),
  vbios: z.string().optional(),
  persistenceMode: z.string().optional(),
  migMode: z.object({ current: z.string().optional(), pending: z.string().optional() }).optional(),
  eccMode: z.object({ current: z.string().optional(), pending: z.string().optional() }).optional(),
  /** `ECC Errors / Volatile` counters by camelCase name; null for `N/A`. */
  eccVolatile: z.record(z.string(), Counter).optional(),
  eccAggregate: z.record(z.string(), Counter).optional(),
  retiredPages: z
    .object({ singleBit: Counter.optional(), doubleBit: Counter.optional(), pending: z.string().optional() })
    .optional(),
  remappedRows: z
    .object({
      correctable: Counter.optional(),
      uncorrectable: Counter.optional(),
      pending: z.boolean().optional(),
      failure: z.boolean().optional(),
    })
    .optional(),
  pcieGenMax: z.number().optional(),
  pcieGenCurrent: z.number().optional(),
  pcieWidthMax: z.number().optional(),
  pcieWidthCurrent: z.number().optional(),
  memTotalMiB: z.number().optional(),
  memUsedMiB: z.number().optional(),
  utilPct: z.number().optional(),
  tempC: z.number().optional(),
  powerDrawW: z.number().optional(),
  powerLimitW: z.number().optional(),
  perfState: z.string().optional(),
  computeMode: z.string().optional(),
  /** Clock event (throttle) reasons printed `Active`. */
  clockEventReasonsActive: z.array(z.string()).optional(),
});
export type SmiQGpu = z.infer<typeof SmiQGpuSchema>;

export const NvidiaSmiQFactsSchema = z.object({
  format: z.enum(['text', 'xml']),
  driverVersion: z.string().optional(),
  /** As printed; `Not Found` on vGPU hosts. */
  cudaVersion: z.string().optional(),
  attachedGpus: z.number().int().optional(),
  timestamp: z.string().optional(),
  gpus: z.array(SmiQGpuSchema),
  errors: z.array(z.string()),
});
export type NvidiaSmiQFacts = z.infer<typeof NvidiaSmiQFactsSchema>;

/** A field of one GPU with the line it was read from. */
export interface Field {
  value: string;
  line: number;
}
export type FieldMap = Map<string, Field>;

export interface SmiQHit {
  /** D26: an active clock event reason (`field` is its name as printed); the rule decides whether it is a fault. */
  rule: 'D21' | 'D23' | 'D26';
  gpu: string;
  field: string;
  value: string;
  line: number;
}

export interface NvidiaSmiQScan {
  facts: NvidiaSmiQFacts;
  hits: SmiQHit[];
}

const NA = /^(?:N\/A|\[N\/A\]|Not Supported|\[Not Supported\]|Unknown|Requested functionality has been deprecated)$/i;

export function counter(v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  if (NA.test(t) || t === '') return null;
  const n = toNum(t);
  return n === undefined ? null : n;
}

export function numUnit(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(-?\d+(?:\.\d+)?)/.exec(v);
  return m ? toNum(m[1]) : undefined;
}

function normKey(k: string): string {
  return camel(k.replace(/SEC-DED/gi, 'secded'));
}

/** Builds a GPU's facts and rule hits from its path → value map (paths use the text names, `/`-joined). */
export function gpuFrom(id: string, m: FieldMap, hits: SmiQHit[]): SmiQGpu {
  const v = (p: string): string | undefined => {
    const x = m.get(p)?.value.trim();
    return x === undefined || x === '' || NA.test(x) ? undefined : x;
  };
  const any = (...ps: string[]): string | undefined => {
    for (const p of ps) {
      const x = v(p);
      if (x !== undefined) return x;
    }
    return undefined;
  };
  const sub = (prefix: string): Record<string, number | null> | undefined => {
    const out: Record<string, number | null> = {};
    for (const [k, f] of m) {
      if (!k.startsWith(`${prefix}/`)) continue;
      const rest = k.slice(prefix.length + 1);
      const c = counter(f.value);
      if (c !== undefined) out[normKey(rest.replace(/\//g, ' '))] = c;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const eccVolatile = sub('ECC Errors/Volatile');
  for (const [k, f] of m) {
    if (!k.startsWith('ECC Errors/Volatile/')) continue;
    const key = normKey(k.slice(20).replace(/\//g, ' '));
    const c = counter(f.value);
    if (
      c !== null &&
      c !== undefined &&
      c > 0 &&
      (/^(?:dram|sram)Uncorrectable/.test(key) || /^doubleBit(?:Total|DeviceMemory)$/.test(key))
    ) {
      hits.push({ rule: 'D21', gpu: id, field: k, value: f.value.trim(), line: f.line });
    }
  }
  const rrPending = m.get('Remapped Rows/Pending');
  const rrFail = m.get('Remapped Rows/Remapping Failure Occurred');
  if (rrPending && /^yes$/i.test(rrPending.value.trim()))
    hits.push({ rule: 'D21', gpu: id, field: 'Remapped Rows/Pending', value: 'Yes', line: rrPending.line });
  if (rrFail && /^yes$/i.test(rrFail.value.trim()))
    hits.push({
      rule: 'D21',
      gpu: id,
      field: 'Remapped Rows/Remapping Failure Occurred',
      value: 'Yes',
      line: rrFail.line,
    });
  const mig = m.get('MIG Mode/Current');
  if (mig && /^enabled$/i.test(mig.value.trim()))
    hits.push({ rule: 'D23', gpu: id, field: 'MIG Mode/Current', value: 'Enabled', line: mig.line });

  const yesNo = (x: string | undefined): boolean | undefined =>
    x === undefined ? undefined : /^yes$/i.test(x) ? true : /^no$/i.test(x) ? false : undefined;
  const remapped = compact({
    correctable: counter(m.get('Remapped Rows/Correctable Error')?.value),
    uncorrectable: counter(m.get('Remapped Rows/Uncorrectable Error')?.value),
    pending: yesNo(v('Remapped Rows/Pending')),
    failure: yesNo(v('Remapped Rows/Remapping Failure Occurred')),
  });
  const retired = compact({
    singleBit: counter(m.get('Retired Pages/Single Bit ECC')?.value),
    doubleBit: counter(m.get('Retired Pages/Double Bit ECC')?.value),
    pending:
      v('Retired Pages/Pending Page Blacklist') ??
      v('Retired Pages/Pending Page Retirement') ??
      v('Retired Pages/Pending'),
  });
  const reasons: string[] = [];
  for (const [k, f] of m) {
    const r = /^Clocks? (?:Event|Throttle) Reasons\/(.+)$/.exec(k);
    if (r?.[1] && /^Active$/i.test(f.value.trim())) {
      const name = r[1].split('/').pop() ?? r[1];
      reasons.push(name);
      hits.push({ rule: 'D26', gpu: id, field: name, value: f.value.trim(), line: f.line });
    }
  }
  const migMode = compact({ current: v('MIG Mode/Current'), pending: v('MIG Mode/Pending') });
  const eccMode = compact({ current: v('ECC Mode/Current'), pending: v('ECC Mode/Pending') });
  return compact({
    name: v('Product Name'),
    busId: v('PCI/Bus Id') ?? id,
    uuid: v('GPU UUID'),
    serial: v('Serial Number'),
    vbios: v('VBIOS Version'),
    persistenceMode: v('Persistence Mode'),
    migMode: Object.keys(migMode).length > 0 ? migMode : undefined,
    eccMode: Object.keys(eccMode).length > 0 ? eccMode : undefined,
    eccVolatile,
    eccAggregate: sub('ECC Errors/Aggregate'),
    retiredPages: Object.keys(retired).length > 0 ? retired : undefined,
    remappedRows: Object.keys(remapped).length > 0 ? remapped : undefined,
    pcieGenMax: numUnit(v('PCI/GPU Link Info/PCIe Generation/Max')),
    pcieGenCurrent: numUnit(v('PCI/GPU Link Info/PCIe Generation/Current')),
    pcieWidthMax: numUnit(v('PCI/GPU Link Info/Link Width/Max')),
    pcieWidthCurrent: numUnit(v('PCI/GPU Link Info/Link Width/Current')),
    memTotalMiB: numUnit(v('FB Memory Usage/Total')),
    memUsedMiB: numUnit(v('FB Memory Usage/Used')),
    utilPct: numUnit(any('Utilization/GPU', 'Utilization/Gpu')),
    tempC: numUnit(v('Temperature/GPU Current Temp')),
    powerDrawW: numUnit(
      any(
        'GPU Power Readings/Power Draw',
        'GPU Power Readings/Average Power Draw',
        'GPU Power Readings/Instantaneous Power Draw',
        'Power Readings/Power Draw',
      ),
    ),
    powerLimitW: numUnit(
      any('GPU Power Readings/Current Power Limit', 'GPU Power Readings/Power Limit', 'Power Readings/Power Limit'),
    ),
    perfState: v('Performance State'),
    computeMode: v('Compute Mode'),
    clockEventReasonsActive: reasons.length > 0 ? reasons : undefined,
  });
}
