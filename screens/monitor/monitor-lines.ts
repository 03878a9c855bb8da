/**
 * Pure line formatting for the live monitor: bars, sparklines, numbers and one row per GPU, port,
 * vLLM server, process group and alert. Every row builder returns exactly `width` columns (cut,
 * never wrapped), so the view's geometry cannot change with the data.
 */
import type { Alert, GpuReading, PortReading, VllmReading } from '../../src/monitor/types.js';
import { seriesKey } from '../../src/monitor/types.js';
import { fit } from '../format.js';

/** One host's history: series key → points, oldest first (null = a bucket without data). */
export type History = Record<string, (number | null)[]>;

export type GpuMetric = 'util' | 'mem' | 'power' | 'temp' | 'sm';
/** The order `s` cycles the GPU rows' sparkline through. */
export const GPU_METRICS: readonly GpuMetric[] = ['util', 'mem', 'power', 'temp', 'sm'];

export function nextMetric(m: GpuMetric): GpuMetric {
  return GPU_METRICS[(GPU_METRICS.indexOf(m) + 1) % GPU_METRICS.length] ?? 'util';
}

const NONE = '—';
const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
const LEVELS = ' ▁▂▃▄▅▆▇█';

/** A horizontal bar `▕███▍   ▏` of exactly `width` columns (caps included), in eighths of a cell. */
export function bar(value: number | null, max: number, width: number): string {
  if (width < 3) return fit('', width);
  const inner = width - 2;
  if (value === null || !Number.isFinite(value) || !(max > 0)) return `▕${'·'.repeat(inner)}▏`;
  const eighths = Math.round(Math.min(1, Math.max(0, value / max)) * inner * 8);
  const body = '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
  return `▕${body}${' '.repeat(inner - Array.from(body).length)}▏`;
}

/**
 * The last `width` points on a fixed scale 0..max (a scale that moved with the data would make a
 * flat line look like noise). Zero is blank, anything above zero at least ▁, a gap (null) is `·`;
 * fewer points than the width leave blanks on the left, so "now" is always the right edge.
 */
export function sparkline(points: ReadonlyArray<number | null>, max: number, width: number): string {
  if (width <= 0) return '';
  const shown = points.slice(Math.max(0, points.length - width));
  const cells = shown.map((v) => {
    if (v === null || !Number.isFinite(v)) return '·';
    if (v <= 0 || !(max > 0)) return ' ';
    return LEVELS[Math.max(1, Math.min(8, Math.round((v / max) * 8)))] ?? '█';
  });
  return ' '.repeat(width - cells.length) + cells.join('');
}

// Numbers: a missing value is always "—", so a column never shows a made-up zero.
export const gbps = (v: number | null): string => (v === null ? NONE : v.toFixed(1));
export const gib = (mib: number | null): string => (mib === null ? NONE : (mib / 1024).toFixed(1));
export const watts = (w: number | null): string => (w === null ? NONE : `${Math.round(w)}W`);
export const celsius = (t: number | null): string => (t === null ? NONE : `${Math.round(t)}°C`);
export const mhz = (f: number | null): string => (f === null ? NONE : `${Math.round(f)}MHz`);
export const pct = (v: number | null): string => (v === null ? NONE : `${Math.round(v)}%`);

/** Events per second, compact: 0, 3.5, 120, 1.2k, 35k, 1.2M. */
export function rate(v: number | null): string {
  if (v === null) return NONE;
  if (v < 10) return Number.isInteger(v) ? String(v) : v.toFixed(1);
  if (v < 1000) return String(Math.round(v));
  if (v < 1e6) return `${(v / 1e3).toFixed(v < 1e4 ? 1 : 0)}k`;
  return `${(v / 1e6).toFixed(1)}M`;
}

