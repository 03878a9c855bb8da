/**
 * `vllm bench serve` against a modelled server (docs/STAGES.md §4.3): the numbers come from the serving
 * engines' performance model (model/vllm-runtime.ts) for the workload asked for — engines from the
 * layout, requests spread over them, TPOT = t₀ + k·b, TTFT from the prefill of a wave of prompts —
 * with seeded jitter, so the same seed and state print the same block. The result block follows
 * fixtures/corpus/benchmark_serving__vllm-0.10-qwen7b-2node-a100-40gb.txt plus the lines newer
 * releases print (Failed requests, Maximum request concurrency, Peak output token throughput, Peak
 * concurrent requests); the saved JSON follows vllm/benchmarks/serve.py's result keys.
 */
import { posix } from 'node:path';
import type { ExecResult } from 'just-bash';
import { engineMath, vllmListening, type VllmServer } from '../model/vllm-runtime.js';
import { endLoad, startLoad } from '../model/vllm-load.js';
import type { ProgramInvocation } from '../shell/programs.js';
import { toolIo } from '../system/live.js';
import { rng } from '../util/prng.js';

const VALUE_OPTS = new Set([
  '--backend',
  '--base-url',
  '--host',
  '--port',
  '--endpoint',
  '--model',
  '--tokenizer',
  '--dataset-name',
  '--random-input-len',
  '--random-output-len',
  '--random-range-ratio',
  '--max-concurrency',
  '--num-prompts',
  '--seed',
  '--result-dir',
  '--result-filename',
  '--request-rate',
  '--percentile-metrics',
  '--metric-percentiles',
]);
const SWITCHES = new Set(['--save-result', '--ignore-eos', '--disable-tqdm', '--trust-remote-code']);

const runs = new WeakMap<object, number>();

function parse(args: readonly string[]): { opts: Map<string, string[]>; bad: string[] } {
  const opts = new Map<string, string[]>();
  const bad: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (SWITCHES.has(name)) opts.set(name, ['True']);
    else if (VALUE_OPTS.has(name)) opts.set(name, [eq > 0 ? a.slice(eq + 1) : (args[++i] ?? '')]);
    else if (name === '--metadata') {
      const vals: string[] = [];
      while (args[i + 1] !== undefined && !(args[i + 1] as string).startsWith('--')) vals.push(args[++i] as string);
      opts.set(name, vals);
    } else bad.push(a);
  }
  return { opts, bad };
}

const row = (label: string, value: string | number, dec = 2): string =>
  `${label.padEnd(40)} ${(typeof value === 'number' ? value.toFixed(dec) : value).padEnd(10)}`;

function pct(sorted: number[], p: number): number {
  const i = (sorted.length - 1) * p;
  const lo = Math.floor(i);
  const hi = Math.ceil(i);
  return (sorted[lo] ?? 0) + ((sorted[hi] ?? 0) - (sorted[lo] ?? 0)) * (i - lo);
}

export interface BenchNumbers {
  completed: number;
  durationS: number;
  totalInput: number;
  totalOutput: number;
  ttft: number[];
  tpot: number[];
  itlMean: number;
  itlMedian: number;
  itlP99: number;
  peakOutput: number;
  concurrency: number;
}

/** The benchmark's outcome on `s` for the workload; deterministic in `key`. */
export function benchNumbers(
  s: VllmServer,
  w: { prompts: number; input: number; output: number; concurrency: number },
  key: Array<string | number>,
): BenchNumbers {
  const a = s.args;
  const math = engineMath(s.shape, a, a.backend === 'ray' && a.pp > 1);
  const engines = a.backend === 'ray' ? 1 : a.dp;
  const perEngine = Math.max(1, Math.min(256, Math.ceil(w.concurrency / engines)));
  const r = rng(...key);
  const tpotBase = math.tpotMs(perEngine, w.input + w.output / 2);
  const prefill = math.prefillMs(perEngine * w.input);
  const ttft: number[] = [];
  const tpot: number[] = [];
  for (let i = 0; i < w.prompts; i++) {
    ttft.push(prefill * (0.92 + r.next() * 0.16) + 1.5 + (r.next() < 0.02 ? prefill * 0.8 : 0));
    tpot.push(tpotBase * (0.985 + r.next() * 0.03));
  }
  const waves = Math.ceil(w.prompts / w.concurrency);
  const meanTtft = ttft.reduce((x, y) => x + y, 0) / ttft.length;
  const meanTpot = tpot.reduce((x, y) => x + y, 0) / tpot.length;
  const durationS = (waves * (meanTtft + (w.output - 1) * meanTpot * 1.004)) / 1000;
  return {
    completed: w.prompts,
    durationS,
    totalInput: w.prompts * w.input - r.int(0, Math.ceil(w.prompts / 12)),
    totalOutput: w.prompts * w.output,
    ttft,
    tpot,
    itlMean: meanTpot,
    itlMedian: tpotBase * 0.99,
    itlP99: tpotBase * (1.28 + r.next() * 0.1),
    peakOutput: Math.floor(w.concurrency * (1000 / tpotBase)),
    concurrency: w.concurrency,
  };
}

