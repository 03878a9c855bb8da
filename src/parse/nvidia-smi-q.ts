/**
 * `nvidia-smi -q` (also `-q -d …`) and `nvidia-smi -q -x` (XML, DTD v11 / v12).
 *
 * Text: `==============NVSMI LOG==============`, top-level `Driver Version : …`, `CUDA Version : …` (vGPU hosts:
 * `Not Found`), then one `GPU 00000000:18:00.0` block per GPU of indented `Key : value` lines and value-less
 * section headers (`ECC Errors`, `Volatile`). The colon column moves between drivers (43 for 535–580, 56 for 590+),
 * so a line is split at its first ` : `, and nesting comes from the indentation. XML: `<nvidia_smi_log>` with one
 * `<gpu id="…">` per GPU; read with a linear tag scanner.
 *
 * Per GPU the facts keep what the rules and people need: identity, MIG and ECC modes, volatile/aggregate ECC
 * counters (`dramUncorrectable`, `sramUncorrectableParity`, older `doubleBitTotal`), retired pages, remapped rows,
 * PCIe link, memory, utilisation, temperature, power, active clock-event (throttle) reasons.
 */
import { z } from 'zod';
import { compact, guard, toNum, validate } from './common.js';
import { camel, logLines } from './log-lines.js';

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
  retiredPages: z.object({ singleBit: Counter.optional(), doubleBit: Counter.optional(), pending: z.string().optional() }).optional(),
  remappedRows: z
    .object({ correctable: Counter.optional(), uncorrectable: Counter.optional(), pending: z.boolean().optional(), failure: z.boolean().optional() })
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
interface Field {
  value: string;
  line: number;
}
type FieldMap = Map<string, Field>;

export interface SmiQHit {
  rule: 'D21' | 'D23';
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

function counter(v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  const t = v.trim();
  if (NA.test(t) || t === '') return null;
  const n = toNum(t);
  return n === undefined ? null : n;
}

function numUnit(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^\s*(-?\d+(?:\.\d+)?)/.exec(v);
  return m ? toNum(m[1]) : undefined;
}

function normKey(k: string): string {
  return camel(k.replace(/SEC-DED/gi, 'secded'));
}

/** Builds a GPU's facts and rule hits from its path → value map (paths use the text names, `/`-joined). */
function gpuFrom(id: string, m: FieldMap, hits: SmiQHit[]): SmiQGpu {
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
    if (c !== null && c !== undefined && c > 0 && (/^(?:dram|sram)Uncorrectable/.test(key) || /^doubleBit(?:Total|DeviceMemory)$/.test(key))) {
      hits.push({ rule: 'D21', gpu: id, field: k, value: f.value.trim(), line: f.line });
    }
  }
  const rrPending = m.get('Remapped Rows/Pending');
  const rrFail = m.get('Remapped Rows/Remapping Failure Occurred');
  if (rrPending && /^yes$/i.test(rrPending.value.trim())) hits.push({ rule: 'D21', gpu: id, field: 'Remapped Rows/Pending', value: 'Yes', line: rrPending.line });
  if (rrFail && /^yes$/i.test(rrFail.value.trim())) hits.push({ rule: 'D21', gpu: id, field: 'Remapped Rows/Remapping Failure Occurred', value: 'Yes', line: rrFail.line });
  const mig = m.get('MIG Mode/Current');
  if (mig && /^enabled$/i.test(mig.value.trim())) hits.push({ rule: 'D23', gpu: id, field: 'MIG Mode/Current', value: 'Enabled', line: mig.line });

