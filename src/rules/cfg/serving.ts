/** R40 vLLM flags, R41 model exists, R42 parallel layout, R43 memory fit, R44 FP8 (cfg parts). */
import type { Finding, Severity } from '../types.js';
import { cmdText, G, lineText, mk, N, worst } from './context.js';
import type { CfgFile, CfgRule } from './context.js';
import {
  L20_CC,
  L20_MIB,
  MODELS,
  MODELS_NONEXISTENT,
  QUANTIZED_NAME,
  SINGLE_SIZE_FAMILIES,
  VLLM_REMOVED_FLAGS,
} from './data.js';
import { launchesOf } from './launch.js';
import type { Launch } from './launch.js';

/** Evidence for a launch: the command's line, or for Python the source line (the call itself when read from prose). */
export const ev = (f: CfgFile, l: Launch, line: number): string =>
  l.cmd ? cmdText(f, l.cmd, line) : f.kind === 'markdown' && l.call ? l.call.text : lineText(f, line);

export const R40: CfgRule = {
  id: 'R40',
  title: 'Removed or invented vLLM flag: vLLM exits at start',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const l of launchesOf(f)) {
      const used = l.cli
        ? l.cli.flags
            .filter((x) => VLLM_REMOVED_FLAGS[x.name])
            .map((x) => ({ name: x.name, line: x.line, shown: x.name }))
        : Object.keys(l.call?.kwargs ?? {})
            .filter((k) => VLLM_REMOVED_FLAGS[`--${k.replace(/_/g, '-')}`])
            .map((k) => ({ name: `--${k.replace(/_/g, '-')}`, line: l.call?.kwLines[k] ?? l.line, shown: k }));
      for (const u of used) {
        const r = VLLM_REMOVED_FLAGS[u.name] as { why: string; fix: string };
        const err = l.cli
          ? `error: unrecognized arguments: ${u.name}`
          : `TypeError: unexpected keyword argument '${u.shown}'`;
        out.push(
          mk(
            this,
            'blocker',
            f,
            u.line,
            `${ev(f, l, u.line)} → ${u.name} ${r.why}; vLLM rejects it: "${err}" (vLLM version unknown: assuming the current release; live: \`vllm serve --help=all\`)`,
            r.fix.replace(/`--([\w-]+)`/g, l.cli ? '`--$1`' : '`$1`'),
          ),
        );
      }
    }
    return out;
  },
};

/** Known or name-derived size; `missing` when the id is known not to exist. */
export function modelInfo(id: string): {
  missing?: { replacement: string; why: string };
  paramsB?: number;
  bytes: number;
  quantized: boolean;
  source: string;
} {
  const key = id.toLowerCase();
  const bad = MODELS_NONEXISTENT[key];
  if (bad)
    return {
      missing: { replacement: bad, why: 'on the known non-existent list' },
      bytes: 2,
      quantized: false,
      source: 'list',
      ...sizeFromName(id),
    };
  for (const fam of SINGLE_SIZE_FAMILIES)
    if (fam.re.test(id))
      return {
        missing: { replacement: fam.replacement, why: `${fam.family} exists only as ${fam.size}` },
        bytes: 2,
        quantized: false,
        source: 'family',
        ...sizeFromName(id),
      };
  const m = MODELS[key];
  if (m) return { paramsB: m.paramsB, bytes: m.bytes, quantized: !!m.quantized, source: 'model card' };
  return { bytes: 2, quantized: QUANTIZED_NAME.test(id), source: 'the name', ...sizeFromName(id) };
}

function sizeFromName(id: string): { paramsB?: number } {
  const m = /(?:^|[-_/])(\d+(?:\.\d+)?)[bB](?=$|[-_.])/.exec(id);
  return m ? { paramsB: Number(m[1]) } : {};
}

export const R41: CfgRule = {
  id: 'R41',
  title: 'Model does not exist',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const l of launchesOf(f)) {
      if (!l.model || l.model.value.startsWith('/') || l.model.value.startsWith('.')) continue;
      const info = modelInfo(l.model.value);
      if (!info.missing) continue;
      out.push(
        mk(
          this,
          'blocker',
          f,
          l.model.line,
          `${ev(f, l, l.model.line)} → ${l.model.value} does not exist (${info.missing.why}): the download fails before any GPU work. Presence and hash on every node: not checked (needs host)`,
          `Use a real model, e.g. \`${info.missing.replacement}\`, at one path on every node (\`/opt/l20/models/<name>\`).`,
        ),
      );
    }
    return out;
  },
};

const GiB = 2 ** 30;
const fmt = (x: number): string => (x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1));

/** Weight size of a launch, with the arithmetic spelled out, when the size is known. */
export function weights(l: Launch): { gib: number; text: string } | undefined {
  if (!l.model) return undefined;
  const info = modelInfo(l.model.value);
  if (info.paramsB === undefined) return undefined;
  const q = l.quantization?.value.toLowerCase();
  const bytes = q === 'fp8' ? 1 : q && /awq|gptq|int4|bitsandbytes/.test(q) ? 0.5 : info.bytes;
  const gib = (info.paramsB * 1e9 * bytes) / GiB;
  return {
    gib,
    text: `${l.model.value} ≈ ${info.paramsB}B params (${info.source}) × ${bytes} B${q ? ` (${q})` : bytes === 1 ? ' (FP8 checkpoint)' : ' (BF16)'} ≈ ${fmt(gib)} GiB`,
  };
}

