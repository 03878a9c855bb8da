/**
 * The monitor over a cluster: one HostSampler per host, a tick every interval that assembles the
 * sample (docs/DESIGN.md shape), adds alerts, extends the history and hands frames to listeners (the TUI
 * store, a recorder, the plain printer). A recording played back goes through the same frames.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import type { ClusterConfig } from '../config/schema.js';
import type { Host } from '../transport/types.js';
import { HostSampler } from './host-sampler.js';
import { SeriesBook, type Timebase } from './series.js';
import { hostAlerts } from './thresholds.js';
import { seriesKey, type HostSample, type MonitorFrame, type MonitorSample } from './types.js';

export interface MonitorOptions {
  intervalMs: number;
  config?: ClusterConfig;
  /** JSONL file every sample is appended to. */
  recordFile?: string;
  now?: () => number;
  staleMs?: number;
}

type Listener = (frame: MonitorFrame) => void;

/** History and frames from samples, live or replayed. */
export class MonitorHistory {
  private readonly books = new Map<string, SeriesBook>();
  private last: MonitorSample | null = null;

  add(sample: MonitorSample): void {
    const t = Date.parse(sample.time);
    for (const h of sample.hosts) {
      let book = this.books.get(h.name);
      if (!book) this.books.set(h.name, (book = new SeriesBook()));
      const v = (x: number | null | undefined): number | null => (h.stale || x === undefined ? null : x);
      for (const g of h.gpus) {
        book.push(seriesKey.gpu(g.index, 'util'), t, v(g.utilPct));
        book.push(
          seriesKey.gpu(g.index, 'mem'),
          t,
          v(g.memUsedMiB !== null && g.memTotalMiB ? (100 * g.memUsedMiB) / g.memTotalMiB : null),
        );
        book.push(seriesKey.gpu(g.index, 'temp'), t, v(g.tempC));
        book.push(seriesKey.gpu(g.index, 'power'), t, v(g.powerW));
        book.push(seriesKey.gpu(g.index, 'sm'), t, v(g.smClockMHz));
      }
      for (const p of h.ports) {
        book.push(seriesKey.port(p.netdev, 'tx'), t, v(p.txGbps));
        book.push(seriesKey.port(p.netdev, 'rx'), t, v(p.rxGbps));
        const pauses = [...Object.values(p.pauseRxPerSec), ...Object.values(p.pauseTxPerSec)].reduce(
          (a, b) => a + b,
          0,
        );
        book.push(seriesKey.port(p.netdev, 'pause'), t, v(pauses));
        book.push(seriesKey.port(p.netdev, 'discards'), t, v(p.discardsPerSec));
      }
      if (h.vllm) {
        book.push(seriesKey.vllm('tokens'), t, v(h.vllm.generationTokensPerSec));
        book.push(seriesKey.vllm('running'), t, v(h.vllm.running));
        book.push(seriesKey.vllm('waiting'), t, v(h.vllm.waiting));
        book.push(seriesKey.vllm('kv'), t, v(h.vllm.kvCacheUsagePct));
        book.push(seriesKey.vllm('ttft'), t, v(h.vllm.ttftMs));
      }
    }
    this.last = sample;
  }

  frame(
    timebase: Timebase,
    intervalMs: number,
    source: MonitorFrame['source'],
    replay: MonitorFrame['replay'] = null,
  ): MonitorFrame | null {
    if (!this.last) return null;
    const history: MonitorFrame['history'] = {};
    for (const [host, book] of this.books) {
      const series: Record<string, (number | null)[]> = {};
      for (const key of book.keys()) series[key] = book.points(key, timebase);
      history[host] = series;
    }
    return { sample: this.last, timebase, history, source, replay, intervalMs };
  }
}

export class MonitorSession {
  readonly samplers: HostSampler[];
  private readonly history = new MonitorHistory();
  private readonly listeners = new Set<Listener>();
  private timer: NodeJS.Timeout | undefined;
  /** The tick schedule: samples are stamped with their slot, not with the timer's jitter. */
  private nextTickAt = 0;
  private stopped = false;
  private timebase: Timebase = '1m';
  private record: WriteStream | undefined;
  private readonly dataWaiters = new Set<() => void>();
  private readonly now: () => number;
  private latest: MonitorSample | null = null;

