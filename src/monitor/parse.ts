/**
 * Parsers for the samplers' streams (scripts.ts): nvidia-smi's CSV lines (noheader, nounits), the
 * compute-apps CSV, the host loop's tagged frames and the Prometheus text vLLM serves. Pure; lines
 * arrive already split and sanitized.
 */
import { GPU_FIELDS } from './scripts.js';
import { eventBits } from '../parse/clock-events.js';
import { toNum } from '../parse/common.js';
import type { GpuProcess, GpuReading } from './types.js';

/** nvidia-smi prints `[N/A]`, `[Not Supported]`, `[Unknown Error]` (or without brackets) for missing values: not numbers. */
function value(s: string | undefined): number | null {
  return toNum(s) ?? null;
}

function text(s: string | undefined): string | null {
  const t = s?.trim();
  return t === undefined || t === '' || t.startsWith('[') ? null : t;
}

/**
 * One `--query-gpu` line in GPU_FIELDS order (plus the event-reasons field when `withReasons`);
 * null when it is not such a line (an error message, a header).
 */
export function parseGpuLine(line: string, withReasons: boolean): Omit<GpuReading, 'processes'> | null {
  const f = line.split(',').map((s) => s.trim());
  const expected = GPU_FIELDS.length + (withReasons ? 1 : 0);
  if (f.length !== expected || !/^\d+$/.test(f[0] ?? '')) return null;
  const at = (name: (typeof GPU_FIELDS)[number]): string | undefined => f[GPU_FIELDS.indexOf(name)];
  return {
    index: Number(f[0]),
    uuid: at('uuid') ?? '',
    name: at('name') ?? '',
    utilPct: value(at('utilization.gpu')),
    memUsedMiB: value(at('memory.used')),
    memTotalMiB: value(at('memory.total')),
    tempC: value(at('temperature.gpu')),
    powerW: value(at('power.draw')),
    powerCapW: value(at('power.limit')),
    smClockMHz: value(at('clocks.sm')),
    smClockMaxMHz: value(at('clocks.max.sm')),
    pstate: text(at('pstate')),
    eventReasons: withReasons ? eventBits(f[GPU_FIELDS.length]) : null,
  };
}

/** nvidia-smi's answer to a field this driver does not know (exit 2): `Field "x" is not a valid field to query.` */
export function isUnknownField(output: string): boolean {
  return /is not a valid field to query/i.test(output);
}

export interface AppRow extends GpuProcess {
  gpuUuid: string;
}

/** One `--query-compute-apps=gpu_uuid,pid,process_name,used_memory` line (noheader, nounits). */
export function parseAppLine(line: string): AppRow | null {
  const f = line.split(',').map((s) => s.trim());
  if (f.length < 4 || !/^(GPU|MIG)-/.test(f[0] ?? '') || !/^\d+$/.test(f[1] ?? '')) return null;
  // A process name may itself contain commas; the memory is the last field.
  return {
    gpuUuid: f[0] as string,
    pid: Number(f[1]),
    name: f.slice(2, -1).join(', ') || '?',
    memUsedMiB: value(f[f.length - 1]),
  };
}

export interface PortCounters {
  netdev: string;
  rdmaDevice: string | null;
  operstate: string;
  /** IFF_UP from the interface flags: false = administratively down (not configured), null = unknown. */
  adminUp: boolean | null;
  speedMbps: number | null;
  txBytes: number | null;
  rxBytes: number | null;
  rxDropped: number | null;
  /** RDMA port counters, in words of 4 octets (InfiniBand PortXmitData semantics). */
  xmitWords: number | null;
  rcvWords: number | null;
  outOfBuffer: number | null;
  /** The filtered `ethtool -S` counters (name → value). */
  ethtool: Record<string, number>;
}

export interface LoopFrame {
  /** Host uptime in seconds when the frame began (the clock rates are computed on). */
  uptime: number | null;
  ports: PortCounters[];
  /** Present in the frames that read them. */
  apps?: AppRow[];
  metrics?: string[];
  xids?: { readable: boolean; lines: string[] };
}

