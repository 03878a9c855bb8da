/**
 * `vllm serve`'s command line as vLLM 0.11 defines it: the options the lab knows (a subset of the
 * real ~200, every one the stages or the tutorial use, with their groups, metavars and defaults),
 * argparse's parsing (unknown options end in `usage: …` / `vllm serve: error: unrecognized
 * arguments: …`, exit 2) and `--help=all` in argparse's layout (help column 24, width 78).
 * Source-derived: vllm/entrypoints/cli/serve.py, vllm/engine/arg_utils.py and
 * vllm/entrypoints/openai/cli_args.py of v0.11.0; wording of help texts abridged.
 */
import type { ServeArgs } from '../model/vllm-runtime.js';

interface Opt {
  names: string[];
  /** null for a switch (store_true); `N+` metavars take one or more values. */
  metavar: string | null;
  help: string;
  dflt: string;
  nargs?: '+';
}

const G = (title: string, description: string, opts: Opt[]): { title: string; description: string; opts: Opt[] } => ({
  title,
  description,
  opts,
});
const o = (names: string | string[], metavar: string | null, help: string, dflt: string, nargs?: '+'): Opt => ({
  names: Array.isArray(names) ? names : [names],
  metavar,
  help,
  dflt,
  ...(nargs ? { nargs } : {}),
});

