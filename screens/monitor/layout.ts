/**
 * The monitor's geometry, as pure functions: which lines a host's column shows in a given height,
 * the host picker, and how the body splits into status line, picker and columns. The view only maps
 * these lines to <Text>, so "never taller than the terminal" is decided (and tested) here.
 */
import type { Alert, HostSample, MonitorFrame } from '../../src/monitor/types.js';
import { fit } from '../format.js';
import {
  alertLines,
  clock,
  gpuHeader,
  gpuRow,
  portHeader,
  portRow,
  processLine,
  severityMark,
  severityOf,
  vllmLines,
  type GpuMetric,
  type History,
} from './monitor-lines.js';

export interface ColumnLine {
  key: string;
  text: string;
  color?: string;
  dim?: boolean;
  bold?: boolean;
}

export const SEVERITY_COLOR: Record<Alert['severity'], string> = { fail: 'red', warn: 'yellow' };

export interface ColumnOptions {
  width: number;
  height: number;
  metric: GpuMetric;
  timebase: string;
  /** The sample's time, to say how old a host's data is. */
  now: string;
}

function worst(alerts: ReadonlyArray<Alert>): Alert['severity'] | null {
  return alerts.some((a) => a.severity === 'fail') ? 'fail' : alerts.length > 0 ? 'warn' : null;
}

/** Alerts that concern neither a GPU nor a port of the host: they colour the host's name. */
export function hostAlerts(host: HostSample): Alert[] {
  const parts = new Set<string>([
    ...host.gpus.map((g) => `gpu${g.index}`),
    ...host.ports.flatMap((p) => [p.netdev, ...(p.rdmaDevice ? [p.rdmaDevice] : [])]),
  ]);
  return host.alerts.filter((a) => !parts.has(a.subject));
}

/** A host's status mark and colour: stale beats everything, then its worst alert. */
export function hostStatus(host: HostSample): { mark: string; color: string } {
  if (host.stale) return { mark: '⊘', color: 'magenta' };
  const w = worst(host.alerts);
  return w ? { mark: severityMark(w), color: SEVERITY_COLOR[w] } : { mark: '✔', color: 'green' };
}

function headerText(host: HostSample, now: string): string {
  const { mark } = hostStatus(host);
  if (host.stale)
    return `${mark} ${host.name}  STALE — ${host.error ?? 'no fresh data'}${host.updated ? ` · last data ${clock(host.updated)}` : ''}`;
  const age = host.updated ? Math.round((Date.parse(now) - Date.parse(host.updated)) / 1000) : NaN;
  const ago = Number.isFinite(age) && age >= 2 ? ` (${age}s ago)` : '';
  const err = host.error ? ` · ${host.error}` : '';
  return `${mark} ${host.name}  updated ${clock(host.updated)}${ago} · ${host.gpus.length} GPUs · ${host.ports.length} ports${err}`;
}

/**
 * A host's column, at most `height` lines of exactly `width` columns. When the height is short,
 * lines go in this order (first dropped first): the vLLM sparkline, the processes line, alerts
 * after the first (the last line kept says how many more), the ports' then the GPUs' table header,
 * the last alert line (the worst alert, "+N more"); only then are GPU and port rows cut from the
 * bottom, the last line saying how many rows did not fit. A stale host keeps its last values,
 * dimmed, under a STALE header with the error.
 */
