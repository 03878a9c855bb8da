/**
 * Data the cfg rules consult — tables, not logic. Each table says where it comes from; update the table, not
 * the rules, when a release changes the facts. Values follow docs/RULES.md where it states them.
 */

// ─── NCCL ───────────────────────────────────────────────────────────────────────────────────────────────

/** When the files state no NCCL version, rules assume the current release (NCCL ≥ 2.24 behaviour). */
export const CURRENT_NCCL = '2.29';

/** NCCL_ALGO tokens (lower-case, `_` dropped is NOT accepted by NCCL) and the releases that know them. */
export const NCCL_ALGOS: Record<string, { since?: string; until?: string }> = {
  ring: {},
  tree: {},
  collnet: { until: '2.13' },
  collnetdirect: { since: '2.14' },
  collnetchain: { since: '2.14' },
  nvls: { since: '2.17' },
  nvlstree: { since: '2.18' },
  pat: { since: '2.23' },
};
export const NCCL_PROTOS: Record<string, { since?: string; until?: string }> = { ll: {}, ll128: {}, simple: {} };
/** Function prefixes of `func:list` entries. */
export const NCCL_FUNCS = ['broadcast', 'reduce', 'allgather', 'reducescatter', 'allreduce'];
/** From this release a bad token fails every communicator init (earlier ones ignored it). */
export const NCCL_STRICT_PARSE_SINCE = '2.24';
/** From this release NCCL_IB_GID_INDEX should not be set (NCCL troubleshooting guide). */
export const NCCL_GID_AUTO_SINCE = '2.21';

/** Removed or renamed variables (docs/RULES.md R03). NCCL never warns about unknown names. */
export const NCCL_REMOVED: Record<string, { removedIn: string; replacement?: string }> = {
  NCCL_IB_CUDA_SUPPORT: { removedIn: '2.4.0' },
  NCCL_IB_GDR_LEVEL: { removedIn: '2.4.0', replacement: 'NCCL_NET_GDR_LEVEL' },
  NCCL_SINGLE_RING_THRESHOLD: { removedIn: '2.3' },
  NCCL_LL_THRESHOLD: { removedIn: '2.5' },
  NCCL_TREE_THRESHOLD: { removedIn: '2.5' },
};

/** Defaults that gain nothing when restated (docs/RULES.md R10). */
export const NCCL_DEFAULTS: Record<string, string> = {
  NCCL_BUFFSIZE: '4194304',
  NCCL_IB_TIMEOUT: '20',
  NCCL_IB_RETRY_CNT: '7',
  NCCL_CROSS_NIC: '2',
  NCCL_IB_GID_INDEX: '-1',
};

/** Topology levels, closest first; legacy integers index this list (anything above 4 is SYS). */
export const NCCL_LEVELS = ['LOC', 'PIX', 'PXB', 'PHB', 'SYS'];

// ─── NIC software stack ─────────────────────────────────────────────────────────────────────────────────

/** MLNX_OFED long-term-support branches; all others were short-lived (docs/RULES.md R30). */
export const OFED_LTS = ['4.9', '5.4', '5.8', '23.10', '24.10'];
/** The last standalone MLNX_OFED branch; after it only DOCA-OFED. */
export const OFED_LAST = '24.10';
/** Versions that were never published, with the release that was (docs/RULES.md R30, docs/STAGES.md §3.3). */
export const OFED_UNPUBLISHED: Record<string, string> = { '23.10-1.1.8.0': '23.10-1.1.9.0' };

// ─── NVIDIA driver branches ─────────────────────────────────────────────────────────────────────────────

/**
 * Data-center driver branches: lifecycle (NVIDIA "Data Center Driver lifecycle" table, as of docs/RULES.md) and
 * the newest CUDA the branch's driver API supports. `nfb` = New Feature Branch (short-lived, not for
 * production); `eol` = past end of support; `ltsb`/`pb` = long-term / production branch.
 */
export const DRIVER_BRANCHES: Record<number, { status: 'ltsb' | 'pb' | 'nfb' | 'eol'; cuda: string; note: string }> = {
  470: { status: 'eol', cuda: '11.4', note: 'R470 LTSB, EOL July 2024' },
  525: { status: 'eol', cuda: '12.0', note: 'R525 production branch, EOL' },
  535: { status: 'eol', cuda: '12.2', note: 'R535 LTSB, EOL June 2026' },
  545: { status: 'nfb', cuda: '12.3', note: 'R545 New Feature Branch' },
  550: { status: 'eol', cuda: '12.4', note: 'R550 production branch, EOL' },
  555: { status: 'nfb', cuda: '12.5', note: 'R555 New Feature Branch' },
  560: { status: 'nfb', cuda: '12.6', note: 'R560 New Feature Branch' },
  565: { status: 'nfb', cuda: '12.7', note: 'R565 New Feature Branch' },
  570: { status: 'pb', cuda: '12.8', note: 'R570 production branch' },
  575: { status: 'nfb', cuda: '12.9', note: 'R575 New Feature Branch' },
  580: { status: 'ltsb', cuda: '13.0', note: 'R580 LTSB, EOL June 2028' },
};
/** The recommended driver package (docs/STAGES.md §3.7). */
export const DRIVER_FIX = 'nvidia-driver-580-server-open';

