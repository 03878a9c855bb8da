/**
 * A serving engine under load, for what a monitor reads while `vllm bench serve` runs: `/metrics`
 * in vLLM 0.11's names (`vllm:num_requests_running|waiting`, `vllm:kv_cache_usage_perc` — 0.10
 * renamed `gpu_cache_usage_perc` —, `vllm:prompt_tokens_total`, `vllm:generation_tokens_total`,
 * `vllm:request_success_total`, the `vllm:time_to_first_token_seconds` histogram with
 * vllm/v1/metrics/loggers.py's buckets), one series per engine (`engine="N",model_name="…"`), the
 * engines' GPUs busy, and — when the engine's tensor/pipeline group spans both nodes — its
 * activations crossing the fabric.
 *
 * The load is the bench's own numbers (vllm-bench.ts `benchNumbers`): requests go out in waves of
 * `--max-concurrency`, request i (engine i mod engines) finishes its prefill at its wave's start plus
 * its TTFT and its last token at the wave's end, generating linearly between. Reading the metrics at
 * any time therefore gives counters that move at the bench's rates, and when the bench ends the
 * histogram's sum/count is exactly its mean TTFT and the token counters its totals.
 */
import type { Cluster } from './cluster.js';
import { rng } from '../util/prng.js';
import { flowRate, startFlow, type Flow } from './perftest.js';
import type { TrafficHandle } from './traffic.js';
import type { Machine } from './types.js';
import { engineMath, vllmServer, type VllmServer } from './vllm-runtime.js';

/** vllm:time_to_first_token_seconds buckets (vLLM 0.11, v1/metrics/loggers.py), seconds. */
export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
] as const;
/** vLLM's default max_num_seqs: an engine runs at most this many requests at once, the rest wait. */
const MAX_NUM_SEQS = 256;

export interface ServingLoad {
  start: number;
  end: number;
  prompts: number;
  concurrency: number;
  input: number;
  output: number;
  totalInput: number;
  /** TTFT of each request in ms, in request order. */
  ttftMs: number[];
  engines: number;
  kvTokens: number;
  /** What the load set on the engines' GPUs and the fabric, undone when it ends. */
  busy: Array<{ machine: Machine; pid: number; utilPct: number }>;
  traffic: TrafficHandle[];
}

/** Per-engine totals /metrics reports once a load has ended (kept on the server). */
export interface EngineTotals {
  requests: number;
  promptTokens: number;
  generationTokens: number;
  ttftSum: number;
  /** Observations per bucket (not cumulative), the last one for +Inf. */
  ttftBuckets: number[];
}

const loads = new WeakMap<VllmServer, ServingLoad>();
const totals = new WeakMap<VllmServer, EngineTotals[]>();

/** The API server's engines: its own and the headless data-parallel peers that joined it. */
export function servingGroup(cluster: Cluster, s: VllmServer): VllmServer[] {
  const out = [s];
  for (const m of cluster.machines) {
    const o = vllmServer(m);
    if (
      o &&
      o !== s &&
      o.args.headless &&
      o.args.dpAddress === s.args.dpAddress &&
      o.args.dpRpcPort === s.args.dpRpcPort
    )
      out.push(o);
  }
  return out;
}

function engineCount(s: VllmServer): number {
  return s.args.backend === 'ray' ? 1 : Math.max(1, s.args.dp);
}

function emptyTotals(): EngineTotals {
  return {
    requests: 0,
    promptTokens: 0,
    generationTokens: 0,
    ttftSum: 0,
    ttftBuckets: new Array<number>(TTFT_BUCKETS.length + 1).fill(0),
  };
}

function bucketOf(seconds: number): number {
  const i = TTFT_BUCKETS.findIndex((b) => seconds <= b);
  return i < 0 ? TTFT_BUCKETS.length : i;
}

interface EngineNow extends EngineTotals {
  running: number;
  waiting: number;
  kvUsage: number;
}

