/**
 * `vllm serve` / `python -m vllm.entrypoints.openai.api_server` logs, with their Ray or multiprocessing workers.
 *
 * Line prefixes: `INFO 06-25 15:28:30 worker_base.py:148]` (mid-2024), `INFO 03-20 20:38:08 [__init__.py:207]`
 * (2025); V1 process tags `(APIServer pid=N)`, `(EngineCore_0 pid=N)`, `(VllmWorker TP0 pid=N)`,
 * `(RayWorkerWrapper pid=N, ip=A.B.C.D)`; Ray's `[repeated 6x across cluster]`; ANSI colours on a TTY; terminal
 * copies may hard-wrap long lines. Facts: version (`vLLM API server version 0.10.1.1`, `Initializing a V1 LLM engine
 * (v0.10.1.1)`), TP and PP (`non-default args: {… 'tensor_parallel_size': 2 …}`, the engine config's
 * `tensor_parallel_size=2, pipeline_parallel_size=1`, or the command line), and the error lines.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { clip, logLines } from './log-lines.js';

export const VllmLogFactsSchema = z.object({
  version: z.string().optional(),
  tp: z.number().int().optional(),
  pp: z.number().int().optional(),
  dp: z.number().int().optional(),
  /** ERROR-level messages, Python exceptions, argparse errors: unique, in order (at most 50). */
  errors: z.array(z.string()),
  model: z.string().optional(),
  /** `ray` or `mp`, from the workers' tags or the config. */
  executor: z.enum(['ray', 'mp', 'uni']).optional(),
  /** `vLLM is using nccl==2.26.2`. */
  ncclVersion: z.string().optional(),
  /** Ray worker IPs from `(RayWorkerWrapper pid=N, ip=…)`. */
  workerIps: z.array(z.string()).optional(),
  rayAddress: z.string().optional(),
  apiUrl: z.string().optional(),
  kvCacheTokens: z.number().optional(),
  maxConcurrency: z.number().optional(),
  startedApiServer: z.boolean().optional(),
});
export type VllmLogFacts = z.infer<typeof VllmLogFactsSchema>;

// `(APIServer pid=1) `, `(EngineCore_0 pid=2) (RayWorkerWrapper pid=3, ip=…) `, `[rank0]: `, `[1;36m` remnants.
const TAGS = /^(?:\s*(?:\([^()]*pid=[^()]*\)|\[rank\d+\]:|\[\d+\])\s*)+/;
const LEVEL = /^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+\d\d-\d\d\s+[\d:.]+\s+(?:\[[^\]]*\]|\S+\]) ?(.*)$/;
const EXC = /^(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)\b:\s*\S/;

export function vllmMessage(line: string): { level?: string; msg: string } {
  const body = line.replace(TAGS, '').trim();
  const m = LEVEL.exec(body);
  // The message keeps its leading spaces: an indented ERROR line is traceback code, not a message.
  if (m) return { level: m[1], msg: (m[2] ?? '').replace(/\s*\[repeated \d+x across cluster\].*$/, '').trimEnd() };
  return { msg: body.replace(/\s*\[repeated \d+x across cluster\].*$/, '') };
}

