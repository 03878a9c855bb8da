/**
 * vLLM as it runs on the modelled machines (docs/STAGES.md §4.3 "Ray / vLLM"): one `vllm serve` per
 * machine (the API server with its engines, or headless engines), its sockets and GPU memory, and the
 * per-engine performance model the log and `vllm bench serve` print from:
 *
 *   TPOT(b) = t₀ + k·b + overhead, t₀ = weights per TP group / 864 GB/s (L20 GDDR6),
 *   k = KV bytes a sequence's context adds per step / 864 GB/s, TTFT from the prompt's prefill FLOPs,
 *   all-reduce latency per layer for TP > 1 and a stage hop per token for cross-node PP.
 *
 * Lab constants, not predictions. Waiters (a head for its remote engines, engines for the head's
 * handshake socket, curl for readiness) block on `servingChanged`, which every state change signals.
 */
import type { Cluster } from './cluster.js';
import { tcpPath } from './rdma-path.js';
import { registerListenSource, type ListenSocket } from './sockets.js';
import type { Machine } from './types.js';
import type { Process } from '../system/processes.js';
import { addGpuWork, removeGpuWork } from './gpu-telemetry.js';

export interface ModelShape {
  path: string;
  architecture: string;
  layers: number;
  heads: number;
  kvHeads: number;
  hidden: number;
  vocab: number;
  maxPos: number;
  dtype: string;
  quantization?: string;
  weightBytes: number;
  shards: number;
}

export interface ServeArgs {
  model: string;
  servedName: string;
  host?: string;
  port: number;
  apiKey?: string;
  tp: number;
  pp: number;
  dp: number;
  dpLocal: number;
  dpStartRank: number;
  dpAddress?: string;
  dpRpcPort: number;
  headless: boolean;
  backend?: string;
  gpuMemoryUtilization: number;
  maxModelLen?: number;
  quantization?: string;
  /** The arguments that differ from vLLM's defaults, for the `non-default args` line. */
  nonDefault: Array<[string, unknown]>;
}

export type ServeState = 'starting' | 'ready' | 'failed';

export interface VllmServer {
  machine: Machine;
  args: ServeArgs;
  shape: ModelShape;
  state: ServeState;
  /** The API server binds its port at once (requests hang until startup completes). */
  api?: { host: string; port: number };
  /** Node 1's data-parallel handshake socket. */
  handshake?: { host: string; port: number };
  main: Process;
  engines: Process[];
  /** Local engines that finished loading. */
  enginesReady: number;
  startedAt: number;
  readyAt?: number;
  /** Counters /metrics reports (requests and tokens served). */
  served: { requests: number; promptTokens: number; generationTokens: number };
}

const servers = new WeakMap<Machine, VllmServer>();
let listeners: Array<() => void> = [];

/** Signals every waiter that some serving state changed. */
export function servingChanged(): void {
  const l = listeners;
  listeners = [];
  for (const f of l) f();
}

/**
 * Waits until the next state change, `signal` aborts, or a short real-time interval passed (states
 * that depend on the network — a cable, a firewall rule — change without telling anyone). Never
 * advances the simulated clock, so a waiting loop cannot spin at speed 'max'.
 */
