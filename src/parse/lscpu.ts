/**
 * `lscpu -J` (util-linux). The JSON is `{"lscpu":[{"field":"Architecture:","data":"x86_64"},…]}`;
 * util-linux 2.37+ (Ubuntu 22.04 ships 2.37.2) nests entries under `children` (`Vendor ID:` →
 * `Model name:` → `Socket(s):`…) and section headers (`Caches (sum of all):`, `NUMA:`) carry
 * `"data": null`. Values are strings. Plain `lscpu` text (`Key:   value`) is read the same way, so a
 * host whose lscpu lacks `-J` still yields facts.
 */
import { z } from 'zod';
import { cleanText, compact, guard, isRecord, parseJsonLoose, toInt, validate } from './common.js';

export const LscpuFactsSchema = z.object({
  architecture: z.string().optional(),
  vendorId: z.string().optional(),
  modelName: z.string().optional(),
  sockets: z.number().int().optional(),
  coresPerSocket: z.number().int().optional(),
  threadsPerCore: z.number().int().optional(),
  cpus: z.number().int().optional(),
  onlineCpus: z.string().optional(),
  numaNodes: z.number().int().optional(),
  /** `NUMA node0 CPU(s)` → `{ "0": "0-31,64-95" }`. */
  numaNodeCpus: z.record(z.string(), z.string()).optional(),
  /** Every field with a value, by name without the trailing colon (first occurrence wins). */
  fields: z.record(z.string(), z.string()),
  /** Why nothing or little could be read. */
  error: z.string().optional(),
});
export type LscpuFacts = z.infer<typeof LscpuFactsSchema>;

function collectJson(entries: unknown, into: Record<string, string>): void {
  if (!Array.isArray(entries)) return;
  for (const e of entries) {
    if (!isRecord(e)) continue;
    const field = typeof e['field'] === 'string' ? e['field'].trim().replace(/:$/, '') : undefined;
    const data = e['data'];
    const value = typeof data === 'string' ? data.trim() : typeof data === 'number' ? String(data) : undefined;
    if (field && value !== undefined && value !== '' && !(field in into)) into[field] = value;
    collectJson(e['children'], into);
  }
}

function collectText(text: string, into: Record<string, string>): void {
  for (const raw of text.split('\n')) {
    // lscpu labels start with a capital (`Architecture`, `L1d`); `bash: lscpu: …` is not one.
    const m = /^\s*([A-Z][^:]*?):\s+(\S.*?)\s*$/.exec(raw);
    if (!m || m[1] === undefined || m[2] === undefined) continue;
    if (!(m[1] in into)) into[m[1]] = m[2];
  }
}

/** A count field: `-` (unknown on some ARM systems) and non-numbers are omitted. */
function count(fields: Record<string, string>, key: string): number | undefined {
  return toInt(fields[key]);
}

export function parseLscpu(text: string): LscpuFacts {
  return guard(
    () => {
      const cleaned = cleanText(text, { commands: ['lscpu'] });
      const fields: Record<string, string> = {};
      let error: string | undefined;
      const json = /"lscpu"\s*:/.test(cleaned) ? parseJsonLoose(cleaned) : undefined;
      if (json && isRecord(json.value) && Array.isArray(json.value['lscpu'])) {
        collectJson(json.value['lscpu'], fields);
      } else if (json) {
        // Truncated or damaged JSON: recover the field/data pairs that are complete.
        const re = /"field"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"data"\s*:\s*"((?:[^"\\]|\\.)*)"/g;
        for (const m of cleaned.matchAll(re)) {
          const k = (m[1] ?? '').trim().replace(/:$/, '');
          const v = (m[2] ?? '').trim();
          if (k && v && !(k in fields)) fields[k] = v;
        }
        if (Object.keys(fields).length === 0) error = json.error ?? 'no lscpu fields';
      } else {
        collectText(cleaned, fields);
        if (Object.keys(fields).length === 0) error = cleaned.trim() === '' ? 'empty output' : 'no lscpu fields';
      }
      const numaNodeCpus: Record<string, string> = {};
      for (const [k, v] of Object.entries(fields)) {
        const m = /^NUMA node(\d+) CPU\(s\)$/.exec(k);
        if (m && m[1] !== undefined) numaNodeCpus[m[1]] = v;
      }
      return validate(
        LscpuFactsSchema,
        compact({
          architecture: fields['Architecture'],
          vendorId: fields['Vendor ID'],
          modelName: fields['Model name'],
          sockets: count(fields, 'Socket(s)'),
          coresPerSocket: count(fields, 'Core(s) per socket'),
          threadsPerCore: count(fields, 'Thread(s) per core'),
          cpus: count(fields, 'CPU(s)'),
          onlineCpus: fields['On-line CPU(s) list'],
          numaNodes: count(fields, 'NUMA node(s)'),
          numaNodeCpus: Object.keys(numaNodeCpus).length > 0 ? numaNodeCpus : undefined,
          fields,
          error,
        }),
      );
    },
    () => ({ fields: {}, error: 'unreadable lscpu output' }),
  );
}
