/**
 * The Hugging Face models the lab's `hf download` can fetch (docs/STAGES.md §3.11): Qwen2.5-7B-Instruct (the
 * default), Llama 3.1 8B and 70B Instruct (gated: a token is needed) and DeepSeek-V3 (too large for 16
 * L20s). Their config.json values and weight sizes (`metadata.total_size` of the safetensors index) are
 * the published ones; the tutorial's `deepseek-ai/deepseek-v3-8b` is not here because it does not exist.
 *
 * A downloaded model is files, as on the real host: config.json, generation_config.json, tokenizer
 * files, model.safetensors.index.json and the shards. Shard files hold a one-line stand-in of their
 * real size (the lab keeps no weights), so `du -sb` of a copy is small but equal wherever the copy is
 * complete; the real byte counts travel in the index and in hf/rsync's progress output.
 */

/** A float as Python's json writes it (`0.0`, `1e-06`, `1000000.0`); JS numbers would lose the form. */
export class PyFloat {
  constructor(readonly text: string) {}
}
const F = (text: string): PyFloat => new PyFloat(text);

/** `json.dumps(obj, indent=2, sort_keys=True)`, as transformers writes config.json. */
export function pyJson(v: unknown, indent = 0): string {
  const pad = (n: number): string => ' '.repeat(n);
  if (v instanceof PyFloat) return v.text;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return `[\n${v.map((x) => `${pad(indent + 2)}${pyJson(x, indent + 2)}`).join(',\n')}\n${pad(indent)}]`;
  }
  const keys = Object.keys(v as object).sort();
  if (keys.length === 0) return '{}';
  return `{\n${keys.map((k) => `${pad(indent + 2)}${JSON.stringify(k)}: ${pyJson((v as Record<string, unknown>)[k], indent + 2)}`).join(',\n')}\n${pad(indent)}}`;
}

export interface HfModel {
  id: string;
  config: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
  /** Bytes of all shards (the index's metadata.total_size). */
  totalSize: number;
  shards: number;
  /** Needs an accepted licence and a token (`HF_TOKEN` or `hf auth login`). */
  gated: boolean;
  /** Published commit of `main` (what `hf download` records in .cache/huggingface). */
  revision: string;
}

const QWEN_7B: HfModel = {
  id: 'Qwen/Qwen2.5-7B-Instruct',
  config: {
    architectures: ['Qwen2ForCausalLM'],
    attention_dropout: F('0.0'),
    bos_token_id: 151643,
    eos_token_id: 151645,
    hidden_act: 'silu',
    hidden_size: 3584,
    initializer_range: 0.02,
    intermediate_size: 18944,
    max_position_embeddings: 32768,
    max_window_layers: 28,
    model_type: 'qwen2',
    num_attention_heads: 28,
    num_hidden_layers: 28,
    num_key_value_heads: 4,
    rms_norm_eps: F('1e-06'),
    rope_theta: F('1000000.0'),
    sliding_window: 131072,
    tie_word_embeddings: false,
    torch_dtype: 'bfloat16',
    transformers_version: '4.43.1',
    use_cache: true,
    use_sliding_window: false,
    vocab_size: 152064,
  },
  generationConfig: {
    bos_token_id: 151643,
    pad_token_id: 151643,
    do_sample: true,
    eos_token_id: [151645, 151643],
    repetition_penalty: 1.05,
    temperature: 0.7,
    top_p: 0.8,
    top_k: 20,
    transformers_version: '4.37.0',
  },
  totalSize: 15_231_233_024,
  shards: 4,
  gated: false,
  revision: 'a09a35458c702b33eeacc393d103063234e8bc28',
};

const LLAMA_ROPE = {
  factor: F('8.0'),
  low_freq_factor: F('1.0'),
  high_freq_factor: F('4.0'),
  original_max_position_embeddings: 8192,
  rope_type: 'llama3',
};

function llama(
  id: string,
  hidden: number,
  inter: number,
  layers: number,
  heads: number,
  totalSize: number,
  shards: number,
  revision: string,
): HfModel {
  return {
    id,
    config: {
      architectures: ['LlamaForCausalLM'],
      attention_bias: false,
      attention_dropout: F('0.0'),
      bos_token_id: 128000,
      eos_token_id: [128001, 128008, 128009],
      hidden_act: 'silu',
      hidden_size: hidden,
      initializer_range: 0.02,
      intermediate_size: inter,
      max_position_embeddings: 131072,
      mlp_bias: false,
      model_type: 'llama',
      num_attention_heads: heads,
      num_hidden_layers: layers,
      num_key_value_heads: 8,
      pretraining_tp: 1,
      rms_norm_eps: F('1e-05'),
      rope_scaling: LLAMA_ROPE,
      rope_theta: F('500000.0'),
      tie_word_embeddings: false,
      torch_dtype: 'bfloat16',
      transformers_version: '4.43.0.dev0',
      use_cache: true,
      vocab_size: 128256,
    },
    generationConfig: {
      bos_token_id: 128000,
      do_sample: true,
      eos_token_id: [128001, 128008, 128009],
      temperature: 0.6,
      top_p: 0.9,
      transformers_version: '4.43.0.dev0',
    },
    totalSize,
    shards,
    gated: true,
    revision,
  };
}

