/**
 * One host's samplers: the two long-lived commands of scripts.ts, each restarted with a backoff
 * (1 s doubling to 30 s) when it ends or its connection drops, so a host that went away comes back by
 * itself. A watchdog marks the host stale when neither stream has said anything for `staleMs` and
 * cancels the silent commands, so a hung channel does not pin the host in a half-dead state; the
 * other hosts' samplers are independent and keep going.
 */
import type { Host, RunResult } from '../transport/types.js';
import { LineSplitter } from '../util/sanitize.js';
import { isUnknownField, LoopFrameParser, parseGpuLine, type AppRow, type LoopFrame } from './parse.js';
import { portReadings, vllmReading, type MetricsReading } from './rates.js';
import { GPU_FIELD_SETS, gpuCommand, hostLoopScript } from './scripts.js';
import type { GpuReading, HostSample } from './types.js';

export interface HostSamplerOptions {
  intervalMs: number;
  /** vLLM's port on the host (null: do not read /metrics). */
  vllmPort: number | null;
  /** Restrict the fabric ports to these netdevs (the inventory's fabricPorts). */
  netdevs?: readonly string[];
  /** RoCE priority: its pause counters are shown even at 0. */
  rocePriority?: number;
  /** Silence after which the host is stale (default max(3 × interval, 3 s)). */
  staleMs?: number;
  /** Called whenever new data arrived (the session publishes on its own tick). */
  onData?: () => void;
  now?: () => number;
}

type Channel = 'gpu' | 'loop';

const MAX_BACKOFF_MS = 30_000;
/** Keep a long-lived command's own buffers small: everything is consumed through the callbacks. */
const RESULT_BUFFER_BYTES = 16 * 1024;

export class HostSampler {
  private readonly gpus = new Map<number, Omit<GpuReading, 'processes'>>();
  private gpuFieldSet = 0;
  private frames: LoopFrame[] = [];
  private apps: AppRow[] = [];
  private metrics: MetricsReading[] = [];
  private xids: string[] = [];
  private readonly lastData: Record<Channel, number> = { gpu: 0, loop: 0 };
  private readonly errors: Partial<Record<Channel, string>> = {};
  private readonly running = new Map<Channel, AbortController>();
  private readonly stopController = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private watchdog: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  readonly staleMs: number;
  /** Times each channel's command was started (tests and the session log read it). */
  readonly starts: Record<Channel, number> = { gpu: 0, loop: 0 };

  constructor(
    readonly host: Host,
    private readonly opts: HostSamplerOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.staleMs = opts.staleMs ?? Math.max(3 * opts.intervalMs, 3_000);
  }

  start(): void {
    const startedAt = this.now();
    this.lastData.gpu = this.lastData.loop = startedAt;
    this.loops.push(this.keepRunning('gpu'), this.keepRunning('loop'));
    this.watchdog = setInterval(() => this.checkSilence(), Math.min(1_000, this.opts.intervalMs));
    this.watchdog.unref?.();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    clearInterval(this.watchdog);
    for (const ac of this.running.values()) ac.abort();
    await Promise.all(this.loops);
  }

  /** Complete once both streams delivered: a GPU block and two loop frames (rates need two). */
  get ready(): boolean {
    // A vLLM that answered once needs a second reading for its rates.
    const vllmPending = this.metrics.length === 1 && (this.metrics[0]?.lines.length ?? 0) > 0;
    return this.frames.length >= 2 && !vllmPending && (this.gpus.size > 0 || this.errors.gpu !== undefined);
  }

  get stale(): boolean {
    const now = this.now();
    return now - Math.max(this.lastData.gpu, this.lastData.loop) > this.staleMs;
  }

  /** The host's latest readings (alerts are added by the session, which sees every host). */
  snapshot(): Omit<HostSample, 'alerts'> {
    const stale = this.stale;
    const newest = Math.max(this.lastData.gpu, this.lastData.loop);
    const [prev, cur] = this.frames.length >= 2 ? [this.frames[0] ?? null, this.frames[1]] : [null, this.frames[0]];
    const byUuid = new Map<string, AppRow[]>();
    for (const a of this.apps) byUuid.set(a.gpuUuid, [...(byUuid.get(a.gpuUuid) ?? []), a]);
    const gpus = [...this.gpus.values()]
      .sort((a, b) => a.index - b.index)
      .map((g) => ({
        ...g,
        processes: (byUuid.get(g.uuid) ?? []).map(({ pid, name, memUsedMiB }) => ({ pid, name, memUsedMiB })),
      }));
    const [mPrev, mCur] =
      this.metrics.length >= 2 ? [this.metrics[0] ?? null, this.metrics[1]] : [null, this.metrics[0]];
    const errors = [this.errors.loop, this.errors.gpu].filter((e): e is string => e !== undefined);
    return {
      name: this.host.name,
      stale,
      updated: this.frames.length || this.gpus.size ? new Date(newest).toISOString() : null,
      error: stale ? (errors[0] ?? `no data for ${Math.round((this.now() - newest) / 1000)} s`) : (errors[0] ?? null),
      gpuError: this.errors.gpu ?? null,
      gpus,
      ports: cur ? portReadings(cur, prev, this.opts.rocePriority ?? 3) : [],
      vllm: mCur && this.opts.vllmPort !== null ? vllmReading(mCur, mPrev, `:${this.opts.vllmPort}/metrics`) : null,
      xids: [...this.xids],
    };
  }