const num = (s: string | undefined): number | null => (s === undefined || s === '-' ? null : value(s));

/** Reads the host loop's stream line by line and hands out each complete frame. */
export class LoopFrameParser {
  private frame: LoopFrame | null = null;
  private block: 'A' | 'M' | 'X' | null = null;
  private ethtoolPort: PortCounters | undefined;

  constructor(private readonly onFrame: (frame: LoopFrame) => void) {}

  line(raw: string): void {
    const line = raw.replace(/\s+$/, '');
    if (line.startsWith('B ') || line === 'B') {
      this.frame = { uptime: num(line.slice(2)), ports: [] };
      this.block = null;
      this.ethtoolPort = undefined;
      return;
    }
    const f = this.frame;
    if (!f) return; // output before the first frame (a login banner) is not ours
    if (this.block) {
      if (line.startsWith(`${this.block}.`)) {
        if (this.block === 'X') f.xids = { readable: line.slice(2).trim() === '1', lines: f.xids?.lines ?? [] };
        this.block = null;
      } else if (this.block === 'A') {
        const row = parseAppLine(line);
        if (row) (f.apps ??= []).push(row);
      } else if (this.block === 'M') (f.metrics ??= []).push(line);
      else (f.xids ??= { readable: true, lines: [] }).lines.push(line);
      return;
    }
    const [tag, ...w] = line.trim().split(/\s+/);
    switch (tag) {
      case 'N': {
        const [netdev, rdma, operstate, speed, tx, rx, dropped, flags] = w;
        if (!netdev) return;
        const speedMbps = num(speed);
        const adminUp = flags && /^0x[0-9a-f]+$/i.test(flags) ? (Number.parseInt(flags, 16) & 0x1) === 1 : null;
        f.ports.push({
          netdev,
          rdmaDevice: rdma && rdma !== '-' ? rdma : null,
          operstate: operstate ?? '-',
          adminUp,
          speedMbps: speedMbps !== null && speedMbps > 0 ? speedMbps : null,
          txBytes: num(tx),
          rxBytes: num(rx),
          rxDropped: num(dropped),
          xmitWords: null,
          rcvWords: null,
          outOfBuffer: null,
          ethtool: {},
        });
        return;
      }
      case 'R': {
        const p = f.ports.find((x) => x.netdev === w[0]);
        if (p) Object.assign(p, { xmitWords: num(w[1]), rcvWords: num(w[2]), outOfBuffer: num(w[3]) });
        return;
      }
      case 'E':
        this.ethtoolPort = f.ports.find((x) => x.netdev === w[0]);
        return;
      case 'A':
      case 'M':
      case 'X':
        if (w.length === 0) {
          this.block = tag;
          if (tag === 'A') f.apps = [];
          if (tag === 'M') f.metrics = [];
          if (tag === 'X') f.xids = { readable: true, lines: [] };
        }
        return;
      case 'Z':
        this.onFrame(f);
        this.frame = null;
        return;
      default: {
        // An `ethtool -S` line: `     rx_prio3_pause: 12`.
        const m = /^\s*([A-Za-z0-9_]+):\s+(\d+)\s*$/.exec(line);
        if (m && this.ethtoolPort) this.ethtoolPort.ethtool[m[1] as string] = Number(m[2]);
      }
    }
  }
}

/**
 * Prometheus text exposition: `name{labels} value [timestamp]`. Sums each metric over its label sets
 * (several engines or models on one host add up); comments and malformed lines are skipped.
 */
export function parsePrometheus(lines: readonly string[]): Map<string, { sum: number; count: number }> {
  const out = new Map<string, { sum: number; count: number }>();
  for (const line of lines) {
    if (line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line.trim());
    if (!m) continue;
    const v = m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]);
    if (!Number.isFinite(v)) continue;
    const e = out.get(m[1] as string) ?? { sum: 0, count: 0 };
    e.sum += v;
    e.count++;
    out.set(m[1] as string, e);
  }
  return out;
}