const perGpuGiB = (l: Launch): number => (l.gpuMemoryUtilization * L20_MIB) / 1024;

export const R42: CfgRule = {
  id: 'R42',
  title: 'Parallel layout wrong for 2 × 8 PCIe L20s',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const l of launchesOf(f)) {
      const why: Array<[Severity, string]> = [];
      const w = weights(l);
      const u = perGpuGiB(l);
      const fits = (gpus: number): boolean => !!w && w.gib <= 0.9 * u * gpus;
      if (l.tp * l.pp * l.dp > G * N)
        why.push([
          'blocker',
          `TP × PP × DP = ${l.tp} × ${l.pp} × ${l.dp} = ${l.tp * l.pp * l.dp} > G × N = ${G * N} GPUs`,
        ]);
      if (l.tp > G)
        why.push([
          'high',
          `TP ${l.tp} > G = ${G} GPUs per node: every layer's all-reduces (2 per layer per token) cross the 25GbE fabric`,
        ]);
      if (w && fits(1) && l.tp * l.pp > 1)
        why.push([
          'high',
          `${w.text} fits one L20 (0.9 × ${l.gpuMemoryUtilization} × 46,068 MiB ≈ ${fmt(0.9 * u)} GiB): distributing it only adds communication; use data parallelism`,
        ]);
      else if (w && l.tp > 2 && [1, 2, 4].some((t) => t < l.tp && fits(t)))
        why.push([
          'medium',
          `TP ${l.tp} on PCIe-only GPUs when TP ${[1, 2, 4].find((t) => fits(t))} fits: vLLM turns custom all-reduce off beyond 2 PCIe GPUs`,
        ]);
      if (w && !fits(G) && !(l.tp === G && l.pp === N))
        why.push(['high', `${w.text} needs two nodes: use TP ${G} × PP ${N}, not TP ${l.tp} × PP ${l.pp}`]);
      if (why.length === 0) continue;
      const small = !w || fits(1);
      const model = l.model ? (modelInfo(l.model.value).missing?.replacement ?? l.model.value) : '<model>';
      const fix = small
        ? l.form === 'python'
          ? `One engine per GPU: \`LLM(model="${model}", tensor_parallel_size=1)\`, or serve with data parallelism: \`vllm serve ${model} --data-parallel-size 16 --data-parallel-size-local 8\``
          : `Data parallelism: node 1 \`vllm serve ${model} --data-parallel-size 16 --data-parallel-size-local 8 --data-parallel-address <ip1> --data-parallel-rpc-port 13345\`; node 2 the same with \`--headless --data-parallel-start-rank 8\``
        : `\`-tp 8 -pp 2 --distributed-executor-backend ray\` on node 1 only`;
      out.push(
        mk(
          this,
          worst(why.map(([s]) => s)),
          f,
          l.tpLine,
          `${ev(f, l, l.tpLine)} → ${why.map(([, t]) => t).join('; ')}`,
          `${fix}.`,
        ),
      );
    }
    return out;
  },
};

export const R43: CfgRule = {
  id: 'R43',
  title: 'Weights leave under 10 % of GPU memory for the KV cache',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const l of launchesOf(f)) {
      const w = weights(l);
      if (!w) continue;
      const gpus = Math.min(l.tp * l.pp, G * N);
      const budget = perGpuGiB(l) * gpus;
      if (w.gib <= 0.9 * budget) continue;
      const line = l.model?.line ?? l.line;
      out.push(
        mk(
          this,
          'medium',
          f,
          line,
          `${ev(f, l, line)} → ${w.text}; budget ${l.gpuMemoryUtilization} × 46,068 MiB × ${gpus} GPU${gpus === 1 ? '' : 's'} (TP ${l.tp} × PP ${l.pp}) ≈ ${fmt(budget)} GiB: weights fill ${Math.round((100 * w.gib) / budget)} %`,
          'Pick a smaller or quantized model, or more GPUs per replica (TP × PP); keep ≥ 10 % (better 25 %) for the KV cache.',
        ),
      );
    }
    return out;
  },
};

export const R44: CfgRule = {
  id: 'R44',
  title: 'FP8 quantization requested where it cannot apply',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const l of launchesOf(f)) {
      if (l.quantization?.value.toLowerCase() !== 'fp8' || !l.model) continue;
      // The cluster's GPU is the L20, compute capability 8.9: FP8 is supported, so only the checkpoint matters.
      const info = modelInfo(l.model.value);
      if (!info.quantized || info.missing) continue;
      out.push(
        mk(
          this,
          'medium',
          f,
          l.quantization.line,
          `${ev(f, l, l.quantization.line)} → ${l.model.value} is already quantized (${info.source === 'model card' ? 'its config.json has quantization_config' : 'its name says so'}); GPU assumed L20 (CC ${L20_CC}, FP8 capable). config.json: not checked (needs host)`,
          "Drop `--quantization fp8`; vLLM reads the checkpoint's own quantization.",
        ),
      );
    }
    return out;
  },
};