// ─── GPU and models ─────────────────────────────────────────────────────────────────────────────────────

/** NVIDIA L20: memory.total as nvidia-smi reports it with ECC on, and compute capability. */
export const L20_MIB = 46068;
export const L20_CC = '8.9';

/**
 * Known model ids (lower-case) → total parameters in billions and the checkpoint's native weight bytes per
 * parameter (1 = FP8 checkpoint with a `quantization_config`, 2 = BF16/FP16). Sizes from the model cards.
 */
export const MODELS: Record<string, { paramsB: number; bytes: number; quantized?: boolean }> = {
  'deepseek-ai/deepseek-v3': { paramsB: 685, bytes: 1, quantized: true },
  'deepseek-ai/deepseek-v3-0324': { paramsB: 685, bytes: 1, quantized: true },
  'deepseek-ai/deepseek-r1': { paramsB: 685, bytes: 1, quantized: true },
  'deepseek-ai/deepseek-r1-0528': { paramsB: 685, bytes: 1, quantized: true },
  'deepseek-ai/deepseek-r1-distill-llama-8b': { paramsB: 8.03, bytes: 2 },
  'deepseek-ai/deepseek-r1-distill-qwen-7b': { paramsB: 7.62, bytes: 2 },
  'deepseek-ai/deepseek-r1-distill-qwen-32b': { paramsB: 32.8, bytes: 2 },
  'deepseek-ai/deepseek-r1-distill-llama-70b': { paramsB: 70.6, bytes: 2 },
  'meta-llama/llama-3.1-8b-instruct': { paramsB: 8.03, bytes: 2 },
  'meta-llama/llama-3.1-70b-instruct': { paramsB: 70.6, bytes: 2 },
  'meta-llama/llama-3.3-70b-instruct': { paramsB: 70.6, bytes: 2 },
  'qwen/qwen2.5-7b-instruct': { paramsB: 7.62, bytes: 2 },
  'qwen/qwen2.5-32b-instruct': { paramsB: 32.8, bytes: 2 },
  'qwen/qwen2.5-72b-instruct': { paramsB: 72.7, bytes: 2 },
  'qwen/qwen3-8b': { paramsB: 8.19, bytes: 2 },
  'qwen/qwen3-32b': { paramsB: 32.8, bytes: 2 },
};

/** Model ids known not to exist (docs/RULES.md R41), with a real model of the size the name suggests. */
export const MODELS_NONEXISTENT: Record<string, string> = {
  'deepseek-ai/deepseek-v3-8b': 'deepseek-ai/DeepSeek-R1-Distill-Llama-8B',
};

/**
 * Families published in one size only: any other size suffix names a model that does not exist.
 * DeepSeek-V3 and DeepSeek-R1 exist only as the 671B MoE (685B with the MTP module); the small "R1" models
 * are Distill-Qwen / Distill-Llama.
 */
export const SINGLE_SIZE_FAMILIES: Array<{ re: RegExp; family: string; size: string; replacement: string }> = [
  {
    re: /^deepseek-ai\/deepseek-(?:v3|r1)(?:-\d{4})?-(\d+(?:\.\d+)?)b$/i,
    family: 'DeepSeek-V3/R1',
    size: '671B',
    replacement: 'deepseek-ai/DeepSeek-R1-Distill-Llama-8B',
  },
];

/** Checkpoint names that are already quantized (R44). */
export const QUANTIZED_NAME =
  /(?:^|[-_/.])(?:fp8|awq|gptq|int4|int8|w8a8|w4a16|nvfp4|mxfp4|bnb|4bit|8bit|gguf)(?:$|[-_.])/i;

// ─── Ray / vLLM ─────────────────────────────────────────────────────────────────────────────────────────

/** vLLM flags that are gone or never existed (docs/RULES.md R40). */
export const VLLM_REMOVED_FLAGS: Record<string, { why: string; fix: string }> = {
  '--engine-use-ray': {
    why: 'removed in vllm-project/vllm#8126',
    fix: 'delete `--engine-use-ray` (the engine runs in the API server process)',
  },
  '--worker-use-ray': {
    why: 'removed; now `--distributed-executor-backend ray`',
    fix: 'replace `--worker-use-ray` with `--distributed-executor-backend ray`',
  },
  '--ray-address': {
    why: 'never existed: vLLM joins the running Ray cluster, or reads RAY_ADDRESS',
    fix: 'delete `--ray-address …`; vLLM joins the running cluster (set `RAY_ADDRESS=<head-ip>:6379` only if it does not)',
  },
};