  const yesNo = (x: string | undefined): boolean | undefined => (x === undefined ? undefined : /^yes$/i.test(x) ? true : /^no$/i.test(x) ? false : undefined);
  const remapped = compact({
    correctable: counter(m.get('Remapped Rows/Correctable Error')?.value),
    uncorrectable: counter(m.get('Remapped Rows/Uncorrectable Error')?.value),
    pending: yesNo(v('Remapped Rows/Pending')),
    failure: yesNo(v('Remapped Rows/Remapping Failure Occurred')),
  });
  const retired = compact({
    singleBit: counter(m.get('Retired Pages/Single Bit ECC')?.value),
    doubleBit: counter(m.get('Retired Pages/Double Bit ECC')?.value),
    pending: v('Retired Pages/Pending Page Blacklist') ?? v('Retired Pages/Pending Page Retirement') ?? v('Retired Pages/Pending'),
  });
  const reasons: string[] = [];
  for (const [k, f] of m) {
    const r = /^Clocks? (?:Event|Throttle) Reasons\/(.+)$/.exec(k);
    if (r?.[1] && /^Active$/i.test(f.value.trim())) reasons.push(r[1].split('/').pop() ?? r[1]);
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
      any('GPU Power Readings/Power Draw', 'GPU Power Readings/Average Power Draw', 'GPU Power Readings/Instantaneous Power Draw', 'Power Readings/Power Draw'),
    ),
    powerLimitW: numUnit(any('GPU Power Readings/Current Power Limit', 'GPU Power Readings/Power Limit', 'Power Readings/Power Limit')),
    perfState: v('Performance State'),
    computeMode: v('Compute Mode'),
    clockEventReasonsActive: reasons.length > 0 ? reasons : undefined,
  });
}

function scanText(lines: string[]): NvidiaSmiQScan {
  const facts: NvidiaSmiQFacts = { format: 'text', gpus: [], errors: [] };
  const hits: SmiQHit[] = [];
  let gpuId: string | undefined;
  let map: FieldMap = new Map();
  const stack: Array<{ indent: number; name: string }> = [];
  const flush = (): void => {
    if (gpuId !== undefined) facts.gpus.push(gpuFrom(gpuId, map, hits));
    map = new Map();
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const raw = line.includes('\t') ? line.replace(/\t/g, '    ') : line;
    const t = raw.trim();
    if (t === '' || /^=+\s*NVSMI LOG\s*=+$/.test(t)) continue;
    const indent = raw.length - raw.trimStart().length;
    const gpu = indent === 0 ? /^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$/.exec(t) : null;
    if (gpu?.[1]) {
      flush();
      gpuId = gpu[1];
      stack.length = 0;
      continue;
    }
    if ((t.includes('NVML') || t.includes('NVIDIA-SMI') || t.includes('No devices') || t.includes('device handle')) && /Failed to initialize NVML|NVIDIA-SMI has failed|No devices were found|Unable to determine the device handle/i.test(t)) {
      if (facts.errors.length < 20) facts.errors.push(t);
      continue;
    }
    const sep = t.indexOf(' : ');
    const endColon = sep < 0 && /\s:$/.test(t);
    const key = (sep >= 0 ? t.slice(0, sep) : endColon ? t.slice(0, -1) : t).trim();
    const value = sep >= 0 ? t.slice(sep + 3).trim() : '';
    while (stack.length > 0 && (stack[stack.length - 1]?.indent ?? 0) >= indent) stack.pop();
    if (gpuId === undefined || indent === 0) {
      if (sep < 0 && !endColon) continue;
      if (key === 'Driver Version') facts.driverVersion = value;
      else if (key === 'CUDA Version') facts.cudaVersion = value;
      else if (key === 'Attached GPUs') facts.attachedGpus = numUnit(value);
      else if (key === 'Timestamp') facts.timestamp = value;
      continue;
    }
    if (sep < 0 && !endColon) {
      stack.push({ indent, name: key });
      continue;
    }
    const path = [...stack.map((s) => s.name), key].join('/');
    if (!map.has(path) && map.size < 2000) map.set(path, { value, line: i + 1 });
  }
  flush();
  return { facts, hits };
}

// ---- XML ----

interface XNode {
  name: string;
  attrs: string;
  children: XNode[];
  text: string;
  line: number;
}

const TOKEN = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<[?!][^>]*>|<(\/?)([A-Za-z_][\w.:-]*)([^>]*?)(\/?)>|([^<]+)/g;

