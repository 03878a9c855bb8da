/**
 * What the tool knows about a model before its files are on the cluster: the shape the layout advisor
 * needs (layers, attention and KV heads, dtype, quantization, weight bytes), from each model's published
 * config.json and model.safetensors.index.json (`metadata.total_size`). Once the model is on disk the
 * stage reads the same values from the host instead (modelShapeFromFiles); this table only lets the
 * ray stage, which runs before the model is synced, decide whether Ray is needed at all.
 */

export interface ModelShape {
  /** Hugging Face id or the local path it was read from. */
  id: string;
  layers: number;
  heads: number;
  kvHeads: number;
  /** `torch_dtype` of config.json (`bfloat16`). */
  dtype: string;
  /** `quantization_config.quant_method` when the checkpoint is already quantized (`fp8`). */
  quantization?: string;
  /** Bytes of all weight shards (W). */
  weightBytes: number;
  /** Where the numbers come from, for the advice's evidence. */
  source: string;
}

type Known = Omit<ModelShape, 'id' | 'source'>;

/** Keys are lower-case HF ids. Values as published on the model pages. */
const KNOWN: Record<string, Known> = {
  'qwen/qwen2.5-7b-instruct': { layers: 28, heads: 28, kvHeads: 4, dtype: 'bfloat16', weightBytes: 15_231_233_024 },
  'meta-llama/llama-3.1-8b-instruct': {
    layers: 32,
    heads: 32,
    kvHeads: 8,
    dtype: 'bfloat16',
    weightBytes: 16_060_522_496,
  },
  'meta-llama/llama-3.1-70b-instruct': {
    layers: 80,
    heads: 64,
    kvHeads: 8,
    dtype: 'bfloat16',
    weightBytes: 141_107_412_992,
  },
  'deepseek-ai/deepseek-v3': {
    layers: 61,
    heads: 128,
    kvHeads: 128,
    dtype: 'bfloat16',
    quantization: 'fp8',
    weightBytes: 688_586_727_753,
  },
};

export function knownModel(id: string): ModelShape | undefined {
  const k = KNOWN[id.toLowerCase()];
  return k ? { id, ...k, source: 'the built-in model table (the model is not on the hosts yet)' } : undefined;
}

/** `/opt/l20/models/<name>`: the repository's own name, the same path on every host. */
export const MODELS_DIR = '/opt/l20/models';

export function modelName(id: string): string {
  return id.split('/').pop() ?? id;
}

export function modelPath(id: string): string {
  return `${MODELS_DIR}/${modelName(id)}`;
}

/**
 * The shape from a model directory's config.json and the index's total_size; a string says what is
 * missing or unreadable. Multimodal configs nest the language model under `text_config`.
 */
export function modelShapeFromFiles(
  id: string,
  configJson: string,
  totalSize: number | undefined,
  where: string,
): ModelShape | string {
  let cfg: Record<string, unknown>;
  try {
    cfg = JSON.parse(configJson) as Record<string, unknown>;
  } catch {
    return `config.json on ${where} is not valid JSON`;
  }
  const text = (typeof cfg.text_config === 'object' && cfg.text_config !== null ? cfg.text_config : cfg) as Record<
    string,
    unknown
  >;
  const num = (k: string): number | undefined =>
    typeof text[k] === 'number' ? (text[k] as number) : typeof cfg[k] === 'number' ? (cfg[k] as number) : undefined;
  const layers = num('num_hidden_layers');
  const heads = num('num_attention_heads');
  if (layers === undefined || heads === undefined)
    return `config.json on ${where} has no num_hidden_layers/num_attention_heads`;
  if (totalSize === undefined) return `model.safetensors.index.json on ${where} has no metadata.total_size`;
  const q = cfg.quantization_config as { quant_method?: unknown } | undefined;
  const dtype = (cfg.torch_dtype ?? cfg.dtype ?? text.torch_dtype ?? 'bfloat16') as string;
  return {
    id,
    layers,
    heads,
    kvHeads: num('num_key_value_heads') ?? heads,
    dtype: String(dtype),
    ...(q && typeof q.quant_method === 'string' ? { quantization: q.quant_method } : {}),
    weightBytes: totalSize,
    source: `config.json and model.safetensors.index.json on ${where}`,
  };
}