export const SERVE_GROUPS = [
  G('options', '', [
    o(['-h', '--help'], null, 'show this help message and exit', ''),
    o(
      '--headless',
      null,
      'Run in headless mode. See multi-node data parallel documentation for more details.',
      'False',
    ),
    o(['--api-server-count', '-asc'], 'API_SERVER_COUNT', 'How many API server processes to run.', '1'),
    o(
      '--config',
      'CONFIG',
      'Read CLI options from a config file. Must be a YAML with the following options: https://docs.vllm.ai/en/latest/configuration/serve_args.html',
      'None',
    ),
    o('--disable-log-stats', null, 'Disable logging statistics.', 'False'),
    o('--enable-log-requests', null, 'Enable logging requests.', 'False'),
  ]),
  G('Frontend', 'Arguments for the OpenAI-compatible frontend server.', [
    o('--host', 'HOST', 'Host name.', 'None'),
    o('--port', 'PORT', 'Port number.', '8000'),
    o('--uvicorn-log-level', '{critical,debug,error,info,trace,warning}', 'Log level for uvicorn.', 'info'),
    o('--allow-credentials', null, 'Allow credentials.', 'False'),
    o('--allowed-origins', 'ALLOWED_ORIGINS', 'Allowed origins.', "['*']"),
    o(
      '--api-key',
      'API_KEY [API_KEY ...]',
      'If provided, the server will require one of these keys to be presented in the header.',
      'None',
      '+',
    ),
    o(
      '--chat-template',
      'CHAT_TEMPLATE',
      'The file path to the chat template, or the template in single-line form for the specified model.',
      'None',
    ),
    o(
      '--response-role',
      'RESPONSE_ROLE',
      'The role name to return if `request.add_generation_prompt=true`.',
      'assistant',
    ),
    o('--ssl-keyfile', 'SSL_KEYFILE', 'The file path to the SSL key file.', 'None'),
    o('--ssl-certfile', 'SSL_CERTFILE', 'The file path to the SSL cert file.', 'None'),
    o('--root-path', 'ROOT_PATH', 'FastAPI root_path when app is behind a path based routing proxy.', 'None'),
    o('--enable-auto-tool-choice', null, 'Enable auto tool choice for supported models.', 'False'),
    o(
      '--tool-call-parser',
      'TOOL_CALL_PARSER',
      "Select the tool call parser depending on the model that you're using.",
      'None',
    ),
    o('--disable-fastapi-docs', null, "Disable FastAPI's OpenAPI schema, Swagger UI, and ReDoc endpoint.", 'False'),
    o(
      '--enable-server-load-tracking',
      null,
      'If set to True, enable tracking server_load_metrics in the app state.',
      'False',
    ),
  ]),
  G('ModelConfig', 'Configuration for the model.', [
    o(
      '--model',
      'MODEL',
      'Name or path of the Hugging Face model to use. It is also used as the content for `model_name` tag in metrics output when `served_model_name` is not specified.',
      'Qwen/Qwen3-0.6B',
    ),
    o(
      '--tokenizer',
      'TOKENIZER',
      'Name or path of the Hugging Face tokenizer to use. If unspecified, model name or path will be used.',
      'None',
    ),
    o(
      '--trust-remote-code',
      null,
      'Trust remote code (e.g., from HuggingFace) when downloading the model and tokenizer.',
      'False',
    ),
    o('--dtype', '{auto,bfloat16,float,float16,float32,half}', 'Data type for model weights and activations.', 'auto'),
    o('--seed', 'SEED', 'Random seed for reproducibility.', 'None'),
    o('--revision', 'REVISION', 'The specific model version to use.', 'None'),
    o(
      '--max-model-len',
      'MAX_MODEL_LEN',
      'Model context length (prompt and output). If unspecified, will be automatically derived from the model config.',
      'None',
    ),
    o(
      ['--quantization', '-q'],
      'QUANTIZATION',
      'Method used to quantize the weights. If `None`, we first check the `quantization_config` attribute in the model config file.',
      'None',
    ),
    o('--enforce-eager', null, 'Whether to always use eager-mode PyTorch.', 'False'),
    o(
      '--served-model-name',
      'SERVED_MODEL_NAME [SERVED_MODEL_NAME ...]',
      'The model name(s) used in the API. If multiple names are provided, the server will respond to any of the provided names.',
      'None',
      '+',
    ),
    o('--generation-config', 'GENERATION_CONFIG', 'The folder path to the generation config.', 'auto'),
  ]),
  G('LoadConfig', 'Configuration for loading the model weights.', [
    o('--load-format', 'LOAD_FORMAT', 'The format of the model weights to load.', 'auto'),
    o(
      '--download-dir',
      'DOWNLOAD_DIR',
      'Directory to download and load the weights, default to the default cache directory of Hugging Face.',
      'None',
    ),
  ]),
  G('ParallelConfig', 'Configuration for the distributed execution.', [
    o(
      '--distributed-executor-backend',
      '{external_launcher,mp,ray,uni}',
      'Backend to use for distributed model workers, either "ray" or "mp" (multiprocessing).',
      'None',
    ),
    o(['--pipeline-parallel-size', '-pp'], 'PIPELINE_PARALLEL_SIZE', 'Number of pipeline parallel groups.', '1'),
    o(['--tensor-parallel-size', '-tp'], 'TENSOR_PARALLEL_SIZE', 'Number of tensor parallel groups.', '1'),
    o(
      ['--data-parallel-size', '-dp'],
      'DATA_PARALLEL_SIZE',
      'Number of data parallel groups. MoE layers will be sharded according to the product of the tensor parallel size and data parallel size.',
      '1',
    ),
    o(
      ['--data-parallel-rank', '-dpn'],
      'DATA_PARALLEL_RANK',
      'Data parallel rank of this instance. When set, enables external load balancer mode.',
      'None',
    ),
    o(
      ['--data-parallel-start-rank', '-dpr'],
      'DATA_PARALLEL_START_RANK',
      'Starting data parallel rank for secondary nodes.',
      'None',
    ),
    o(
      ['--data-parallel-size-local', '-dpl'],
      'DATA_PARALLEL_SIZE_LOCAL',
      'Number of data parallel replicas to run on this node.',
      'None',
    ),
    o(
      ['--data-parallel-address', '-dpa'],
      'DATA_PARALLEL_ADDRESS',
      'Address of data parallel cluster head-node.',
      'None',
    ),
    o(
      ['--data-parallel-rpc-port', '-dpp'],
      'DATA_PARALLEL_RPC_PORT',
      'Port for data parallel RPC communication.',
      'None',
    ),
    o(
      ['--data-parallel-backend', '-dpb'],
      'DATA_PARALLEL_BACKEND',
      'Backend for data parallel, either "mp" or "ray".',
      'mp',
    ),
    o('--data-parallel-hybrid-lb', null, 'Whether to use "hybrid" DP LB mode.', 'False'),
    o(
      '--enable-expert-parallel',
      null,
      'Use expert parallelism instead of tensor parallelism for MoE layers.',
      'False',
    ),
    o('--disable-custom-all-reduce', null, 'Disable the custom all-reduce kernel and fall back to NCCL.', 'False'),
  ]),
  G('CacheConfig', 'Configuration for the KV cache.', [
    o('--block-size', '{1,8,16,32,64,128}', 'Size of a contiguous cache block in number of tokens.', 'None'),
    o(
      '--gpu-memory-utilization',
      'GPU_MEMORY_UTILIZATION',
      'The fraction of GPU memory to be used for the model executor, which can range from 0 to 1.',
      '0.9',
    ),
    o('--swap-space', 'SWAP_SPACE', 'Size of the CPU swap space per GPU (in GiB).', '4'),
    o('--kv-cache-dtype', '{auto,fp8,fp8_e4m3,fp8_e5m2,fp8_inc}', 'Data type for kv cache storage.', 'auto'),
    o(['--enable-prefix-caching', '--no-enable-prefix-caching'], null, 'Whether to enable prefix caching.', 'None'),
  ]),
  G('SchedulerConfig', 'Scheduler configuration.', [
    o(
      '--max-num-batched-tokens',
      'MAX_NUM_BATCHED_TOKENS',
      'Maximum number of tokens to be processed in a single iteration.',
      'None',
    ),
    o('--max-num-seqs', 'MAX_NUM_SEQS', 'Maximum number of sequences to be processed in a single iteration.', 'None'),
    o(
      ['--enable-chunked-prefill', '--no-enable-chunked-prefill'],
      null,
      'If True, prefill requests can be chunked based on the remaining max_num_batched_tokens.',
      'None',
    ),
  ]),
];