function parseXml(text: string): XNode {
  const root: XNode = { name: '#root', attrs: '', children: [], text: '', line: 1 };
  const stack: XNode[] = [root];
  let line = 1;
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    const idx = m.index ?? 0;
    for (let k = last; k < idx; k++) if (text.charCodeAt(k) === 10) line++;
    last = idx;
    const top = stack[stack.length - 1] ?? root;
    if (m[2] !== undefined) {
      if (m[1] === '/') {
        // Close the nearest open element of that name (tolerates stray tags).
        for (let j = stack.length - 1; j > 0; j--) {
          if (stack[j]?.name === m[2]) {
            stack.length = j;
            break;
          }
        }
      } else {
        const node: XNode = { name: m[2], attrs: m[3] ?? '', children: [], text: '', line };
        if (top.children.length < 5000) top.children.push(node);
        if (m[4] !== '/' && stack.length < 64) stack.push(node);
      }
    } else if (m[5] !== undefined && stack.length > 1) {
      if (top.text.length < 4096) top.text += m[5];
    }
  }
  return root;
}

const decode = (s: string): string =>
  s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&').trim();

function child(n: XNode | undefined, name: string): XNode | undefined {
  return n?.children.find((c) => c.name === name);
}

/** XML element names → the text paths `gpuFrom` reads. */
const XML_PATHS: Array<[string, string]> = [
  ['product_name', 'Product Name'],
  ['uuid', 'GPU UUID'],
  ['serial', 'Serial Number'],
  ['vbios_version', 'VBIOS Version'],
  ['persistence_mode', 'Persistence Mode'],
  ['mig_mode/current_mig', 'MIG Mode/Current'],
  ['mig_mode/pending_mig', 'MIG Mode/Pending'],
  ['ecc_mode/current_ecc', 'ECC Mode/Current'],
  ['ecc_mode/pending_ecc', 'ECC Mode/Pending'],
  ['pci/pci_bus_id', 'PCI/Bus Id'],
  ['pci/pci_gpu_link_info/pcie_gen/max_link_gen', 'PCI/GPU Link Info/PCIe Generation/Max'],
  ['pci/pci_gpu_link_info/pcie_gen/current_link_gen', 'PCI/GPU Link Info/PCIe Generation/Current'],
  ['pci/pci_gpu_link_info/link_widths/max_link_width', 'PCI/GPU Link Info/Link Width/Max'],
  ['pci/pci_gpu_link_info/link_widths/current_link_width', 'PCI/GPU Link Info/Link Width/Current'],
  ['fb_memory_usage/total', 'FB Memory Usage/Total'],
  ['fb_memory_usage/used', 'FB Memory Usage/Used'],
  ['utilization/gpu_util', 'Utilization/GPU'],
  ['temperature/gpu_temp', 'Temperature/GPU Current Temp'],
  ['gpu_power_readings/power_draw', 'GPU Power Readings/Power Draw'],
  ['gpu_power_readings/average_power_draw', 'GPU Power Readings/Average Power Draw'],
  ['gpu_power_readings/instant_power_draw', 'GPU Power Readings/Instantaneous Power Draw'],
  ['gpu_power_readings/current_power_limit', 'GPU Power Readings/Current Power Limit'],
  ['gpu_power_readings/power_limit', 'GPU Power Readings/Power Limit'],
  ['power_readings/power_draw', 'Power Readings/Power Draw'],
  ['power_readings/power_limit', 'Power Readings/Power Limit'],
  ['performance_state', 'Performance State'],
  ['compute_mode', 'Compute Mode'],
  ['retired_pages/multiple_single_bit_retirement/retired_count', 'Retired Pages/Single Bit ECC'],
  ['retired_pages/double_bit_retirement/retired_count', 'Retired Pages/Double Bit ECC'],
  ['retired_pages/pending_blacklist', 'Retired Pages/Pending Page Blacklist'],
  ['retired_pages/pending_retirement', 'Retired Pages/Pending Page Retirement'],
  ['remapped_rows/remapped_row_corr', 'Remapped Rows/Correctable Error'],
  ['remapped_rows/remapped_row_unc', 'Remapped Rows/Uncorrectable Error'],
  ['remapped_rows/remapped_row_pending', 'Remapped Rows/Pending'],
  ['remapped_rows/remapped_row_failure', 'Remapped Rows/Remapping Failure Occurred'],
];

