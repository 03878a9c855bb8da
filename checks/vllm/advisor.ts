/**
 * The layout advisor (docs/STAGES.md §3.11): how to spread one model over G GPUs per node × N nodes of
 * PCIe-only L20s joined by 25GbE. A pure function of the model's shape, the GPUs' memory.total and the
 * P2P matrix; it returns the layout with every step of its arithmetic, so the operator can check it.
 *
 * Per GPU U = 0.9 × memory.total; with TP × PP = t × p a GPU holds ≈ W/(t·p) and must keep ≥ 25 % of U
 * for the KV cache, so a layout fits when W/(t·p) ≤ 0.75 U. First match wins:
 *  1. W ≤ 0.75 U → data parallel, TP 1 (one engine per GPU); Ray unused.
 *  2. TP 2, then 4, then 8 inside a node (t must divide the attention heads) → DP G·N/t × TP t. Each step
 *     up is justified only by memory: beyond two PCIe GPUs vLLM turns its custom all-reduce off.
 *  3. TP = G, PP = N over Ray (the only layout whose cross-node traffic is one activation per layer boundary).
 *  4. Otherwise refuse (R43).
 */
import type { ModelShape } from './catalog.js';

export interface AdvisorInput {
  model: ModelShape;
  /** GPUs per node (G). */
  gpusPerNode: number;
  /** Nodes (N). */
  nodes: number;
  /** memory.total of the smallest GPU, MiB as nvidia-smi reports it. */
  memoryMiB: number;
  /** Whether GPU pairs inside a node report P2P `OK` (nvidia-smi topo -p2p r); undefined = not measured. */
  p2pOk?: boolean;
  /** `--quantization` the operator asks for (only `fp8` changes the arithmetic). */
  quantization?: string;
}

export interface Layout {
  tp: number;
  pp: number;
  /** Data-parallel engines in the cluster, and per node. */
  dp: number;
  dpLocal: number;
  backend: 'mp' | 'ray';
}

export type Advice =
  | {
      ok: true;
      kind: 'dp' | 'tp' | 'tp-pp';
      layout: Layout;
      usesRay: boolean;
      lines: string[];
      notes: string[];
      rule?: undefined;
    }
  | { ok: false; rule: 'R43' | 'R44'; reason: string; lines: string[]; notes: string[] };

export const KV_RESERVE = 0.25;
export const UTILIZATION = 0.9;

const GiB = 2 ** 30;
const gib = (b: number): string => `${(b / GiB).toFixed(2)} GiB`;
const int = (n: number): string => Math.round(n).toLocaleString('en-US');

export function describeLayout(l: Layout): string {
  if (l.pp > 1) return `TP ${l.tp} × PP ${l.pp} (${l.backend})`;
  if (l.tp > 1) return `DP ${l.dp} × TP ${l.tp} (${l.dpLocal} engine${l.dpLocal === 1 ? '' : 's'} per node)`;
  return `DP ${l.dp} (TP 1, ${l.dpLocal} engines per node)`;
}