export function parseVllmLog(text: string): VllmLogFacts {
  return guard(
    () => {
      const f: VllmLogFacts = { errors: [] };
      const errors = new Set<string>();
      const ips = new Set<string>();
      let tpCfg: number | undefined;
      let tpArgs: number | undefined;
      let tpCli: number | undefined;
      let ppCfg: number | undefined;
      let ppCli: number | undefined;
      let ray = false;
      let mp = false;
      for (const line of logLines(text)) {
        if (line.length < 3) continue;
        const ipm = /RayWorkerWrapper pid=\d+, ip=([\d.]+)/.exec(line);
        if (ipm?.[1] && ips.size < 256) ips.add(ipm[1]);
        if (
          line.includes('RayWorkerWrapper') ||
          line.includes('ray_distributed_executor') ||
          line.includes('use_ray_spmd_worker')
        )
          ray = true;
        if (/VllmWorker(?: TP\d+)? pid=|multiproc_executor|VllmWorkerProcess/.test(line)) mp = true;
        const { level, msg } = vllmMessage(line);
        if (f.version === undefined) {
          const v =
            /vLLM API server version\s+(\d[\w.+-]*)|LLM engine \(v(\d[\w.+-]*?)\)|vLLM version\s+v?(\d[\w.+-]*)/.exec(
              msg,
            );
          if (v) f.version = v[1] ?? v[2] ?? v[3];
        }
        if (
          msg.includes('tensor_parallel_size') ||
          msg.includes('pipeline_parallel_size') ||
          msg.includes('data_parallel_size')
        ) {
          const a = /'tensor_parallel_size':\s*(\d+)/.exec(msg);
          if (a) tpArgs ??= Number(a[1]);
          const c = /\btensor_parallel_size=(\d+)/.exec(msg);
          if (c) tpCfg ??= Number(c[1]);
          const p = /\bpipeline_parallel_size(?:=|':\s*)(\d+)/.exec(msg);
          if (p) ppCfg ??= Number(p[1]);
          const d = /\bdata_parallel_size(?:=|':\s*)(\d+)/.exec(msg);
          if (d) f.dp ??= Number(d[1]);
          if (/distributed_executor_backend=['"]?ray\b|'distributed_executor_backend':\s*'ray'/.test(msg)) ray = true;
        }
        if (
          /\bvllm\s+serve\b|api_server\b.*--/.test(msg) &&
          /^(?:\$\s+|#\s+)?(?:\S*python\S*\s+-m\s+\S+|vllm\s+serve)/.test(msg.trim())
        ) {
          const t = /(?:--tensor-parallel-size|-tp)[=\s]+(\d+)/.exec(msg);
          if (t) tpCli ??= Number(t[1]);
          const p = /(?:--pipeline-parallel-size|-pp)[=\s]+(\d+)/.exec(msg);
          if (p) ppCli ??= Number(p[1]);
        }
        if (f.model === undefined) {
          const m = /'model':\s*'([^']+)'|\bmodel='([^']+)'/.exec(msg);
          if (m) f.model = m[1] ?? m[2];
        }
        if (f.ncclVersion === undefined) {
          const n = /using nccl==(\d+\.\d+\.\d+)/.exec(msg);
          if (n) f.ncclVersion = n[1];
        }
        if (f.rayAddress === undefined) {
          const r = /Connecting to existing Ray cluster at address:\s*(\S+?)\.{0,3}$/.exec(msg);
          if (r) f.rayAddress = r[1];
        }
        if (/Starting vLLM API server|Uvicorn running on|Application startup complete/.test(msg)) {
          f.startedApiServer = true;
          const u = /(https?:\/\/\S+)/.exec(msg);
          if (u) f.apiUrl ??= u[1];
        }
        const kv = /GPU KV cache size:\s*([\d,]+)\s*tokens/.exec(msg);
        if (kv?.[1]) f.kvCacheTokens = Number(kv[1].replace(/,/g, ''));
        const mc = /Maximum concurrency for [\d,]+ tokens per request:\s*([\d.]+)x/.exec(msg);
        if (mc) f.maxConcurrency = Number(mc[1]);
        if (errors.size < 50) {
          const m = msg.trim();
          if (
            (level === 'ERROR' || level === 'CRITICAL') &&
            m !== '' &&
            !/^(?:Traceback|File "|\^+$|return |raise )/.test(m)
          ) {
            if (!/^\s/.test(msg) && !/^[A-Za-z_]+\(/.test(m)) errors.add(clip(m));
          } else if (EXC.test(m) || /^error: (?:unrecognized arguments|argument )/.test(m)) errors.add(clip(m));
        }
      }
      f.tp = tpCfg ?? tpArgs ?? tpCli;
      f.pp = ppCfg ?? ppCli;
      if (f.tp === undefined) delete f.tp;
      if (f.pp === undefined) delete f.pp;
      f.errors = [...errors];
      if (ips.size > 0) f.workerIps = [...ips];
      if (ray) f.executor = 'ray';
      else if (mp) f.executor = 'mp';
      return validate(VllmLogFactsSchema, compact(f));
    },
    () => ({ errors: [] }),
  );
}
