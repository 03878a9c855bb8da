/**
 * nvidia-smi forms as doctor kinds: the default table, `--query-gpu` / `--query-compute-apps` CSV,
 * `-q` / `-q -x`, and `dmon` / `pmon` (D13 driver errors, D21 GPU errors, D23 MIG enabled).
 */
import { logLines } from '../../../parse/log-lines.js';
import { QUERY_FIELDS as GPU_DRIVER_FIELDS } from '../../../../checks/gpu-driver/probes.js';
import { APPS_FIELDS, EVENT_REASON_FIELDS, GPU_FIELDS as MONITOR_FIELDS } from '../../../monitor/scripts.js';
import { HEADERLESS_UNKNOWN, parseNvidiaSmiCsv, type NvidiaSmiCsvFacts } from '../../../parse/nvidia-smi-csv.js';
import { INVENTORY_GPU_FIELDS } from '../../../parse/nvidia-smi-query-gpu.js';
import { parseNvidiaSmiDmon, type NvidiaSmiDmonFacts } from '../../../parse/nvidia-smi-dmon.js';
import { parseNvidiaSmiQ, scanNvidiaSmiQ } from '../../../parse/nvidia-smi-q.js';
import type { NvidiaSmiQFacts } from '../../../parse/nvidia-smi-q-facts.js';
import { parseNvidiaSmi, scanNvidiaSmi, SMI_DRIVER_ERROR, type NvidiaSmiFacts } from '../../../parse/nvidia-smi.js';
import { reasonFromName, reasonsFromBitmask, type EventReason } from '../../../parse/clock-events.js';
import { d13NvidiaDriver } from '../../../rules/output/d13-nvidia-driver.js';
import { d26ClockEvents, type D26Hit } from '../../../rules/output/d26-clock-events.js';
import type { D21Hit } from '../../../rules/output/d21-gpu-errors.js';
import type { D23Hit } from '../../../rules/output/d23-mig-enabled.js';
import type { KindDef } from '../../types.js';
import { defined, firstLines, hasAny, head, smiDriverHits, smiFindings, smiHeaderRows } from './common.js';

export const nvidiaSmi: KindDef<NvidiaSmiFacts> = {
  kind: 'nvidia-smi',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (t.includes('NVIDIA-SMI') && /NVIDIA-SMI \d+\.\d+/.test(t) && /(?:Driver|KMD) Version:/.test(t)) return 0.95;
    if (
      t.includes('MiB') &&
      /^\|\s*(?:\d+%|N\/A|ERR!)\s+(?:\d+C|N\/A|ERR!)\s+P\d+\s/m.test(t) &&
      /MiB\s*\/\s*\d+MiB/.test(t)
    )
      return 0.75;
    if (/^\|\s+\d+\s+(?:N\/A|\d+)\s+(?:N\/A|\d+)\s+\d+\s+[CGM]\S{0,2}\s+\S.*\d+MiB\s*\|$/m.test(t)) return 0.6;
    if (
      !hasAny(
        t,
        'NVIDIA-SMI has failed',
        'NVML',
        'No devices were found',
        'No NVIDIA graphics',
        'version mismatch',
        'device handle',
        'fallen off the bus',
      )
    )
      return 0;
    return SMI_DRIVER_ERROR.test(t) ||
      /Unable to determine the device handle for GPU|GPU has fallen off the bus/.test(t)
      ? 0.6
      : 0;
  },
  parse: parseNvidiaSmi,
  findings(_f, text) {
    const s = scanNvidiaSmi(text);
    const d21: D21Hit[] = [
      ...s.gpuLost.map((h) => ({ line: h.line, text: h.text })),
      ...s.eccRows.map((h) => ({ line: h.line, text: `${h.text}  (Volatile Uncorr. ECC ${h.count})` })),
      ...s.errRows.map((h) => ({
        line: h.line,
        text: `${h.text}  (ERR! in ${h.fields.join(', ')})`,
        fanOnly: h.fields.every((x) => x === 'fan'),
      })),
    ].sort((a, b) => a.line - b.line);
    const d23: D23Hit[] = s.mig.map((h) => ({ line: h.line, text: h.text }));
    const migGpus = s.facts.gpus.filter((g) => g.migMode === 'Enabled').map((g) => g.index);
    if (d23.length > 0 && migGpus.length > 0 && d23[0]) d23[0].gpu = migGpus.join(', ');
    return smiFindings(d13NvidiaDriver(s.driverErrors), d21, d23);
  },
  summary(f) {
    const rows = smiHeaderRows(f);
    const busy = f.gpus.filter((g) => (g.utilPct ?? 0) > 0).length;
    if (f.gpus.length > 0) rows.push(['busy GPUs', String(busy)]);
    rows.push(['processes', String(f.processes.length)]);
    if (f.errors.length > 0) rows.push(['error', f.errors[0] ?? '']);
    return rows;
  },
};