export function adviseLayout(input: AdvisorInput): Advice {
  const { model, gpusPerNode: G, nodes: N, memoryMiB } = input;
  const lines: string[] = [];
  const notes: string[] = [];
  const U = UTILIZATION * memoryMiB * 2 ** 20;
  const budget = (1 - KV_RESERVE) * U;
  lines.push(
    `G = ${G} GPUs per node, N = ${N} node${N === 1 ? '' : 's'}; memory.total ${int(memoryMiB)} MiB → U = ${UTILIZATION} × ${int(memoryMiB)} MiB = ${int(UTILIZATION * memoryMiB)} MiB (${gib(U)}) per GPU; weights may use 0.75 U = ${gib(budget)} (≥ 25 % stays for the KV cache)`,
  );

  let W = model.weightBytes;
  const dtype = model.quantization ? `${model.quantization} checkpoint` : model.dtype;
  lines.push(
    `W = ${int(W)} B = ${gib(W)} (${dtype}; ${model.layers} layers, ${model.heads} attention heads, ${model.kvHeads} KV heads; from ${model.source})`,
  );
  if (input.quantization?.toLowerCase() === 'fp8') {
    if (model.quantization) {
      return {
        ok: false,
        rule: 'R44',
        reason: `--quantization fp8 on an already quantized checkpoint (quantization_config: ${model.quantization}): vLLM refuses it`,
        lines,
        notes,
      };
    }
    // The L20 is compute capability 8.9: FP8 weights are supported; BF16 → FP8 halves them.
    W = W / 2;
    lines.push(
      `--quantization fp8 on a ${model.dtype} checkpoint (L20: compute capability 8.9, FP8 capable) halves it: W = ${gib(W)}`,
    );
  }

  if (W <= budget) {
    lines.push(
      `1. W ${gib(W)} ≤ 0.75 U ${gib(budget)} → the model fits one GPU: data parallelism, ${G * N} engines of TP 1, no all-reduce at all; Ray unused`,
    );
    return {
      ok: true,
      kind: 'dp',
      layout: { tp: 1, pp: 1, dp: G * N, dpLocal: G, backend: 'mp' },
      usesRay: false,
      lines,
      notes,
    };
  }
  lines.push(`1. W ${gib(W)} > 0.75 U ${gib(budget)}: does not fit one GPU`);

  const tried: string[] = [];
  for (const t of [2, 4, 8]) {
    if (t > G || G % t !== 0) continue;
    if (model.heads % t !== 0) {
      tried.push(`TP ${t}: ${model.heads} heads are not divisible by ${t} ✗`);
      continue;
    }
    const per = W / t;
    if (per > budget) {
      tried.push(`TP ${t}: W/${t} = ${gib(per)} > ${gib(budget)} ✗`);
      continue;
    }
    tried.push(`TP ${t}: W/${t} = ${gib(per)} ≤ ${gib(budget)} ✓ (${model.heads} heads / ${t} = ${model.heads / t})`);
    lines.push(
      `2. ${tried.join('; ')} → DP ${(G * N) / t} × TP ${t}: ${G / t} engine${G / t === 1 ? '' : 's'} per node, tensor parallelism stays inside a node`,
    );
    if (t > 2)
      notes.push(
        `TP ${t} on PCIe-only GPUs: vLLM disables its custom all-reduce beyond two GPUs ("Custom allreduce is disabled …"), so every all-reduce goes through NCCL; TP ${t} is chosen only because TP ${t / 2} does not fit`,
      );
    if (input.p2pOk === false)
      notes.push(
        `GPU pairs do not report P2P OK (nvidia-smi topo -p2p r): NCCL stages TP traffic through host memory (R37); fix ACS/IOMMU in the gpudirect stage`,
      );
    return {
      ok: true,
      kind: 'tp',
      layout: { tp: t, pp: 1, dp: (G * N) / t, dpLocal: G / t, backend: 'mp' },
      usesRay: false,
      lines,
      notes,
    };
  }
  lines.push(`2. ${tried.join('; ') || 'no TP size up to G'}: no single-node layout`);

  if (N > 1) {
    const per = W / (G * N);
    if (model.heads % G !== 0) {
      lines.push(`3. TP ${G} × PP ${N}: ${model.heads} heads are not divisible by ${G} ✗`);
    } else if (per > budget) {
      lines.push(`3. TP ${G} × PP ${N}: W/${G * N} = ${gib(per)} > ${gib(budget)} ✗`);
    } else {
      lines.push(
        `3. TP ${G} × PP ${N}: W/${G * N} = ${gib(per)} ≤ ${gib(budget)} ✓ → tensor parallel inside each node, pipeline stages across nodes (one activation per stage boundary crosses the fabric), executor Ray`,
      );
      notes.push(
        `TP ${G} on PCIe-only GPUs runs without vLLM's custom all-reduce; the pipeline boundary uses NCCL over RoCE (see the nccl stage's measured busbw)`,
      );
      return {
        ok: true,
        kind: 'tp-pp',
        layout: { tp: G, pp: N, dp: 1, dpLocal: 1, backend: 'ray' },
        usesRay: true,
        lines,
        notes,
      };
    }
  }
  const total = U * G * N;
  const reason = `${model.id} needs ${gib(W)} of weights; ${G * N} L20s hold ${gib(total)} at U and ${gib(budget * G * N)} with 25 % kept for the KV cache (weights would fill ${Math.round((100 * W) / total)} % of U)`;
  lines.push(`4. refuse: ${reason}`);
  return { ok: false, rule: 'R43', reason, lines, notes };
}