/** Local wall-clock time HH:MM:SS of an ISO timestamp. */
export function clock(iso: string | null): string {
  if (!iso) return NONE;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return NONE;
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

// ── Tables ──────────────────────────────────────────────────────────────────────────────────────
// A table is a list of columns, each with a width and a rank (0 = kept longest). A narrow column
// keeps ranks in order until the next one does not fit (a strict order, so what disappears first is
// always the same); the flexible column (the sparkline) takes whatever is left. Rows and the header
// use the same choice, so they line up at every width.

interface Column {
  key: string;
  width: number;
  rank: number;
  align?: 'left' | 'right';
  /** Minimum width of the one flexible column; it grows into the leftover space. */
  flex?: boolean;
}

export function chooseColumns(cols: ReadonlyArray<Column>, width: number): Map<string, number> {
  const chosen = new Set<string>();
  let used = 0;
  for (const c of [...cols].sort((a, b) => a.rank - b.rank)) {
    const need = c.width + (used > 0 ? 1 : 0);
    if (used + need > width) break;
    chosen.add(c.key);
    used += need;
  }
  const widths = new Map<string, number>();
  for (const c of cols) if (chosen.has(c.key)) widths.set(c.key, c.flex ? c.width + (width - used) : c.width);
  return widths;
}

function renderRow(cols: ReadonlyArray<Column>, cells: Record<string, string>, width: number): string {
  const widths = chooseColumns(cols, width);
  const parts: string[] = [];
  for (const c of cols) {
    const w = widths.get(c.key);
    if (w === undefined) continue;
    const text = cells[c.key] ?? '';
    const n = Array.from(text).length;
    parts.push(n > w ? fit(text, w) : c.align === 'right' ? ' '.repeat(w - n) + text : text + ' '.repeat(w - n));
  }
  return fit(parts.join(' '), width);
}

/** Mark in front of a row an alert concerns: colour is not always there (NO_COLOR, screenshots). */
export function severityMark(s: Alert['severity'] | null): string {
  return s === 'fail' ? '✘' : s === 'warn' ? '!' : ' ';
}

/** The worst severity of the alerts about `subject` (null when none). */
export function severityOf(alerts: ReadonlyArray<Alert>, subject: string): Alert['severity'] | null {
  let worst: Alert['severity'] | null = null;
  for (const a of alerts) {
    if (a.subject !== subject) continue;
    if (a.severity === 'fail') return 'fail';
    worst = 'warn';
  }
  return worst;
}

// GPU table. Ranks: index and util first, then memory and temperature, power, the sparkline, the
// bar, and the SM clock last (the one value an operator rarely needs at a glance).
const GPU_COLS: Column[] = [
  { key: 'mark', width: 1, rank: 0 },
  { key: 'idx', width: 2, rank: 0, align: 'right' },
  { key: 'bar', width: 10, rank: 4 },
  { key: 'util', width: 4, rank: 0, align: 'right' },
  { key: 'mem', width: 10, rank: 1, align: 'right' },
  { key: 'temp', width: 4, rank: 1, align: 'right' },
  { key: 'power', width: 8, rank: 2, align: 'right' },
  { key: 'sm', width: 7, rank: 5, align: 'right' },
  { key: 'spark', width: 8, rank: 3, flex: true },
];

/** The fixed top of each metric's sparkline scale. */
export function gpuScale(gpu: GpuReading, metric: GpuMetric): number {
  switch (metric) {
    case 'util':
    case 'mem':
      return 100;
    case 'temp':
      return 100;
    case 'power':
      return gpu.powerCapW ?? 350;
    case 'sm':
      return gpu.smClockMaxMHz ?? 2520;
  }
}

export function gpuHeader(width: number, metric: GpuMetric, timebase: string): string {
  return renderRow(
    GPU_COLS,
    {
      idx: '#',
      bar: '',
      util: 'util',
      mem: 'mem GiB',
      temp: 'temp',
      power: 'power',
      sm: 'SM',
      spark: `${metric} ${timebase}`,
    },
    width,
  );
}

export function gpuRow(
  gpu: GpuReading,
  history: History,
  width: number,
  metric: GpuMetric = 'util',
  severity: Alert['severity'] | null = null,
): string {
  const w = chooseColumns(GPU_COLS, width).get('spark') ?? 0;
  const mem = gpu.memUsedMiB === null ? NONE : `${gib(gpu.memUsedMiB)}/${gib(gpu.memTotalMiB)}`;
  return renderRow(
    GPU_COLS,
    {
      mark: severityMark(severity),
      idx: String(gpu.index),
      bar: bar(gpu.utilPct, 100, 10),
      util: pct(gpu.utilPct),
      mem,
      temp: celsius(gpu.tempC),
      power: gpu.powerW === null ? NONE : `${Math.round(gpu.powerW)}/${watts(gpu.powerCapW)}`,
      sm: mhz(gpu.smClockMHz),
      spark: sparkline(history[seriesKey.gpu(gpu.index, metric)] ?? [], gpuScale(gpu, metric), w),
    },
    width,
  );
}

// Port table. Ranks: name, link and tx first, rx, pause, discards, the tx sparkline, the RDMA name.
const PORT_COLS: Column[] = [
  { key: 'mark', width: 1, rank: 0 },
  { key: 'netdev', width: 9, rank: 0 },
  { key: 'rdma', width: 8, rank: 5 },
  { key: 'link', width: 4, rank: 0, align: 'right' },
  { key: 'tx', width: 9, rank: 0, align: 'right' },
  { key: 'rx', width: 9, rank: 1, align: 'right' },
  { key: 'pause', width: 11, rank: 2 },
  { key: 'disc', width: 6, rank: 3, align: 'right' },
  { key: 'spark', width: 8, rank: 4, flex: true },
];

export function portHeader(width: number, timebase: string): string {
  return renderRow(
    PORT_COLS,
    {
      netdev: 'port',
      rdma: 'rdma',
      link: 'link',
      tx: 'tx Gb/s %',
      rx: 'rx Gb/s %',
      pause: 'pause rx/tx',
      disc: 'disc/s',
      spark: `tx ${timebase}`,
    },
    width,
  );
}

/** Gb/s and the share of the negotiated line rate: " 23.1  92%". */
function throughput(v: number | null, speed: number | null): string {
  const share = v !== null && speed ? pct((v / speed) * 100) : '';
  return `${gbps(v)} ${share.padStart(4)}`;
}

/** Pause frames per second by priority, received/sent: "p3 1.2k/0" (the peer's and our congestion). */
export function pauseText(port: PortReading): string {
  const prios = [...new Set([...Object.keys(port.pauseRxPerSec), ...Object.keys(port.pauseTxPerSec)])].sort();
  const moving = prios.filter((p) => (port.pauseRxPerSec[p] ?? 0) + (port.pauseTxPerSec[p] ?? 0) > 0);
  const shown = moving.length > 0 ? moving : prios.slice(0, 1);
  if (shown.length === 0) return '0';
  return shown.map((p) => `p${p} ${rate(port.pauseRxPerSec[p] ?? 0)}/${rate(port.pauseTxPerSec[p] ?? 0)}`).join(' ');
}

export function portRow(
  port: PortReading,
  history: History,
  width: number,
  severity: Alert['severity'] | null = null,
): string {
  const w = chooseColumns(PORT_COLS, width).get('spark') ?? 0;
  return renderRow(
    PORT_COLS,
    {
      mark: severityMark(severity),
      netdev: port.netdev,
      rdma: port.rdmaDevice ?? NONE,
      link: !port.up ? 'down' : port.speedGbps === null ? 'up' : `${port.speedGbps}G`,
      tx: throughput(port.txGbps, port.speedGbps),
      rx: throughput(port.rxGbps, port.speedGbps),
      pause: pauseText(port),
      disc: rate(port.discardsPerSec),
      spark: sparkline(history[seriesKey.port(port.netdev, 'tx')] ?? [], port.speedGbps ?? 25, w),
    },
    width,
  );
}

/**
 * The vLLM block: the numbers, then generated tokens/s over time. Tokens/s has no natural ceiling,
 * so its scale is the largest value in view, printed at the end.
 */
export function vllmLines(v: VllmReading, history: History, width: number): [string, string] {
  const ttft = v.ttftMs === null ? NONE : `${Math.round(v.ttftMs)}ms`;
  const parts = [
    `run ${v.running ?? NONE}`,
    `wait ${v.waiting ?? NONE}`,
    `gen ${rate(v.generationTokensPerSec)} tok/s`,
    `KV ${pct(v.kvCacheUsagePct)}`,
    `TTFT ${ttft}`,
  ];
  // Two spaces between the numbers when they fit; one when the column is narrow (TTFT must show).
  const roomy = `vLLM  ${parts.join('  ')}`;
  const numbers =
    Array.from(roomy).length <= width ? `${roomy}  ${v.url}` : `vLLM ${parts.join(' ').replace('gen ', '')} ${v.url}`;
  const points = history[seriesKey.vllm('tokens')] ?? [];
  const max = Math.max(1, ...points.filter((p): p is number => p !== null));
  const label = 'tok/s ';
  const tail = ` max ${rate(max)}`;
  const spark = sparkline(points, max, Math.max(0, width - label.length - tail.length));
  return [fit(numbers, width), fit(label + spark + tail, width)];
}

/** GPU indexes as ranges: [0..7] → "gpu0–7", [0,1,2,5] → "gpu0–2,5". */
export function gpuRange(indexes: ReadonlyArray<number>): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? 0) + 1) j++;
    parts.push(j > i ? `${sorted[i]}–${sorted[j]}` : String(sorted[i]));
    i = j;
  }
  return `gpu${parts.join(',')}`;
}