const ALL = SERVE_GROUPS.flatMap((g) => g.opts);

export function findOpt(name: string): Opt | undefined {
  return ALL.find((x) => x.names.includes(name));
}

/** Word-wraps `text` to `width` columns (argparse's textwrap, no hyphen breaks). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = '';
  for (const word of text.split(/\s+/)) {
    if (cur && cur.length + 1 + word.length > width) {
      lines.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  if (cur) lines.push(cur);
  return lines;
}

function invocation(x: Opt): string {
  if (x.metavar === null) return x.names.join(', ');
  return x.names.map((n) => `${n} ${x.metavar}`).join(', ');
}

/** `vllm serve --help=all`. */
export function serveHelp(): string {
  const W = 78;
  const COL = 24;
  const out: string[] = [
    'usage: vllm serve [model_tag] [options]',
    '',
    ...wrap(
      'Launch a local OpenAI-compatible API server to serve LLM completions via HTTP. Defaults to Qwen/Qwen3-0.6B if no model is specified.',
      W,
    ),
    '',
  ];
  const entry = (inv: string, help: string): void => {
    const body = wrap(help, W - COL);
    if (inv.length + 2 <= COL - 2) out.push(`  ${inv.padEnd(COL - 2)}${body[0] ?? ''}`);
    else out.push(`  ${inv}`, `${' '.repeat(COL)}${body[0] ?? ''}`);
    for (const l of body.slice(1)) out.push(`${' '.repeat(COL)}${l}`);
  };
  out.push('positional arguments:');
  entry('model_tag', 'The model tag to serve (optional if specified in config) (default: None)');
  out.push('');
  for (const g of SERVE_GROUPS) {
    out.push(`${g.title}:`);
    if (g.description) out.push(...wrap(g.description, W - 2).map((l) => `  ${l}`), '');
    for (const x of g.opts) entry(invocation(x), x.names[0] === '-h' ? x.help : `${x.help} (default: ${x.dflt})`);
    out.push('');
  }
  return `${out.join('\n')}\n`;
}

export const SERVE_USAGE = 'usage: vllm serve [model_tag] [options]\n';

export type ParseResult =
  | { ok: true; args: ServeArgs; opts: Map<string, string[]> }
  | { ok: false; unrecognized: string[] }
  | { ok: false; error: string };