/** Engine `e`'s share of `l` at `now`: what finished, what runs, what waits. */
function progress(l: ServingLoad, e: number, now: number): EngineNow {
  const t = Math.min(now, l.end) - l.start;
  const waveMs = (l.end - l.start) / Math.ceil(l.prompts / l.concurrency);
  const out: EngineNow = { ...emptyTotals(), running: 0, waiting: 0, kvUsage: 0 };
  let inFlight = 0;
  for (let i = e; i < l.prompts; i += l.engines) {
    const waveStart = Math.floor(i / l.concurrency) * waveMs;
    if (t < waveStart) continue;
    const ttft = l.ttftMs[i] ?? 0;
    const first = waveStart + ttft;
    const done = waveStart + waveMs;
    if (t >= first) {
      // Request i's prompt: its share of the total (the random dataset's lengths vary a little).
      out.promptTokens += Math.floor((l.totalInput * (i + 1)) / l.prompts) - Math.floor((l.totalInput * i) / l.prompts);
      out.ttftSum += ttft / 1000;
      out.ttftBuckets[bucketOf(ttft / 1000)]!++;
      out.generationTokens += Math.round(l.output * Math.min(1, (t - first) / Math.max(1, done - first)));
    }
    // (The last wave ends exactly at the load's end, up to float rounding.)
    if (t >= done - 1e-6) out.requests++;
    else inFlight++;
  }
  if (now < l.end) {
    out.running = Math.min(inFlight, MAX_NUM_SEQS);
    out.waiting = inFlight - out.running;
    out.kvUsage = Math.min(1, (out.running * (l.input + l.output / 2)) / Math.max(1, l.kvTokens));
  }
  return out;
}

const PER_TOKEN_BYTES = 2;

/**
 * Puts `s` under the bench's load from `now` for `durationS`: GPUs of every engine in the group busy,
 * the fabric carrying the activations when the tensor/pipeline group spans both nodes.
 */
export function startLoad(
  cluster: Cluster,
  s: VllmServer,
  w: { prompts: number; concurrency: number; input: number; output: number; totalInput: number; ttftMs: number[] },
  now: number,
  durationS: number,
): void {
  endLoad(s, false, now);
  const engines = engineCount(s);
  const math = engineMath(s.shape, s.args, s.args.backend === 'ray' && s.args.pp > 1);
  const l: ServingLoad = {
    ...w,
    start: now,
    end: now + durationS * 1000,
    engines,
    kvTokens: math.kvTokens,
    busy: [],
    traffic: [],
  };
  for (const srv of servingGroup(cluster, s)) {
    const pids = new Set(srv.engines.map((e) => e.pid));
    for (const wk of srv.machine.gpuWork ?? []) {
      if (!pids.has(wk.pid)) continue;
      l.busy.push({ machine: srv.machine, pid: wk.pid, utilPct: wk.utilPct });
      wk.utilPct = 96;
    }
    srv.machine.revision++;
  }
  l.traffic = crossNodeTraffic(cluster, s, l, w.totalInput + w.prompts * w.output, durationS);
  loads.set(s, l);
}

/**
 * Tensor/pipeline parallel over Ray with a group larger than one node: each generated or prefilled
 * token moves its hidden state across the stage boundary (PP) or all-reduces it twice per layer (TP),
 * both ways over every cabled fabric port between the nodes. NCCL's traffic class 106 (DSCP 26).
 */
function crossNodeTraffic(
  cluster: Cluster,
  s: VllmServer,
  l: ServingLoad,
  tokens: number,
  durationS: number,
): TrafficHandle[] {
  const a = s.args;
  const m = s.machine;
  if (a.backend !== 'ray' || a.tp * a.pp <= m.gpus.length) return [];
  const crossings = a.pp > 1 ? a.pp - 1 : 2 * s.shape.layers;
  const bytes = tokens * s.shape.hidden * PER_TOKEN_BYTES * crossings;
  const pairs: Array<{ from: Machine; port: string; to: Machine; peerPort: string }> = [];
  for (const port of m.netdevs.filter((d) => d.driver === 'mlx5_core' && m.carrier(d.name)).map((d) => d.name)) {
    const end = cluster.peer(m.hostname, port);
    const other = end && cluster.machines.find((x) => x.hostname === end.host && x !== m);
    if (!end || !other) continue;
    pairs.push(
      { from: m, port, to: other, peerPort: end.ifname },
      { from: other, port: end.ifname, to: m, peerPort: port },
    );
  }
  const rdmaOf = (x: Machine, port: string) =>
    x.rdma.find((r) => r.netdev === port || x.netdevs.find((d) => d.name === r.netdev)?.bond?.slaves.includes(port));
  const out: TrafficHandle[] = [];
  for (const p of pairs) {
    const sd = rdmaOf(p.from, p.port);
    const rd = rdmaOf(p.to, p.peerPort);
    if (!sd || !rd) continue;
    const mtu =
      Math.min(
        p.from.netdevs.find((d) => d.name === p.port)?.mtu ?? 1500,
        p.to.netdevs.find((d) => d.name === p.peerPort)?.mtu ?? 1500,
      ) >= 4200
        ? 4096
        : 1024;
    const f: Flow = {
      sender: p.from,
      senderPort: p.port,
      senderDevice: sd.name,
      receiver: p.to,
      receiverPort: p.peerPort,
      receiverDevice: rd.name,
      tclass: 106,
      sl: 0,
      mtuBytes: mtu,
      linkGbps: 25,
      share: 1,
    };
    const r = rng(p.from.seed, p.from.hostname, 'vllm-traffic', l.start);
    const share = bytes / pairs.length;
    out.push(
      startFlow(
        f,
        flowRate(f, r),
        share,
        Math.max(1, Math.ceil(share / 524_288)),
        r,
        l.start,
        l.start + durationS * 1000,
      ),
    );
  }
  return out;
}