  constructor(
    hosts: readonly Host[],
    private readonly opts: MonitorOptions,
  ) {
    this.now = opts.now ?? Date.now;
    const config = opts.config;
    this.samplers = hosts.map((host) => {
      const hc = config?.hosts.find((h) => h.name === host.name);
      return new HostSampler(host, {
        intervalMs: opts.intervalMs,
        vllmPort: config?.vllm.port ?? 8000,
        rocePriority: config?.qos.priority ?? 3,
        ...(hc?.fabricPorts?.length ? { netdevs: hc.fabricPorts } : {}),
        ...(opts.staleMs !== undefined ? { staleMs: opts.staleMs } : {}),
        now: this.now,
        onData: () => {
          for (const w of this.dataWaiters) w();
        },
      });
    });
  }

  start(): void {
    if (this.opts.recordFile) this.record = createWriteStream(this.opts.recordFile, { flags: 'a', mode: 0o600 });
    for (const s of this.samplers) s.start();
    this.nextTickAt = this.now() + this.opts.intervalMs;
    this.schedule();
  }

  /**
   * One sample per slot of a fixed schedule. A timer drifts and jitters (two samples in one 1 s
   * history bucket, none in the next, shows as a gap); stamping each sample with its slot keeps the
   * buckets regular, and a late timer (a busy event loop) skips the slots it missed.
   */
  private schedule(): void {
    this.timer = setTimeout(
      () => {
        const slot = this.nextTickAt;
        const now = this.now();
        const behind = Math.max(0, Math.floor((now - slot) / this.opts.intervalMs));
        this.nextTickAt = slot + (behind + 1) * this.opts.intervalMs;
        this.tick(slot + behind * this.opts.intervalMs);
        if (!this.stopped) this.schedule();
      },
      Math.max(0, this.nextTickAt - this.now()),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.all(this.samplers.map((s) => s.stop()));
    const rec = this.record;
    this.record = undefined;
    if (rec) await new Promise<void>((resolve) => rec.end(resolve));
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  setTimebase(timebase: Timebase): void {
    this.timebase = timebase;
    this.publish();
  }

  /** Every host delivered complete data (or is stale). */
  get ready(): boolean {
    return this.samplers.every((s) => s.ready || s.stale);
  }

  /** Assembles the current sample (alerts included) without recording it. */
  sample(at = this.now()): MonitorSample {
    const raw = this.samplers.map((s) => s.snapshot());
    const speeds = raw.flatMap((h) => h.ports.map((p) => p.speedGbps ?? 0));
    const expected = speeds.length ? Math.max(...speeds) || null : null;
    const hosts: HostSample[] = raw.map((h) => ({ ...h, alerts: hostAlerts(h, expected) }));
    return { version: 1, time: new Date(at).toISOString(), hosts };
  }

  /** Waits until every host is ready (or the deadline passes) and returns one complete sample. */
  async once(deadlineMs: number): Promise<MonitorSample> {
    if (!this.ready) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(deadline);
          clearInterval(staleCheck);
          this.dataWaiters.delete(check);
          resolve();
        };
        const check = (): void => {
          if (this.ready) done();
        };
        const deadline = setTimeout(done, deadlineMs);
        // A host that never answers becomes ready only by turning stale: look once a second too.
        const staleCheck = setInterval(check, 1_000);
        this.dataWaiters.add(check);
      });
    }
    return this.sample();
  }

  private tick(at: number): void {
    const sample = this.sample(at);
    this.latest = sample;
    this.history.add(sample);
    this.record?.write(`${JSON.stringify(sample)}\n`);
    this.publish();
  }

  private publish(): void {
    if (!this.latest) return;
    const frame = this.history.frame(this.timebase, this.opts.intervalMs, 'live');
    if (frame) for (const l of this.listeners) l(frame);
  }
}