/** argparse over the known options: `--opt v`, `--opt=v`, `-tp 8`; unknown options (and the words after them) are reported together. */
export function parseServe(argv: readonly string[]): ParseResult {
  const opts = new Map<string, string[]>();
  const positional: string[] = [];
  const unknown: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('-') || a === '-') {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 && a.startsWith('--') ? a.slice(0, eq) : a;
    const x = findOpt(name);
    if (!x) {
      unknown.push(a);
      while (argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith('-')) unknown.push(argv[++i] as string);
      continue;
    }
    const key = x.names.find((n) => n.startsWith('--')) ?? name;
    if (x.metavar === null) {
      opts.set(key, [name.startsWith('--no-') ? 'False' : 'True']);
      continue;
    }
    const vals: string[] = [];
    if (eq > 0) vals.push(a.slice(eq + 1));
    else {
      if (argv[i + 1] === undefined || ((argv[i + 1] as string).startsWith('-') && !/^-\d/.test(argv[i + 1] as string)))
        return {
          ok: false,
          error: `argument ${x.names.join('/')}: expected ${x.nargs ? 'at least one argument' : 'one argument'}`,
        };
      vals.push(argv[++i] as string);
      while (x.nargs === '+' && argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith('-'))
        vals.push(argv[++i] as string);
    }
    opts.set(key, vals);
  }
  if (positional.length > 1) unknown.push(...positional.slice(1));
  if (unknown.length > 0) return { ok: false, unrecognized: unknown };
  const get = (k: string): string | undefined => opts.get(k)?.[0];
  const int = (k: string, d: number): number => (get(k) !== undefined ? Number(get(k)) : d);
  const model = positional[0] ?? get('--model') ?? 'Qwen/Qwen3-0.6B';
  const dp = int('--data-parallel-size', 1);
  const nonDefault: Array<[string, unknown]> = [];
  if (positional[0]) nonDefault.push(['model_tag', positional[0]]);
  for (const [k, v] of opts) {
    // The API key is never logged: the line would carry it into the journal.
    if (k === '--api-key') continue;
    const x = findOpt(k)!;
    const dest = k.replace(/^--/, '').replace(/-/g, '_');
    const val: unknown =
      x.metavar === null
        ? v[0] === 'True'
        : x.nargs
          ? v
          : /^-?\d+$/.test(v[0] ?? '')
            ? Number(v[0])
            : /^-?\d*\.\d+$/.test(v[0] ?? '')
              ? Number(v[0])
              : v[0];
    nonDefault.push([dest, val]);
  }
  if (positional[0] && !opts.has('--model')) nonDefault.splice(1, 0, ['model', positional[0]]);
  const args: ServeArgs = {
    model,
    servedName: opts.get('--served-model-name')?.[0] ?? model,
    ...(get('--host') !== undefined ? { host: get('--host')! } : {}),
    port: int('--port', 8000),
    ...(get('--api-key') !== undefined ? { apiKey: get('--api-key')! } : {}),
    tp: int('--tensor-parallel-size', 1),
    pp: int('--pipeline-parallel-size', 1),
    dp,
    dpLocal: int('--data-parallel-size-local', dp),
    dpStartRank: int('--data-parallel-start-rank', 0),
    ...(get('--data-parallel-address') !== undefined ? { dpAddress: get('--data-parallel-address')! } : {}),
    dpRpcPort: int('--data-parallel-rpc-port', 29550),
    headless: opts.has('--headless'),
    ...(get('--distributed-executor-backend') !== undefined ? { backend: get('--distributed-executor-backend')! } : {}),
    gpuMemoryUtilization: Number(get('--gpu-memory-utilization') ?? '0.9'),
    ...(get('--max-model-len') !== undefined ? { maxModelLen: int('--max-model-len', 0) } : {}),
    ...(get('--quantization') !== undefined ? { quantization: get('--quantization')! } : {}),
    nonDefault,
  };
  return { ok: true, args, opts };
}

/** Python's repr of the non-default args dict, as the `non-default args:` line prints it. */
export function pyRepr(v: unknown): string {
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  return 'None';
}