export async function benchServe(inv: ProgramInvocation, args: readonly string[]): Promise<ExecResult> {
  const io = toolIo(inv.ctx, inv.machine.clock);
  const m = inv.machine;
  const { opts, bad } = parse(args);
  if (bad.length > 0)
    return {
      stdout: '',
      stderr: `usage: vllm bench serve [options]\nvllm bench serve: error: unrecognized arguments: ${bad.join(' ')}\n`,
      exitCode: 2,
    };
  const get = (k: string, d = ''): string => opts.get(k)?.[0] ?? d;
  const num = (k: string, d: number): number => (opts.has(k) ? Number(get(k)) : d);
  const w = {
    prompts: num('--num-prompts', 1000),
    input: num('--random-input-len', 1024),
    output: num('--random-output-len', 128),
    concurrency: num('--max-concurrency', num('--num-prompts', 1000)),
  };
  const model = get('--model');
  const base = get('--base-url', `http://${get('--host', '127.0.0.1')}:${get('--port', '8000')}`);
  const url = /^http:\/\/([^:/]+):(\d+)/.exec(base);
  const t0 = new Date(m.clock.now()).toISOString();
  await io.out(
    `INFO ${t0.slice(5, 7)}-${t0.slice(8, 10)} ${t0.slice(11, 19)} [__init__.py:216] Automatically detected platform cuda.\n`,
  );
  await io.out(
    `Namespace(subparser='bench', bench_type='serve', seed=${num('--seed', 0)}, num_prompts=${w.prompts}, dataset_name='${get('--dataset-name', 'random')}', backend='${get('--backend', 'vllm')}', base_url='${base}', model='${model}', tokenizer='${get('--tokenizer')}', random_input_len=${w.input}, random_output_len=${w.output}, max_concurrency=${w.concurrency}, request_rate=inf, save_result=${opts.has('--save-result') ? 'True' : 'False'}, result_dir='${get('--result-dir')}')\n`,
  );
  const tok = get('--tokenizer', model);
  if (tok.startsWith('/') && !(await inv.ctx.fs.exists(posix.join(tok, 'tokenizer_config.json')))) {
    return {
      ...io.result(1),
      stderr: `OSError: Can't load tokenizer for '${tok}'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure '${tok}' is the correct path to a directory containing all relevant files for a PreTrainedTokenizerFast tokenizer.\n`,
    };
  }
  await io.out(
    `INFO ${t0.slice(5, 7)}-${t0.slice(8, 10)} ${t0.slice(11, 19)} [datasets.py:614] Sampling input_len from [${w.input}, ${w.input}] and output_len from [${w.output}, ${w.output}]\nStarting initial single prompt test run...\nWaiting for endpoint to become up in 600 seconds\n`,
  );
  const target = url ? vllmListening(inv.cluster, m, url[1]!, Number(url[2])) : 'noroute';
  const fail = async (why: string): Promise<ExecResult> => {
    await io.err(
      `ValueError: Initial test run failed - Please make sure benchmark arguments are correctly specified. Error: ${why}\n`,
    );
    return io.result(1);
  };
  if (typeof target === 'string' || target.kind !== 'api' || target.server.state !== 'ready') {
    await io.sleep(600_000);
    return fail(
      typeof target === 'string'
        ? `Cannot connect to host ${url?.[1]}:${url?.[2]} ssl:default [Connect call failed ('${url?.[1]}', ${url?.[2]})]`
        : 'Timeout waiting for the endpoint to become ready',
    );
  }
  const s = target.server;
  if (s.args.apiKey && inv.ctx.env.get('OPENAI_API_KEY') !== s.args.apiKey) return fail('Unauthorized');
  if (model !== s.args.servedName) return fail(`The model \`${model}\` does not exist.`);
  await io.out(
    `Initial test run completed. Starting main benchmark run...\nTraffic request rate: inf\nBurstiness factor: 1.0 (Poisson process)\nMaximum request concurrency: ${w.concurrency}\n`,
  );
  const n = (runs.get(m) ?? 0) + 1;
  runs.set(m, n);
  const b = benchNumbers(s, w, [
    m.seed,
    m.hostname,
    'vllm-bench',
    num('--seed', 0),
    s.args.dp,
    s.args.tp,
    s.args.pp,
    w.prompts,
    w.concurrency,
    n,
  ]);
  // The engines are busy for the run (nvidia-smi shows it on every node of the group) and /metrics
  // moves at the run's rates (model/vllm-load.ts).
  startLoad(inv.cluster, s, { ...w, totalInput: b.totalInput, ttftMs: b.ttft }, m.clock.now(), b.durationS);
  const steps = 4;
  let completed = true;
  try {
    for (let i = 1; i <= steps; i++) {
      if (!(await io.sleep((b.durationS * 1000) / steps))) {
        completed = false;
        break;
      }
      const done = Math.round((w.prompts * i) / steps);
      await io.err(
        `\r${String(Math.round((100 * done) / w.prompts)).padStart(3)}%|${'█'.repeat(Math.round((10 * done) / w.prompts)).padEnd(10)}| ${done}/${w.prompts} [${fmtT((b.durationS * i) / steps)}<${fmtT((b.durationS * (steps - i)) / steps)}, ${(w.prompts / b.durationS).toFixed(2)}it/s]${i === steps ? '\n' : ''}`,
      );
    }
  } finally {
    endLoad(s, completed, m.clock.now());
  }
  const ttft = [...b.ttft].sort((x, y) => x - y);
  const tpot = [...b.tpot].sort((x, y) => x - y);
  const mean = (xs: number[]): number => xs.reduce((x, y) => x + y, 0) / xs.length;
  const block = [
    'tip: install termplotlib and gnuplot to plot the metrics',
    '============ Serving Benchmark Result ============',
    row('Successful requests:', String(b.completed)),
    row('Failed requests:', '0'),
    row('Maximum request concurrency:', String(w.concurrency)),
    row('Benchmark duration (s):', b.durationS),
    row('Total input tokens:', String(b.totalInput)),
    row('Total generated tokens:', String(b.totalOutput)),
    row('Request throughput (req/s):', b.completed / b.durationS),
    row('Output token throughput (tok/s):', b.totalOutput / b.durationS),
    row('Peak output token throughput (tok/s):', b.peakOutput),
    row('Peak concurrent requests:', w.concurrency),
    row('Total Token throughput (tok/s):', (b.totalInput + b.totalOutput) / b.durationS),
    '---------------Time to First Token----------------',
    row('Mean TTFT (ms):', mean(ttft)),
    row('Median TTFT (ms):', pct(ttft, 0.5)),
    row('P99 TTFT (ms):', pct(ttft, 0.99)),
    '-----Time per Output Token (excl. 1st token)------',
    row('Mean TPOT (ms):', mean(tpot)),
    row('Median TPOT (ms):', pct(tpot, 0.5)),
    row('P99 TPOT (ms):', pct(tpot, 0.99)),
    '---------------Inter-token Latency----------------',
    row('Mean ITL (ms):', b.itlMean),
    row('Median ITL (ms):', b.itlMedian),
    row('P99 ITL (ms):', b.itlP99),
    '==================================================',
  ];
  await io.out(`${block.join('\n')}\n`);
  if (opts.has('--save-result')) {
    const dir = get('--result-dir', '.');
    const d = new Date(m.clock.now()).toISOString();
    const dt = `${d.slice(0, 4)}${d.slice(5, 7)}${d.slice(8, 10)}-${d.slice(11, 13)}${d.slice(14, 16)}${d.slice(17, 19)}`;
    const result: Record<string, unknown> = {
      date: dt,
      endpoint_type: 'vllm',
      label: null,
      model_id: model,
      tokenizer_id: tok,
      num_prompts: w.prompts,
      request_rate: 'inf',
      burstiness: 1.0,
      max_concurrency: w.concurrency,
      duration: b.durationS,
      completed: b.completed,
      failed: 0,
      total_input_tokens: b.totalInput,
      total_output_tokens: b.totalOutput,
      request_throughput: b.completed / b.durationS,
      output_throughput: b.totalOutput / b.durationS,
      total_token_throughput: (b.totalInput + b.totalOutput) / b.durationS,
      max_output_tokens_per_s: b.peakOutput,
      max_concurrent_requests: w.concurrency,
      mean_ttft_ms: mean(ttft),
      median_ttft_ms: pct(ttft, 0.5),
      p99_ttft_ms: pct(ttft, 0.99),
      mean_tpot_ms: mean(tpot),
      median_tpot_ms: pct(tpot, 0.5),
      p99_tpot_ms: pct(tpot, 0.99),
      mean_itl_ms: b.itlMean,
      median_itl_ms: b.itlMedian,
      p99_itl_ms: b.itlP99,
    };
    for (const kv of opts.get('--metadata') ?? []) {
      const eq = kv.indexOf('=');
      if (eq > 0) result[kv.slice(0, eq).trim()] = kv.slice(eq + 1).trim();
    }
    const file = posix.join(dir, `vllm-infqps-concurrency${w.concurrency}-${model.split('/').pop()}-${dt}.json`);
    const text = JSON.stringify(result).replace(/","/g, '", "').replace(/":/g, '": ').replace(/,"/g, ', "');
    try {
      await inv.ctx.fs.mkdir(dir, { recursive: true });
      await inv.ctx.fs.writeFile(file, text);
    } catch {
      await io.err(`PermissionError: [Errno 13] Permission denied: '${file}'\n`);
      return io.result(1);
    }
  }
  return io.result(0);
}

function fmtT(s: number): string {
  const t = Math.round(s);
  return `${String(Math.floor(t / 60)).padStart(2, '0')}:${String(t % 60).padStart(2, '0')}`;
}
