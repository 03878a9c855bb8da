/**
 * Recordings: `monitor --record FILE` appends one sample per line (JSONL, docs/DESIGN.md's shape).
 * `--replay FILE` reads them back — every line validated, a bad one named by line number and field —
 * and plays them at the pace they were recorded, through the same history and frames as live data.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { MonitorHistory } from './session.js';
import type { Timebase } from './series.js';
import type { MonitorFrame, MonitorSample } from './types.js';

const n = z.number().nullable();
const gpu = z.object({
  index: z.number().int(),
  name: z.string(),
  uuid: z.string().default(''),
  utilPct: n,
  memUsedMiB: n,
  memTotalMiB: n,
  tempC: n,
  powerW: n,
  powerCapW: n,
  smClockMHz: n,
  smClockMaxMHz: n.default(null),
  pstate: z.string().nullable().default(null),
  eventReasons: n.default(null),
  processes: z.array(z.object({ pid: z.number(), name: z.string(), memUsedMiB: n })).default([]),
});
const rates = z.record(z.string(), z.number());
const port = z.object({
  netdev: z.string(),
  rdmaDevice: z.string().nullable(),
  speedGbps: n,
  up: z.boolean(),
  adminUp: z.boolean().nullable().default(null),
  txGbps: n,
  rxGbps: n,
  rdmaTxGbps: n.default(null),
  rdmaRxGbps: n.default(null),
  pauseRxPerSec: rates,
  pauseTxPerSec: rates,
  discardsPerSec: n,
  outOfBufferPerSec: n.default(null),
});
const vllm = z.object({
  url: z.string(),
  running: n,
  waiting: n,
  generationTokensPerSec: n,
  promptTokensPerSec: n.default(null),
  kvCacheUsagePct: n,
  ttftMs: n,
});
const alert = z.object({
  kind: z.enum(['pause-storm', 'discards', 'thermal', 'power', 'xid', 'port-speed', 'port-down', 'stale']),
  subject: z.string(),
  message: z.string(),
  severity: z.enum(['warn', 'fail']),
});
export const sampleSchema = z.object({
  version: z.literal(1),
  time: z.string().refine((t) => !Number.isNaN(Date.parse(t)), 'an ISO time'),
  hosts: z.array(
    z.object({
      name: z.string(),
      stale: z.boolean(),
      updated: z.string().nullable().default(null),
      error: z.string().nullable().default(null),
      gpuError: z.string().nullable().default(null),
      gpus: z.array(gpu),
      ports: z.array(port),
      vllm: vllm.nullable(),
      xids: z.array(z.string()).default([]),
      alerts: z.array(alert).default([]),
    }),
  ),
});

export class RecordingError extends Error {
  override name = 'RecordingError';
}

export async function readRecording(file: string): Promise<MonitorSample[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new RecordingError(
      `--replay ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  const samples: MonitorSample[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // A recording cut off by a crash ends in a partial line: keep what came before it.
      if (i >= lines.length - 2 && samples.length > 0) break;
      throw new RecordingError(
        `--replay ${file} line ${i + 1}: not JSON; a recording has one monitor sample per line (monitor --record FILE writes them)`,
      );
    }
    const parsed = sampleSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RecordingError(
        `--replay ${file} line ${i + 1}: not a version-1 monitor sample: ${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}`,
      );
    }
    samples.push(parsed.data as MonitorSample);
  }
  if (samples.length === 0) throw new RecordingError(`--replay ${file}: no samples in it`);
  return samples;
}

/** Plays samples at their recorded pace (gaps over 5 s are shortened to 1 s) into frames. */
export class ReplaySource {
  private readonly history = new MonitorHistory();
  private position = 0;
  private timer: NodeJS.Timeout | undefined;
  private timebase: Timebase = '1m';
  private readonly listeners = new Set<(frame: MonitorFrame) => void>();
  readonly intervalMs: number;

  constructor(
    readonly samples: readonly MonitorSample[],
    readonly file: string,
  ) {
    const times = samples.map((s) => Date.parse(s.time));
    const gaps = times
      .slice(1)
      .map((t, i) => t - (times[i] as number))
      .filter((g) => g > 0)
      .sort((a, b) => a - b);
    this.intervalMs = gaps[Math.floor(gaps.length / 2)] ?? 1_000;
  }

  subscribe(listener: (frame: MonitorFrame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(): void {
    this.step();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  setTimebase(timebase: Timebase): void {
    this.timebase = timebase;
    this.publish();
  }

  private step(): void {
    const sample = this.samples[this.position];
    if (!sample) return;
    this.history.add(sample);
    this.position++;
    this.publish();
    const next = this.samples[this.position];
    if (!next) return;
    const gap = Date.parse(next.time) - Date.parse(sample.time);
    this.timer = setTimeout(() => this.step(), gap > 0 && gap <= 5_000 ? gap : 1_000);
  }

  private publish(): void {
    const frame = this.history.frame(this.timebase, this.intervalMs, 'replay', {
      position: this.position,
      total: this.samples.length,
      file: this.file,
    });
    if (frame) for (const l of this.listeners) l(frame);
  }
}
