/**
 * The result block of `vllm bench serve` / `benchmarks/benchmark_serving.py` (also sglang's `bench_serving`,
 * which prints the same labels): `============ Serving Benchmark Result ============`, `Label:   value` lines,
 * section rules `---------------Time to First Token----------------`, a closing `=====` rule. Newer vLLM adds
 * `Failed requests:`, `Maximum request concurrency:`, `Peak output token throughput (tok/s):`, `Peak concurrent
 * requests:`; values are left-justified, so lines end in spaces. Every `label: number` line lands in `metrics`
 * (camelCase), the docs/DOCTOR.md names are picked out of them.
 */
import { z } from 'zod';
import { compact, guard, toNum, validate } from './common.js';
import { camel, logLines } from './log-lines.js';

export const VllmBenchFactsSchema = z.object({
  successful: z.number().optional(),
  failed: z.number().optional(),
  durationS: z.number().optional(),
  totalInputTokens: z.number().optional(),
  totalGeneratedTokens: z.number().optional(),
  requestThroughput: z.number().optional(),
  outputTokThroughput: z.number().optional(),
  peakOutputTokThroughput: z.number().optional(),
  totalTokThroughput: z.number().optional(),
  maxConcurrency: z.number().optional(),
  meanTtftMs: z.number().optional(),
  medianTtftMs: z.number().optional(),
  p99TtftMs: z.number().optional(),
  meanTpotMs: z.number().optional(),
  medianTpotMs: z.number().optional(),
  p99TpotMs: z.number().optional(),
  meanItlMs: z.number().optional(),
  medianItlMs: z.number().optional(),
  p99ItlMs: z.number().optional(),
  meanE2elMs: z.number().optional(),
  /** `Backend: sglang` and other text values. */
  backend: z.string().optional(),
  /** Every numeric `label: value` line by camelCase label. */
  metrics: z.record(z.string(), z.number()),
  /** Command-line settings seen above the block (`--num-prompts 10`). */
  numPrompts: z.number().optional(),
  inputLen: z.number().optional(),
  outputLen: z.number().optional(),
  model: z.string().optional(),
});
export type VllmBenchFacts = z.infer<typeof VllmBenchFactsSchema>;

const NAMES: Array<[RegExp, keyof VllmBenchFacts]> = [
  [/^successful requests$/i, 'successful'],
  [/^failed requests$/i, 'failed'],
  [/^benchmark duration \(s\)$/i, 'durationS'],
  [/^total input tokens$/i, 'totalInputTokens'],
  [/^total generated tokens$/i, 'totalGeneratedTokens'],
  [/^request throughput \(req\/s\)$/i, 'requestThroughput'],
  [/^output token throughput \(tok\/s\)$/i, 'outputTokThroughput'],
  [/^peak output token throughput \(tok\/s\)$/i, 'peakOutputTokThroughput'],
  [/^total token throughput \(tok\/s\)$/i, 'totalTokThroughput'],
  [/^maximum request concurrency$/i, 'maxConcurrency'],
  [/^mean ttft \(ms\)$/i, 'meanTtftMs'],
  [/^median ttft \(ms\)$/i, 'medianTtftMs'],
  [/^p99 ttft \(ms\)$/i, 'p99TtftMs'],
  [/^mean tpot \(ms\)$/i, 'meanTpotMs'],
  [/^median tpot \(ms\)$/i, 'medianTpotMs'],
  [/^p99 tpot \(ms\)$/i, 'p99TpotMs'],
  [/^mean itl \(ms\)$/i, 'meanItlMs'],
  [/^median itl \(ms\)$/i, 'medianItlMs'],
  [/^p99 itl \(ms\)$/i, 'p99ItlMs'],
  [/^mean e2el \(ms\)$/i, 'meanE2elMs'],
];

export function parseVllmBench(text: string): VllmBenchFacts {
  return guard(
    () => {
      const f: VllmBenchFacts = { metrics: {} };
      const rec = f as Record<string, unknown>;
      for (const line of logLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        const cli = /--num-prompts[=\s]+(\d+)/.exec(t);
        if (cli) f.numPrompts ??= Number(cli[1]);
        const il = /--(?:random|sonnet)-input-len[=\s]+(\d+)|--input-len[=\s]+(\d+)/.exec(t);
        if (il) f.inputLen ??= Number(il[1] ?? il[2]);
        const ol = /--(?:random|sonnet)-output-len[=\s]+(\d+)|--output-len[=\s]+(\d+)/.exec(t);
        if (ol) f.outputLen ??= Number(ol[1] ?? ol[2]);
        const mo = /--model[=\s]+(\S+)/.exec(t);
        if (mo) f.model ??= mo[1];
        const kv = /^([A-Za-z][^:]{0,80}?):\s+(\S.*?)$/.exec(t);
        if (!kv?.[1]) continue;
        const label = kv[1].trim();
        const value = (kv[2] ?? '').trim();
        const n = toNum(value);
        if (n === undefined) {
          if (/^backend$/i.test(label)) f.backend = value;
          continue;
        }
        if (Object.keys(f.metrics).length < 200) f.metrics[camel(label)] ??= n;
        for (const [re, key] of NAMES) {
          if (re.test(label) && rec[key] === undefined) rec[key] = n;
        }
      }
      return validate(VllmBenchFactsSchema, compact(f));
    },
    () => ({ metrics: {} }),
  );
}