  private checkSilence(): void {
    const now = this.now();
    for (const [channel, ac] of this.running) {
      // A silent stream on a live connection is a hung command or a dead path: end it, restart it.
      if (now - this.lastData[channel] > this.staleMs) ac.abort();
    }
  }

  private async keepRunning(channel: Channel): Promise<void> {
    let backoff = 1_000;
    const stop = this.stopController.signal;
    while (!stop.aborted) {
      const started = this.now();
      const ac = new AbortController();
      this.running.set(channel, ac);
      let result: RunResult | undefined;
      try {
        this.starts[channel]++;
        result = await this.runOnce(channel, ac.signal);
      } catch (err) {
        this.errors[channel] = err instanceof Error ? err.message : String(err);
      } finally {
        this.running.delete(channel);
      }
      if (stop.aborted) return;
      if (result) {
        const out = `${result.stdout}\n${result.stderr}`;
        if (channel === 'gpu' && isUnknownField(out) && this.gpuFieldSet < GPU_FIELD_SETS - 1) {
          this.gpuFieldSet++;
          continue; // an older driver: ask again without the field it does not know
        }
        this.errors[channel] = describeEnd(channel, result);
      }
      if (this.now() - started > 60_000) backoff = 1_000; // it ran well for a while: start over quickly
      await pause(backoff, stop);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }

  private runOnce(channel: Channel, signal: AbortSignal): Promise<RunResult> {
    const lines = new LineSplitter();
    const onLine = channel === 'gpu' ? this.gpuLine(this.gpuFieldSet < EVENT_REASON_SETS) : this.loopParser();
    const onStdout = (chunk: string): void => {
      for (const line of lines.push(chunk)) onLine(line);
    };
    const common = { signal, onStdout, maxBufferBytes: RESULT_BUFFER_BYTES };
    if (channel === 'gpu') return this.host.run({ argv: gpuCommand(this.opts.intervalMs, this.gpuFieldSet) }, common);
    const script = hostLoopScript({
      intervalMs: this.opts.intervalMs,
      vllmPort: this.opts.vllmPort,
      ...(this.opts.netdevs ? { netdevs: this.opts.netdevs } : {}),
    });
    return this.host.run({ script }, common);
  }

  private gpuLine(withReasons: boolean): (line: string) => void {
    return (line) => {
      const g = parseGpuLine(line, withReasons);
      if (!g) return;
      this.gpus.set(g.index, g);
      this.fresh('gpu');
    };
  }

  private loopParser(): (line: string) => void {
    const parser = new LoopFrameParser((frame) => {
      this.frames = [...this.frames, frame].slice(-2);
      if (frame.apps) this.apps = frame.apps;
      if (frame.metrics && frame.uptime !== null)
        this.metrics = [...this.metrics, { at: frame.uptime, lines: frame.metrics }].slice(-2);
      if (frame.xids?.lines.length) this.xids = [...new Set([...this.xids, ...frame.xids.lines])].slice(-5);
      this.fresh('loop');
    });
    return (line) => parser.line(line);
  }

  private fresh(channel: Channel): void {
    this.lastData[channel] = this.now();
    delete this.errors[channel];
    this.opts.onData?.();
  }
}

/** Field sets that include an event-reasons field (the last set goes without). */
const EVENT_REASON_SETS = GPU_FIELD_SETS - 1;

function describeEnd(channel: Channel, r: RunResult): string {
  const what = channel === 'gpu' ? 'nvidia-smi' : 'counter loop';
  if (channel === 'gpu' && r.exitCode === 127)
    return 'nvidia-smi is not installed (no NVIDIA driver yet: stage gpu-driver)';
  const last = `${r.stderr}\n${r.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-1)[0];
  const how = r.timedOut
    ? 'timed out'
    : r.cancelled
      ? 'was cancelled (no output)'
      : r.signal
        ? `was killed by ${r.signal}`
        : `exited with ${r.exitCode}`;
  return `${what} ${how}${last ? `: ${last}` : ''}`;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