function xmlGpuMap(g: XNode): FieldMap {
  const m: FieldMap = new Map();
  const at = (path: string): XNode | undefined => path.split('/').reduce<XNode | undefined>((n, p) => child(n, p), g);
  for (const [xp, tp] of XML_PATHS) {
    const n = at(xp);
    if (n && n.children.length === 0) m.set(tp, { value: decode(n.text), line: n.line });
  }
  // ECC counters: every leaf under volatile/aggregate, nested names flattened (`single_bit/total`).
  const ecc = child(g, 'ecc_errors');
  for (const scope of ['volatile', 'aggregate'] as const) {
    const s = child(ecc, scope);
    const walk = (n: XNode, prefix: string[]): void => {
      for (const c of n.children) {
        if (c.children.length > 0) walk(c, [...prefix, c.name]);
        else m.set(`ECC Errors/${scope === 'volatile' ? 'Volatile' : 'Aggregate'}/${[...prefix, c.name].join(' ').replace(/_/g, ' ')}`, { value: decode(c.text), line: c.line });
      }
    };
    if (s) walk(s, []);
  }
  for (const tag of ['clocks_event_reasons', 'clocks_throttle_reasons']) {
    const r = child(g, tag);
    for (const c of r?.children ?? []) {
      if (c.children.length === 0) m.set(`Clocks Event Reasons/${c.name.replace(/^clocks_(?:event|throttle)_reason_/, '').replace(/_/g, ' ')}`, { value: decode(c.text), line: c.line });
    }
  }
  return m;
}

function scanXml(text: string): NvidiaSmiQScan {
  const facts: NvidiaSmiQFacts = { format: 'xml', gpus: [], errors: [] };
  const hits: SmiQHit[] = [];
  const root = parseXml(text);
  const log = child(root, 'nvidia_smi_log') ?? root;
  const txt = (n: XNode | undefined): string | undefined => (n && n.children.length === 0 ? decode(n.text) || undefined : undefined);
  facts.driverVersion = txt(child(log, 'driver_version'));
  facts.cudaVersion = txt(child(log, 'cuda_version'));
  facts.timestamp = txt(child(log, 'timestamp'));
  const att = numUnit(txt(child(log, 'attached_gpus')));
  if (att !== undefined) facts.attachedGpus = att;
  for (const g of log.children) {
    if (g.name !== 'gpu') continue;
    const id = /\bid\s*=\s*"([^"]*)"/.exec(g.attrs)?.[1] ?? '';
    facts.gpus.push(gpuFrom(id, xmlGpuMap(g), hits));
  }
  return { facts: compact(facts), hits };
}

let cache: { text: string; scan: NvidiaSmiQScan } | undefined;

export function scanNvidiaSmiQ(text: string): NvidiaSmiQScan {
  const empty = (): NvidiaSmiQScan => ({ facts: { format: 'text', gpus: [], errors: [] }, hits: [] });
  if (typeof text !== 'string') return empty();
  if (cache && cache.text === text) return cache.scan;
  const scan = guard(() => {
    const lines = logLines(text);
    const xml = /<nvidia_smi_log\b/.test(text.slice(0, 65536)) || /^\s*<\?xml/.test(text);
    if (xml) {
      const start = Math.max(0, text.search(/<\?xml|<!DOCTYPE|<nvidia_smi_log/));
      // Line numbers count from the input's first line.
      const offset = text.slice(0, start).split('\n').length - 1;
      const s = scanXml(text.slice(start));
      for (const h of s.hits) h.line += offset;
      return s;
    }
    return scanText(lines);
  }, empty);
  cache = { text, scan };
  return scan;
}

export function parseNvidiaSmiQ(text: string): NvidiaSmiQFacts {
  return guard(
    () => validate(NvidiaSmiQFactsSchema, compact({ ...scanNvidiaSmiQ(text).facts })),
    () => ({ format: 'text' as const, gpus: [], errors: [] }),
  );
}