export function waitServingChange(signal?: AbortSignal, realMs = 250): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, realMs);
    listeners.push(done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export function vllmServer(m: Machine): VllmServer | undefined {
  const s = servers.get(m);
  if (s && m.system.processes.get(s.main.pid) !== s.main) {
    endServer(s);
    return undefined;
  }
  return s;
}

export function registerServer(s: VllmServer): void {
  servers.set(s.machine, s);
  s.machine.revision++;
  servingChanged();
}

/** Forgets a server and gives its GPUs back. */
export function endServer(s: VllmServer): void {
  if (servers.get(s.machine) === s) servers.delete(s.machine);
  for (const e of s.engines) removeGpuWork(s.machine, e.pid);
  s.machine.revision++;
  servingChanged();
}

export function markEngineReady(s: VllmServer, gpuIndexes: readonly number[], engine: Process, memMiB: number): void {
  s.enginesReady++;
  for (const g of gpuIndexes)
    addGpuWork(s.machine, {
      gpu: g,
      pid: engine.pid,
      name: engine.argv[0] ?? 'VLLM::EngineCore',
      memMiB,
      utilPct: 0,
      type: 'C',
    });
  servingChanged();
}

/** Whether this machine can open a TCP connection to `ip:port` served by a vLLM process. */
export function vllmListening(
  cluster: Cluster,
  from: Machine,
  ip: string,
  port: number,
): { server: VllmServer; kind: 'api' | 'handshake' } | 'refused' | 'unreachable' | 'filtered' | 'noroute' {
  const path = tcpPath(cluster, from, ip, port);
  if (!path.ok) return path.reason;
  const s = vllmServer(path.machine);
  if (s?.api && s.api.port === port && (s.api.host === ip || s.api.host === '0.0.0.0' || s.api.host === '::'))
    return { server: s, kind: 'api' };
  if (s?.handshake && s.handshake.port === port && s.handshake.host === ip) return { server: s, kind: 'handshake' };
  return 'refused';
}

/** Headless engines elsewhere that serve the data-parallel ranks of the head at `address`. */
export function remoteEngines(cluster: Cluster, head: VllmServer): number {
  let n = 0;
  for (const m of cluster.machines) {
    if (m === head.machine) continue;
    const s = vllmServer(m);
    if (!s?.args.headless || s.args.dpAddress !== head.args.dpAddress || s.args.dpRpcPort !== head.args.dpRpcPort)
      continue;
    n += s.enginesReady;
  }
  return n;
}

/** GPUs a Ray-backed vLLM holds in the cluster of GCS `gcs` (its placement group). */
export function vllmRayGpusInUse(cluster: Cluster, _gcs: string): number {
  let n = 0;
  for (const m of cluster.machines) {
    const s = vllmServer(m);
    if (s?.args.backend === 'ray' && s.state === 'ready') n += s.args.tp * s.args.pp;
  }
  return n;
}

function sockets(m: Machine): ListenSocket[] {
  const s = vllmServer(m);
  if (!s) return [];
  const out: ListenSocket[] = [];
  if (s.api)
    out.push({
      address: s.api.host === '::' ? '::' : s.api.host,
      port: s.api.port,
      backlog: 4096,
      pid: s.main.pid,
      process: 'vllm',
    });
  if (s.handshake)
    out.push({ address: s.handshake.host, port: s.handshake.port, backlog: 100, pid: s.main.pid, process: 'vllm' });
  return out;
}

registerListenSource('vllm', sockets);

// ---------------------------------------------------------------- the engine performance model

const GiB = 2 ** 30;
/** L20: 46,068 MiB usable, 864 GB/s GDDR6, ≈ 119.5 dense BF16 TFLOPS. */
export const L20 = { memMiB: 46068, bandwidth: 864e9, flops: 119.5e12 } as const;
const BYTES: Record<string, number> = { bfloat16: 2, float16: 2, float32: 4 };

export interface EngineMath {
  /** GiB of weights each GPU of an engine holds. */
  weightsGiB: number;
  /** GiB the engine reserves: utilisation × memory.total. */
  budgetGiB: number;
  kvGiB: number;
  /** KV bytes one token of context takes on one GPU. */
  kvBytesPerToken: number;
  kvTokens: number;
  maxModelLen: number;
  /** Modelled seconds of each start-up phase. */
  loadS: number;
  compileS: number;
  profileS: number;
  graphS: number;
  /** Decode step time for `batch` sequences with `ctx` tokens of context each. */
  tpotMs(batch: number, ctx: number): number;
  /** Prefill of `tokens` prompt tokens. */
  prefillMs(tokens: number): number;
}

export function engineMath(
  shape: ModelShape,
  a: Pick<ServeArgs, 'tp' | 'pp' | 'gpuMemoryUtilization' | 'maxModelLen' | 'quantization'>,
  crossNodePp: boolean,
): EngineMath {
  const group = a.tp * a.pp;
  const fp8 = a.quantization === 'fp8' && !shape.quantization;
  const weights = (fp8 ? shape.weightBytes / 2 : shape.weightBytes) / group;
  const budget = a.gpuMemoryUtilization * L20.memMiB * 2 ** 20;
  const headDim = shape.hidden / shape.heads;
  const kvHeadsPerGpu = Math.max(1, Math.ceil(shape.kvHeads / a.tp));
  const kvBytesPerToken = 2 * Math.ceil(shape.layers / a.pp) * kvHeadsPerGpu * headDim * (BYTES[shape.dtype] ?? 2);
  // Activations of the profiling run and CUDA graphs come out of the budget first.
  const kvBytes = budget - weights - 1.6 * GiB;
  const kvTokens = Math.max(0, Math.floor(kvBytes / kvBytesPerToken / 16) * 16);
  const params = shape.weightBytes / (shape.quantization ? 1 : 2);
  // Small all-reduces: vLLM's custom kernel over P2P for TP 2; beyond two PCIe GPUs NCCL across both sockets.
  const allReduceUs = a.tp === 1 ? 0 : a.tp === 2 ? 9 : 90;
  return {
    weightsGiB: weights / GiB,
    budgetGiB: budget / GiB,
    kvGiB: kvBytes / GiB,
    kvBytesPerToken,
    kvTokens,
    maxModelLen: a.maxModelLen ?? shape.maxPos,
    loadS: 4 + weights / 0.3e9,
    compileS: 24 + shape.layers * 0.06,
    profileS: 3.5,
    graphS: 5 + shape.layers * 0.02,
    tpotMs: (batch, ctx) => {
      // Each decode step streams every GPU's weights once; pipeline stages run one after another.
      const t0 = ((weights * a.pp) / L20.bandwidth) * 1000;
      const kv = ((batch * ctx * kvBytesPerToken * a.pp) / L20.bandwidth) * 1000;
      const comm = (2 * shape.layers * allReduceUs) / 1000 + (crossNodePp ? 0.045 * (a.pp - 1) : 0);
      return t0 + kv + comm + 2.1;
    },
    prefillMs: (tokens) => ((2 * params * tokens) / (L20.flops * 0.45 * group)) * 1000 + 6,
  };
}
