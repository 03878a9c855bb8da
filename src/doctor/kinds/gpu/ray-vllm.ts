/**
 * Ray and vLLM doctor kinds: `ray status` (D24), `ray start`, vLLM server logs (D16 plus the NCCL-log rules
 * over their NCCL lines) and `vllm bench serve` results.
 */
import { logLines } from '../../../parse/log-lines.js';
import { parseRayStart, type RayStartFacts } from '../../../parse/ray-start.js';
import { scanRayStatus, type RayStatusFacts } from '../../../parse/ray-status.js';
import { parseVllmBench, type VllmBenchFacts } from '../../../parse/vllm-bench.js';
import { parseVllmLog, type VllmLogFacts } from '../../../parse/vllm-log.js';
import { d16VllmLaunch } from '../../../rules/output/d16-vllm-launch.js';
import { d24RayClusterSmall } from '../../../rules/output/d24-ray-cluster-small.js';
import type { KindDef } from '../../types.js';
import { defined, fmt, hasAny, head } from './common.js';
import { pastedNcclFindings } from './nccl.js';

// ---------------------------------------------------------------- Ray

export const rayStatus: KindDef<RayStatusFacts> = {
  kind: 'ray-status',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Autoscaler status', 'Node status', 'Active:', 'Healthy:')) return 0;
    if (/=+\s*Autoscaler status\b/.test(t)) return 0.95;
    if (/^Node status\s*$/m.test(t) && /^Resources\s*$/m.test(t)) return 0.85;
    return /^(?:Active|Healthy):\s*$/m.test(t) && /^\s*\d+(?:\.\d+)?\/\d+(?:\.\d+)? (?:CPU|GPU)\b/m.test(t) ? 0.75 : 0;
  },
  parse: (text) => scanRayStatus(text).facts,
  findings: (_f, text) => defined([d24RayClusterSmall(scanRayStatus(text))]),
  summary(f) {
    const rows: Array<[string, string]> = [];
    rows.push(['nodes', `${f.nodesActive ?? '?'} active${f.nodesIdle !== undefined ? `, ${f.nodesIdle} idle` : ''}`]);
    if (f.gpusTotal !== undefined) rows.push(['GPUs', `${f.gpusUsed ?? '?'}/${f.gpusTotal} used`]);
    if (f.cpusTotal !== undefined) rows.push(['CPUs', `${f.cpusUsed ?? '?'}/${f.cpusTotal} used`]);
    rows.push(['pending', f.pending.length > 0 ? f.pending.join('; ') : 'none']);
    rows.push(['recent failures', f.failures.length > 0 ? f.failures.join('; ') : 'none']);
    return rows;
  },
};

export const rayStart: KindDef<RayStartFacts> = {
  kind: 'ray-start',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Ray runtime started', 'Local node IP')) return 0;
    const started = /^\s*Ray runtime started\.?\s*$/m.test(t);
    const ip = /^\s*Local node IP:\s*\S+/m.test(t);
    return started && ip ? 0.95 : started ? 0.85 : ip ? 0.6 : 0;
  },
  parse: parseRayStart,
  findings: () => [],
  summary: (f) => [
    ['role', f.head === undefined ? '?' : f.head ? 'head' : 'worker'],
    ['node IP', f.nodeIp ?? '?'],
    ...(f.address ? ([['address', f.address]] as Array<[string, string]>) : []),
    ...(f.errors.length > 0 ? ([['error', f.errors[0] ?? '']] as Array<[string, string]>) : []),
  ],
};

// ---------------------------------------------------------------- vLLM

const VLLM_MARKERS = [
  /vLLM API server version/,
  /LLM engine \(v\d/,
  /\(APIServer pid=\d+\)/,
  /\(EngineCore(?:_DP)?_?\d* pid=\d+\)/,
  /\(VllmWorker(?: TP\d+)? pid=\d+\)/,
  /RayWorkerWrapper pid=\d+/,
  /[/\\]vllm[/\\](?:worker|engine|entrypoints|executor|distributed|model_executor|v1)[/\\]/,
  /\b(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d [\d:]+ (?:\[)?[\w.]+\.py:\d+\]/,
  /vLLM is using nccl==/,
];

export const vllmLog: KindDef<VllmLogFacts> = {
  kind: 'vllm-log',
  detect(text) {
    const t = head(text);
    if (!hasAny(t, 'vLLM', 'vllm', 'LLM engine', 'APIServer', 'EngineCore', 'VllmWorker', 'RayWorkerWrapper')) {
      // Only vLLM's logger prefix is left to recognise it by.
      return (VLLM_MARKERS[7] as RegExp).test(t) ? 0.65 : 0;
    }
    let n = 0;
    for (const re of VLLM_MARKERS) if (re.test(t)) n++;
    return n >= 2 ? 0.95 : n === 1 ? 0.65 : 0;
  },
  parse: parseVllmLog,
  // NCCL_DEBUG lines inside a vLLM log are an NCCL log too: every NCCL rule reads them (D17 points to the WARN).
  findings: (_f, text) => defined([...pastedNcclFindings(text), d16VllmLaunch(logLines(text))]),
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.version) rows.push(['vLLM', f.version]);
    if (f.model) rows.push(['model', f.model]);
    rows.push(['TP × PP', `${f.tp ?? '?'} × ${f.pp ?? '?'}`]);
    if (f.executor) rows.push(['executor', f.executor]);
    if (f.ncclVersion) rows.push(['NCCL', f.ncclVersion]);
    if (f.workerIps) rows.push(['Ray worker IPs', f.workerIps.join(', ')]);
    rows.push(['errors', String(f.errors.length)]);
    if (f.apiUrl) rows.push(['serving', f.apiUrl]);
    return rows;
  },
};

export const vllmBench: KindDef<VllmBenchFacts> = {
  kind: 'vllm-bench',
  detect(text) {
    const t = head(text, 256 * 1024);
    if (!hasAny(t, 'Benchmark Result', 'TTFT', 'throughput', 'Successful requests')) return 0;
    if (/=+\s*Serving Benchmark Result\s*=+/.test(t)) return 0.97;
    let n = 0;
    for (const re of [
      /^Successful requests:\s+\d/m,
      /^Request throughput \(req\/s\):\s+[\d.]/m,
      /^Mean TTFT \(ms\):\s+[\d.]/m,
      /^Output token throughput \(tok\/s\):\s+[\d.]/m,
    ])
      if (re.test(t)) n++;
    return n >= 2 ? 0.85 : 0;
  },
  parse: parseVllmBench,
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [];
    rows.push(['requests', `${f.successful ?? '?'} ok${f.failed !== undefined ? `, ${f.failed} failed` : ''}`]);
    if (f.requestThroughput !== undefined) rows.push(['request throughput', `${f.requestThroughput} req/s`]);
    if (f.outputTokThroughput !== undefined) rows.push(['output tokens', `${f.outputTokThroughput} tok/s`]);
    if (f.totalTokThroughput !== undefined) rows.push(['total tokens', `${f.totalTokThroughput} tok/s`]);
    if (f.meanTtftMs !== undefined)
      rows.push(['TTFT mean / median / p99', `${fmt(f.meanTtftMs)} / ${fmt(f.medianTtftMs)} / ${fmt(f.p99TtftMs)} ms`]);
    if (f.meanTpotMs !== undefined) rows.push(['TPOT mean', `${f.meanTpotMs} ms`]);
    return rows;
  },
};