/**
 * Ends the load: what it served is folded into the server's totals (all of it when `completed`, what
 * had happened by `now` when the bench was cut short), the GPUs and the fabric go back to idle.
 */
export function endLoad(s: VllmServer, completed: boolean, now: number): void {
  const l = loads.get(s);
  if (!l) return;
  loads.delete(s);
  const at = completed ? l.end : Math.min(now, l.end);
  const base = engineTotals(s);
  for (let e = 0; e < l.engines; e++) {
    const p = progress(l, e, at);
    const t = (base[e] ??= emptyTotals());
    t.requests += p.requests;
    t.promptTokens += p.promptTokens;
    t.generationTokens += p.generationTokens;
    s.served.requests += p.requests;
    s.served.promptTokens += p.promptTokens;
    s.served.generationTokens += p.generationTokens;
    t.ttftSum += p.ttftSum;
    p.ttftBuckets.forEach((n, i) => (t.ttftBuckets[i]! += n));
  }
  for (const b of l.busy) {
    const wk = b.machine.gpuWork?.find((x) => x.pid === b.pid);
    if (wk) wk.utilPct = b.utilPct;
    b.machine.revision++;
  }
  for (const t of l.traffic) {
    if (completed) t.finish();
    else t.stop();
  }
}

function engineTotals(s: VllmServer): EngineTotals[] {
  let t = totals.get(s);
  if (!t) totals.set(s, (t = Array.from({ length: engineCount(s) }, emptyTotals)));
  return t;
}

/** Python's float repr for the values prometheus_client prints (`12.0`, `0.25`, `2560.0`). */
function py(n: number): string {
  return Number.isInteger(n) ? n.toFixed(1) : String(n);
}

/** The /metrics body of the API server `s` at `now` (text/plain; version=0.0.4). */
export function vllmMetrics(s: VllmServer, now: number): string {
  const l = loads.get(s);
  const engines = engineCount(s);
  const base = engineTotals(s);
  const rows = Array.from({ length: engines }, (_, e) => {
    const t = base[e] ?? emptyTotals();
    const p = l ? progress(l, e, now) : { ...emptyTotals(), running: 0, waiting: 0, kvUsage: 0 };
    return {
      label: `engine="${e}",model_name="${s.args.servedName}"`,
      running: p.running,
      waiting: p.waiting,
      kv: p.kvUsage,
      requests: t.requests + p.requests,
      prompt: t.promptTokens + p.promptTokens,
      gen: t.generationTokens + p.generationTokens,
      ttftSum: t.ttftSum + p.ttftSum,
      buckets: t.ttftBuckets.map((n, i) => n + (p.ttftBuckets[i] ?? 0)),
    };
  });
  type Row = (typeof rows)[number];
  const family = (name: string, type: string, help: string, v: (r: Row) => number): string =>
    `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${rows.map((r) => `${name}{${r.label}} ${py(v(r))}\n`).join('')}`;
  const hist = (): string => {
    const name = 'vllm:time_to_first_token_seconds';
    let text = `# HELP ${name} Histogram of time to first token in seconds.\n# TYPE ${name} histogram\n`;
    for (const r of rows) {
      let cum = 0;
      [...TTFT_BUCKETS.map(String).map((b) => (b.includes('.') ? b : `${b}.0`)), '+Inf'].forEach((le, i) => {
        cum += r.buckets[i] ?? 0;
        text += `${name}_bucket{${r.label},le="${le}"} ${py(cum)}\n`;
      });
      text += `${name}_count{${r.label}} ${py(cum)}\n${name}_sum{${r.label}} ${py(r.ttftSum)}\n`;
    }
    return text;
  };
  return [
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', (r) => r.running),
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', (r) => r.waiting),
    family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', (r) => r.kv),
    family('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', (r) => r.prompt),
    family('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', (r) => r.gen),
    family('vllm:request_success_total', 'counter', 'Count of successfully processed requests.', (r) => r.requests),
    hist(),
  ].join('');
}
