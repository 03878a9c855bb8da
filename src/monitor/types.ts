/**
 * What the monitor measures, in the JSON shape `monitor --once --json` prints (docs/DESIGN.md, version 1)
 * plus the fields the screen and the thresholds need (processes, RDMA split, event reasons, alerts).
 * Every field the contract names is always present; values a host cannot report are `null`.
 */

export interface GpuProcess {
  pid: number;
  name: string;
  memUsedMiB: number | null;
}

export interface GpuReading {
  index: number;
  name: string;
  uuid: string;
  utilPct: number | null;
  memUsedMiB: number | null;
  memTotalMiB: number | null;
  tempC: number | null;
  powerW: number | null;
  powerCapW: number | null;
  smClockMHz: number | null;
  smClockMaxMHz: number | null;
  pstate: string | null;
  /** clocks_event_reasons.active as a number (bit meanings in thresholds.ts); null when unsupported. */
  eventReasons: number | null;
  processes: GpuProcess[];
}

export interface PortReading {
  netdev: string;
  rdmaDevice: string | null;
  /** Negotiated speed; null while the link is down. */
  speedGbps: number | null;
  up: boolean;
  /** false: the interface is administratively down (not brought up yet), as opposed to a lost link. */
  adminUp: boolean | null;
  /** Everything the port sent/received: netdev (kernel) bytes plus RDMA bytes, which bypass the kernel. */
  txGbps: number | null;
  rxGbps: number | null;
  rdmaTxGbps: number | null;
  rdmaRxGbps: number | null;
  /** Priority ("0"–"7") → PFC pause frames per second; only priorities that moved or are configured. */
  pauseRxPerSec: Record<string, number>;
  pauseTxPerSec: Record<string, number>;
  discardsPerSec: number | null;
  outOfBufferPerSec: number | null;
}

export interface VllmReading {
  url: string;
  running: number | null;
  waiting: number | null;
  generationTokensPerSec: number | null;
  promptTokensPerSec: number | null;
  kvCacheUsagePct: number | null;
  /** Mean time to first token over the last interval (from the histogram's sum/count deltas), ms. */
  ttftMs: number | null;
}

export type AlertKind = 'pause-storm' | 'discards' | 'thermal' | 'power' | 'xid' | 'port-speed' | 'port-down' | 'stale';

export interface Alert {
  kind: AlertKind;
  /** What it concerns: "gpu3", "ens1f0", or the host itself. */
  subject: string;
  message: string;
  severity: 'warn' | 'fail';
}

export interface HostSample {
  name: string;
  /** No fresh data within the stale bound (the host stopped answering; the sampler reconnects). */
  stale: boolean;
  /** When the newest data arrived (ISO time); null before the first. */
  updated: string | null;
  /** Why the host is stale or a sampler failed (connection lost, nvidia-smi missing …). */
  error: string | null;
  /** Why there are no GPU readings (nvidia-smi missing or failing), shown on the GPU table's line. */
  gpuError?: string | null;
  gpus: GpuReading[];
  ports: PortReading[];
  vllm: VllmReading | null;
  /** Xid lines seen in the kernel log since the monitor started (newest last, at most 5). */
  xids: string[];
  alerts: Alert[];
}

export interface MonitorSample {
  version: 1;
  time: string;
  hosts: HostSample[];
}

/** Names of the history series the monitor keeps per host (SeriesBook keys). */
export const seriesKey = {
  gpu: (index: number, what: 'util' | 'mem' | 'temp' | 'power' | 'sm') => `gpu${index}.${what}`,
  port: (netdev: string, what: 'tx' | 'rx' | 'pause' | 'discards') => `port:${netdev}.${what}`,
  vllm: (what: 'tokens' | 'running' | 'waiting' | 'kv' | 'ttft') => `vllm.${what}`,
} as const;

/**
 * What the monitor screen draws, published once per sample: the newest sample and, per host, the
 * history of every series at the chosen timebase (oldest first, null = no data in that bucket).
 */
export interface MonitorFrame {
  sample: MonitorSample;
  timebase: import('./series.js').Timebase;
  history: Record<string, Record<string, (number | null)[]>>;
  source: 'live' | 'replay';
  /** Replay position (1-based sample number) and total, when playing a recording. */
  replay: { position: number; total: number; file: string } | null;
  intervalMs: number;
}