// ---------------------------------------------------------------- nvidia-smi --query-gpu / --query-compute-apps

const CSV_HEADER = /^\s*[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?(?:\s*,\s*[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?)+\s*$/;
const KNOWN_FIELD =
  /(?:^|,\s*)(?:index|name|uuid|gpu_uuid|gpu_name|gpu_bus_id|pci\.bus_id|pid|process_name|used_gpu_memory|timestamp|driver_version|[a-z_]+\.[a-z_.]+)(?: \[[^\]]+\])?\s*(?:,|$)/;

/**
 * The field lists l20-setup itself queries with `noheader` (inventory, gpu-driver, the monitor with and without
 * its event-reasons field, compute apps): the only ones a headerless CSV may be read as, and only when its cells
 * fit. The monitor's older field name `clocks_throttle_reasons.active` prints the same bitmask, and nvidia-smi's
 * own header names it `clocks_event_reasons.active`, so that is the one name used here.
 */
const OWN_QUERIES: ReadonlyArray<readonly string[]> = [
  INVENTORY_GPU_FIELDS,
  GPU_DRIVER_FIELDS,
  MONITOR_FIELDS,
  [...MONITOR_FIELDS, EVENT_REASON_FIELDS[0]],
  APPS_FIELDS,
];

export const nvidiaSmiCsv: KindDef<NvidiaSmiCsvFacts> = {
  kind: 'nvidia-smi-csv',
  detect(text) {
    const lines = firstLines(text, 60)
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const hi = lines.findIndex((l) => CSV_HEADER.test(l) && KNOWN_FIELD.test(l));
    if (hi >= 0) {
      const width = (lines[hi] ?? '').split(',').length;
      const data = lines.slice(hi + 1).filter((l) => l.split(',').length === width).length;
      return data > 0 ? 0.9 : 0.6;
    }
    const rows = lines.filter((l) => (l.match(/,/g)?.length ?? 0) >= 2);
    if (rows.length === 0) return 0;
    const width = (rows[0] ?? '').split(',').length;
    const uniform = rows.filter((l) => l.split(',').length === width).length >= Math.max(1, rows.length - 1);
    const smiish = rows.some((l) =>
      /GPU-[0-9a-f]{8}-|[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.\d|\bNVIDIA\b|\[N\/A\]|^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d{3},/i.test(
        l,
      ),
    );
    return uniform && smiish ? 0.6 : 0;
  },
  parse: (text) => parseNvidiaSmiCsv(text, { known: OWN_QUERIES }),
  findings(f, text) {
    const d13 =
      f.driverLoaded === false || f.nvmlError !== undefined || f.noDevices
        ? d13NvidiaDriver(smiDriverHits(text))
        : undefined;
    const d21: D21Hit[] = [];
    const d23: D23Hit[] = [];
    const d26: D26Hit[] = [];
    f.rows.forEach((r, k) => {
      const gpu = r.index ?? k;
      for (const [c, v] of Object.entries(r)) {
        if (/^ecc\.errors\.uncorrected\.volatile\./.test(c) && typeof v === 'number' && v > 0)
          d21.push({ text: `GPU ${gpu}: ${c} = ${v}` });
        if (c === 'mig.mode.current' && typeof v === 'string' && /^enabled$/i.test(v))
          d23.push({
            text: `GPU ${gpu}: mig.mode.current = ${v}`,
            gpu: typeof gpu === 'number' || typeof gpu === 'string' ? gpu : undefined,
          });
      }
      // `clocks_event_reasons.active` (the bitmask) or one column per reason (`clocks_event_reasons.sw_power_cap`).
      const reasons = new Set<EventReason>();
      const cells: string[] = [];
      for (const [c, v] of Object.entries(r)) {
        if (!/^clocks_(?:event|throttle)_reasons\./.test(c) || typeof v !== 'string') continue;
        const active = /\.active$/.test(c) ? reasonsFromBitmask(v) : /^active$/i.test(v) ? [reasonFromName(c)] : [];
        const known = (active ?? []).filter((x): x is EventReason => x !== undefined);
        known.forEach((x) => reasons.add(x));
        if (known.length > 0) cells.push(`${c} = ${v}`);
      }
      if (reasons.size > 0) d26.push({ gpu: String(gpu), reasons: [...reasons], evidence: [cells.join(', ')] });
    });
    return [...smiFindings(d13, d21, d23), ...defined([d26ClockEvents(d26)])];
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.query) rows.push(['query', f.query === 'gpu' ? '--query-gpu' : '--query-compute-apps']);
    const columns = f.columns.length > 0 ? f.columns.join(', ') : f.columnsUnknown ? HEADERLESS_UNKNOWN : 'none';
    rows.push(['columns', columns]);
    rows.push(['rows', String(f.rows.length || f.values?.length || 0)]);
    if (f.nvmlError) rows.push(['NVML error', f.nvmlError]);
    if (f.driverLoaded === false) rows.push(['driver', 'not loaded']);
    return rows;
  },
};

// ---------------------------------------------------------------- nvidia-smi -q / -q -x

export const nvidiaSmiQ: KindDef<NvidiaSmiQFacts> = {
  kind: 'nvidia-smi-q',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'NVSMI LOG', 'nvidia_smi_log', 'Attached GPUs', 'Product Name')) return 0;
    if (/=+\s*NVSMI LOG\s*=+/.test(t) || /<nvidia_smi_log>/.test(t)) return 0.95;
    if (/^Attached GPUs\s*:/m.test(t) && /^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:/m.test(t)) return 0.85;
    return /^\s+Product Name\s+:/m.test(t) && /^\s+(?:Bus Id|GPU UUID)\s+:/m.test(t) ? 0.7 : 0;
  },
  parse: parseNvidiaSmiQ,
  findings(f, text) {
    const s = scanNvidiaSmiQ(text);
    let lines: string[] | undefined;
    const where = (h: { line: number }): string => ((lines ??= logLines(text))[h.line - 1] ?? '').trim();
    const d21 = s.hits
      .filter((h) => h.rule === 'D21')
      .map((h) => ({
        line: h.line,
        text: `GPU ${h.gpu}: ${h.field}: ${h.value}${f.format === 'xml' ? `  (${where(h)})` : ''}`,
      }));
    const d23 = s.hits
      .filter((h) => h.rule === 'D23')
      .map((h) => ({ line: h.line, text: `GPU ${h.gpu}: MIG Mode Current: ${h.value}`, gpu: h.gpu }));
    const d13 = f.errors.some((e) => SMI_DRIVER_ERROR.test(e)) ? d13NvidiaDriver(smiDriverHits(text)) : undefined;
    // One D26 hit per GPU, with every active reason's line.
    const d26 = new Map<string, D26Hit & { reasons: EventReason[] }>();
    for (const h of s.hits.filter((x) => x.rule === 'D26')) {
      const reason = reasonFromName(h.field);
      if (!reason) continue;
      const ev = `line ${h.line}: ${where(h)}`;
      const g = d26.get(h.gpu);
      if (g) {
        g.reasons.push(reason);
        g.evidence.push(ev);
      } else d26.set(h.gpu, { gpu: h.gpu, reasons: [reason], evidence: [ev], line: h.line });
    }
    return [...smiFindings(d13, d21, d23), ...defined([d26ClockEvents([...d26.values()])])];
  },
  summary(f) {
    const rows = smiHeaderRows(f);
    const ecc = f.gpus.map((g) => g.eccMode?.current).filter((x) => x);
    if (ecc.length > 0) rows.push(['ECC', [...new Set(ecc)].join(', ')]);
    const mig = f.gpus.map((g) => g.migMode?.current).filter((x) => x);
    if (mig.length > 0) rows.push(['MIG', [...new Set(mig)].join(', ')]);
    rows.push(['format', f.format]);
    return rows;
  },
};

// ---------------------------------------------------------------- dmon / pmon

export const nvidiaSmiDmon: KindDef<NvidiaSmiDmonFacts> = {
  kind: 'nvidia-smi-dmon',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!t.includes('gpu')) return 0;
    // Space-aligned columns, or `--format csv` (`#gpu, pwr, …` / `#Idx, W, …`).
    if (/^#\s*(?:Date[\s,]+Time[\s,]+)?gpu[\s,]+\S/m.test(t) && /^#\s*(?:\S+\s+\S+\s+)?Idx\b/m.test(t)) return 0.95;
    return /^#\s*gpu[\s,]+(?:pwr|sm|pid)\b/m.test(t) ? 0.8 : 0;
  },
  parse: parseNvidiaSmiDmon,
  findings: () => [],
  summary(f) {
    return [
      ['mode', f.mode ?? '?'],
      ['columns', f.columns.join(' ')],
      ['samples', String(f.rows.length)],
      ['GPUs', f.gpus.join(', ') || '?'],
    ];
  },
};