export function hostColumnLines(host: HostSample, history: History, o: ColumnOptions): ColumnLine[] {
  const w = Math.max(1, o.width);
  const dim = host.stale;
  const row = (key: string, text: string, severity: Alert['severity'] | null = null): ColumnLine => ({
    key,
    text,
    ...(severity ? { color: SEVERITY_COLOR[severity] } : {}),
    ...(dim ? { dim: true } : {}),
  });
  const hostSev = worst(hostAlerts(host));
  const header: ColumnLine = {
    key: 'header',
    text: fit(headerText(host, o.now), w),
    bold: true,
    ...(host.stale ? { color: 'red' } : hostSev ? { color: SEVERITY_COLOR[hostSev] } : {}),
  };

  const gpus =
    host.gpus.length > 0
      ? host.gpus.map((g) => {
          const sev = severityOf(host.alerts, `gpu${g.index}`);
          return row(`gpu${g.index}`, gpuRow(g, history, w, o.metric, sev), sev);
        })
      : [row('gpu-none', fit(`GPUs: no readings${host.gpuError ? ` — ${host.gpuError}` : ''}`, w))];
  const ports =
    host.ports.length > 0
      ? host.ports.map((p) => {
          const sevs = [severityOf(host.alerts, p.netdev), p.rdmaDevice ? severityOf(host.alerts, p.rdmaDevice) : null];
          const sev = sevs.includes('fail') ? 'fail' : sevs.includes('warn') ? 'warn' : null;
          return row(`port:${p.netdev}`, portRow(p, history, w, sev), sev);
        })
      : [row('port-none', fit('ports: no readings', w))];
  const vllm = host.vllm ? vllmLines(host.vllm, history, w) : null;
  const listed = alertLines(host.alerts, w);
  const alerts =
    listed.length > 0
      ? listed.map((a, i) => row(`alert${i}`, a.text, a.severity))
      : host.stale
        ? // A host that stopped answering has no alerts only because nothing is measured.
          [row('alert0', fit('⊘ no fresh data — the last values seen, dimmed', w))]
        : [{ key: 'alert0', text: fit('✔ no alerts', w), color: 'green' }];

  // Budget: the essential rows first, then the optional lines in the order they are kept.
  let room = o.height - 1 - gpus.length - ports.length - (vllm ? 1 : 0);
  if (room < 0) {
    const essential = [header, ...gpus, ...ports, ...(vllm ? [row('vllm', vllm[0])] : [])];
    if (o.height < 2) return essential.slice(0, Math.max(0, o.height));
    const hidden = essential.length - o.height + 1;
    return [...essential.slice(0, o.height - 1), row('cut', fit(`  … ${hidden} more rows (terminal too short)`, w))];
  }
  const take = (n: number): number => {
    const t = Math.max(0, Math.min(n, room));
    room -= t;
    return t;
  };
  const firstAlert = take(1);
  const gpuHead = take(1);
  const portHead = take(1);
  const moreAlerts = take(alerts.length - 1);
  const processes = take(1);
  const spark = vllm ? take(1) : 0;

  const shownAlerts = firstAlert + moreAlerts;
  let alertRows = alerts.slice(0, shownAlerts);
  if (shownAlerts === 1 && alerts.length > 1) {
    // One line left: the worst alert, saying how many more there are.
    const more = ` (+${alerts.length - 1} more)`;
    const first = listed[0];
    if (first) alertRows = [row('alert0', fit(first.text.trimEnd(), w - more.length) + more, first.severity)];
  } else if (shownAlerts < alerts.length && shownAlerts > 1) {
    // Failures come first, so the first hidden alert is the worst of the hidden ones.
    const hidden = alerts.length - shownAlerts + 1;
    const text = fit(`  … ${hidden} more alert${hidden > 1 ? 's' : ''} (terminal too short)`, w);
    alertRows = [
      ...alerts.slice(0, shownAlerts - 1),
      row('alert-more', text, listed[shownAlerts - 1]?.severity ?? null),
    ];
  }
  const head = (key: string, text: string): ColumnLine => ({ key, text, dim: true });
  return [
    header,
    ...(gpuHead ? [head('gpu-head', gpuHeader(w, o.metric, o.timebase))] : []),
    ...gpus,
    ...(portHead ? [head('port-head', portHeader(w, o.timebase))] : []),
    ...ports,
    ...(vllm ? [row('vllm', vllm[0])] : []),
    ...(vllm && spark ? [row('vllm-spark', vllm[1])] : []),
    ...(processes ? [row('processes', processLine(host.gpus, w))] : []),
    ...alertRows,
  ];
}

export interface PickerItem {
  index: number;
  text: string;
  color: string;
  cursor: boolean;
}

/** The host picker (more than two hosts): status mark, name, and which column shows it. */
export function pickerItems(
  hosts: ReadonlyArray<HostSample>,
  cursor: number,
  left: number,
  right: number,
): PickerItem[] {
  return hosts.map((h, i) => {
    const { mark, color } = hostStatus(h);
    const side = i === left ? ' ◧' : i === right ? ' ◨' : '';
    return { index: i, text: `${mark} ${h.name}${side}`, color, cursor: i === cursor };
  });
}

/** The status line above the columns: source, interval, timebase, sample time, sparkline metric. */
export function statusLine(frame: MonitorFrame, timebase: string, metric: GpuMetric, width: number): string {
  const src =
    frame.source === 'replay' && frame.replay
      ? `replay ${frame.replay.position}/${frame.replay.total} ${frame.replay.file}`
      : frame.source;
  const every = frame.intervalMs >= 1000 ? `${+(frame.intervalMs / 1000).toFixed(1)}s` : `${frame.intervalMs}ms`;
  const tb = frame.timebase === timebase ? frame.timebase : `${frame.timebase} → ${timebase}`;
  return fit(
    `${src} · every ${every} · timebase ${tb} (t) · GPU sparkline ${metric} (s) · sample ${clock(frame.sample.time)}`,
    width,
  );
}

/** Which hosts get a column: left and right when they differ and there are two or more. */
export function shownHosts(count: number, left: number, right: number): number[] {
  if (count === 0) return [];
  const l = Math.min(left, count - 1);
  const r = Math.min(right, count - 1);
  return count > 1 && l !== r ? [l, r] : [l];
}

/** The body's split: status line, the picker when there are more than two hosts, the columns. */
export function monitorLayout(height: number, hostCount: number): { picker: boolean; columnHeight: number } {
  const picker = hostCount > 2;
  return { picker, columnHeight: Math.max(0, height - 1 - (picker ? 1 : 0)) };
}

/**
 * The picker's items that fit one line: from the first, or, when the cursor would fall off the
 * right edge, from the first item that keeps the cursor's item in view (`before` says items were
 * left off on the left).
 */
export function pickerWindow(
  items: ReadonlyArray<PickerItem>,
  width: number,
): { shown: PickerItem[]; before: boolean } {
  const len = (it: PickerItem): number => Array.from(it.text).length + 2;
  const cursor = Math.max(
    0,
    items.findIndex((it) => it.cursor),
  );
  let start = 0;
  const upTo = (s: number): number => 6 + items.slice(s, cursor + 1).reduce((n, it) => n + len(it), 0);
  while (start < cursor && upTo(start) > width) start++;
  return { shown: items.slice(start), before: start > 0 };
}