const DEEPSEEK_V3: HfModel = {
  id: 'deepseek-ai/DeepSeek-V3',
  config: {
    architectures: ['DeepseekV3ForCausalLM'],
    attention_bias: false,
    attention_dropout: F('0.0'),
    auto_map: {
      AutoConfig: 'configuration_deepseek.DeepseekV3Config',
      AutoModel: 'modeling_deepseek.DeepseekV3Model',
      AutoModelForCausalLM: 'modeling_deepseek.DeepseekV3ForCausalLM',
    },
    aux_loss_alpha: 0.001,
    bos_token_id: 0,
    eos_token_id: 1,
    ep_size: 1,
    first_k_dense_replace: 3,
    hidden_act: 'silu',
    hidden_size: 7168,
    initializer_range: 0.02,
    intermediate_size: 18432,
    kv_lora_rank: 512,
    max_position_embeddings: 163840,
    model_type: 'deepseek_v3',
    moe_intermediate_size: 2048,
    moe_layer_freq: 1,
    n_group: 8,
    n_routed_experts: 256,
    n_shared_experts: 1,
    norm_topk_prob: true,
    num_attention_heads: 128,
    num_experts_per_tok: 8,
    num_hidden_layers: 61,
    num_key_value_heads: 128,
    num_nextn_predict_layers: 1,
    q_lora_rank: 1536,
    qk_nope_head_dim: 128,
    qk_rope_head_dim: 64,
    quantization_config: {
      activation_scheme: 'dynamic',
      fmt: 'e4m3',
      quant_method: 'fp8',
      weight_block_size: [128, 128],
    },
    rms_norm_eps: F('1e-06'),
    rope_scaling: {
      beta_fast: 32,
      beta_slow: 1,
      factor: 40,
      mscale: F('1.0'),
      mscale_all_dim: F('1.0'),
      original_max_position_embeddings: 4096,
      type: 'yarn',
    },
    rope_theta: 10000,
    routed_scaling_factor: 2.5,
    scoring_func: 'sigmoid',
    seq_aux: true,
    tie_word_embeddings: false,
    topk_group: 4,
    topk_method: 'noaux_tc',
    torch_dtype: 'bfloat16',
    transformers_version: '4.33.1',
    use_cache: true,
    v_head_dim: 128,
    vocab_size: 129280,
  },
  generationConfig: {
    _from_model_config: true,
    bos_token_id: 0,
    eos_token_id: 1,
    do_sample: true,
    temperature: 0.6,
    top_p: 0.95,
    transformers_version: '4.39.3',
  },
  totalSize: 688_586_727_753,
  shards: 163,
  gated: false,
  revision: '1d044fd82b15f1cedb197a288e50cc96a2c27205',
};

export const HF_MODELS: readonly HfModel[] = [
  QWEN_7B,
  llama(
    'meta-llama/Llama-3.1-8B-Instruct',
    4096,
    14336,
    32,
    32,
    16_060_522_496,
    4,
    '0e9e39f249a16976918f6564b8830bc894c89659',
  ),
  llama(
    'meta-llama/Llama-3.1-70B-Instruct',
    8192,
    28672,
    80,
    64,
    141_107_412_992,
    30,
    '1605565b47bb9346c5515c34102e054115b4f98b',
  ),
  DEEPSEEK_V3,
];

/** Repository ids are case-insensitive on the Hub. */
export function hfModel(id: string): HfModel | undefined {
  return HF_MODELS.find((m) => m.id.toLowerCase() === id.toLowerCase());
}

const json = (v: unknown): string => `${pyJson(v)}\n`;

export function shardName(i: number, n: number): string {
  return `model-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;
}

/** Bytes of shard i (1-based): the total split evenly, the last one the remainder. */
export function shardSize(m: HfModel, i: number): number {
  const per = Math.floor(m.totalSize / m.shards / 4096) * 4096;
  return i < m.shards ? per : m.totalSize - per * (m.shards - 1);
}

/** Every file `hf download <id> --local-dir DIR` leaves, relative to DIR, with its modelled size. */
export function modelFiles(m: HfModel): Array<{ path: string; content: string; size: number }> {
  const layers = Number(m.config.num_hidden_layers);
  const weightMap: Record<string, string> = {};
  const per = Math.ceil(layers / m.shards);
  weightMap['model.embed_tokens.weight'] = shardName(1, m.shards);
  for (let l = 0; l < layers; l++) {
    const shard = shardName(Math.min(m.shards, Math.floor(l / per) + 1), m.shards);
    for (const t of [
      'input_layernorm.weight',
      'mlp.down_proj.weight',
      'mlp.gate_proj.weight',
      'mlp.up_proj.weight',
      'post_attention_layernorm.weight',
      'self_attn.k_proj.weight',
      'self_attn.o_proj.weight',
      'self_attn.q_proj.weight',
      'self_attn.v_proj.weight',
    ]) {
      weightMap[`model.layers.${l}.${t}`] = shard;
    }
  }
  weightMap['model.norm.weight'] = shardName(m.shards, m.shards);
  weightMap['lm_head.weight'] = shardName(m.shards, m.shards);
  const index = json({ metadata: { total_size: m.totalSize }, weight_map: weightMap });
  const files = [
    { path: 'config.json', content: json(m.config) },
    { path: 'generation_config.json', content: json(m.generationConfig) },
    {
      path: 'tokenizer_config.json',
      content: json({
        model_max_length: m.config.max_position_embeddings,
        tokenizer_class: m.id.startsWith('Qwen') ? 'Qwen2Tokenizer' : 'PreTrainedTokenizerFast',
      }),
    },
    {
      path: 'tokenizer.json',
      content: `{"version": "1.0", "model": {"type": "BPE"}, "l20-lab": "stands for the ${m.id} tokenizer"}\n`,
    },
    { path: 'model.safetensors.index.json', content: index },
  ].map((f) => ({ ...f, size: f.content.length }));
  for (let i = 1; i <= m.shards; i++) {
    const size = shardSize(m, i);
    files.push({
      path: shardName(i, m.shards),
      content: `l20-lab safetensors stand-in: ${size} bytes of ${m.id}\n`,
      size,
    });
  }
  return files;
}