/** The GPUs' processes grouped by name: "VllmWorker ×8 · 38.1 GiB each · gpu0–7". */
export function processLine(gpus: ReadonlyArray<GpuReading>, width: number): string {
  const groups = new Map<string, { count: number; mem: number[]; gpus: number[] }>();
  for (const g of gpus) {
    for (const p of g.processes) {
      // nvidia-smi prints the executable's full path; the last part is what tells them apart. Workers
      // of one job differ only by a trailing rank ("VLLM::EngineCore_DP3", "ray::RayWorkerWrapper-2"):
      // one group, with the rank dropped.
      const base = p.name.split('/').pop() || p.name;
      const name = base.replace(/(?:[_-](?:DP|TP|PP|rank)?\d+|(?:DP|TP|PP)\d+)$/, '') || base;
      const e = groups.get(name) ?? { count: 0, mem: [], gpus: [] };
      e.count++;
      if (p.memUsedMiB !== null) e.mem.push(p.memUsedMiB);
      e.gpus.push(g.index);
      groups.set(name, e);
    }
  }
  if (groups.size === 0) return fit('processes: none on the GPUs', width);
  const text = [...groups]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([name, e]) => {
      const lo = Math.min(...e.mem);
      const hi = Math.max(...e.mem);
      const mem =
        e.mem.length === 0
          ? ''
          : gib(lo) === gib(hi)
            ? ` · ${gib(lo)} GiB${e.count > 1 ? ' each' : ''}`
            : ` · ${gib(lo)}–${gib(hi)} GiB`;
      return `${name} ×${e.count}${mem} · ${gpuRange(e.gpus)}`;
    })
    .join('  ');
  return fit(text, width);
}

/** One line per alert, failures first: "✘ gpu3 thermal — 92 °C, HW slowdown". */
export function alertLines(
  alerts: ReadonlyArray<Alert>,
  width: number,
): Array<{ text: string; severity: Alert['severity'] }> {
  const ordered = [...alerts.filter((a) => a.severity === 'fail'), ...alerts.filter((a) => a.severity !== 'fail')];
  return ordered.map((a) => ({
    severity: a.severity,
    text: fit(`${severityMark(a.severity)} ${a.subject} ${a.kind} — ${a.message}`, width),
  }));
}
