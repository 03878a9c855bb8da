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
 *
 * This file: the text scanner and the entry points; facts and `gpuFrom` in `nvidia-smi-q-facts.ts`, XML in `nvidia-smi-q-xml.ts`.
 */
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';
import {
  NvidiaSmiQFactsSchema,
  gpuFrom,
  numUnit,
  type FieldMap,
  type NvidiaSmiQFacts,
  type NvidiaSmiQScan,
  type SmiQHit,
} from './nvidia-smi-q-facts.js';
import { scanXml } from './nvidia-smi-q-xml.js';

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
    if (
      (t.includes('NVML') || t.includes('NVIDIA-SMI') || t.includes('No devices') || t.includes('device handle')) &&
      /Failed to initialize NVML|NVIDIA-SMI has failed|No devices were found|Unable to determine the device handle/i.test(
        t,
      )
    ) {
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
