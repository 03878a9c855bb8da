/**
 * `vllm serve` as a modelled process (docs/STAGES.md §4.3): argument checks, model resolution, the start-up
 * log of every engine over modelled time scaled by the weights (≈ 2 min for an 8B model at speed 1),
 * the data-parallel handshake between node 1's API server and node 2's headless engines over the
 * control subnet, then serving until stopped. Log lines follow
 * fixtures/corpus/vllm-serve__1node-tp2-mp-backend-qwen7b-a100-80gb.log.txt with vLLM 0.11's process
 * tags (`EngineCore_DP<n>`); the headless banner and the error texts follow vLLM 0.11's sources.
 */
import { posix } from 'node:path';
import type { Cluster } from '../model/cluster.js';
import { hfModel } from '../model/hf-models.js';
import { clusterNodes, rayNode } from '../model/ray-runtime.js';
import { listensOn } from '../model/sockets.js';
import type { Machine } from '../model/types.js';
import {
  engineMath,
  endServer,
  markEngineReady,
  registerServer,
  remoteEngines,
  servingChanged,
  vllmListening,
  waitServingChange,
  type ModelShape,
  type ServeArgs,
  type VllmServer,
} from '../model/vllm-runtime.js';
import type { Process } from '../system/processes.js';
import { cudaRuntime } from './cuda-runtime.js';
import { parseServe, pyRepr, SERVE_USAGE } from './vllm-args.js';

export interface ServeIo {
  machine: Machine;
  cluster: Cluster;
  uid: number;
  env: Readonly<Record<string, string>>;
  main: Process;
  out(text: string): Promise<void>;
  err(text: string): Promise<void>;
  sleep(ms: number): Promise<boolean>;
  signal: AbortSignal;
  spawn(argv: string[], comm: string): Process;
  readFile(path: string): Promise<string | undefined>;
}

export const VLLM_VERSION = '0.11.0';

/** Machines whose vLLM unit has been running since boot (`ready` scenario): their first start is instant. */
const preloaded = new WeakSet<Machine>();
export function markPreloaded(m: Machine, on = true): void {
  if (on) preloaded.add(m);
  else preloaded.delete(m);
}

const ROUTES: Array<[string, string]> = [
  ['/openapi.json', 'GET, HEAD'],
  ['/docs', 'GET, HEAD'],
  ['/docs/oauth2-redirect', 'GET, HEAD'],
  ['/redoc', 'GET, HEAD'],
  ['/health', 'GET'],
  ['/load', 'GET'],
  ['/ping', 'POST'],
  ['/ping', 'GET'],
  ['/tokenize', 'POST'],
  ['/detokenize', 'POST'],
  ['/v1/models', 'GET'],
  ['/version', 'GET'],
  ['/v1/responses', 'POST'],
  ['/v1/chat/completions', 'POST'],
  ['/v1/completions', 'POST'],
  ['/v1/embeddings', 'POST'],
  ['/pooling', 'POST'],
  ['/classify', 'POST'],
  ['/score', 'POST'],
  ['/v1/score', 'POST'],
  ['/rerank', 'POST'],
  ['/v1/rerank', 'POST'],
  ['/invocations', 'POST'],
  ['/metrics', 'GET'],
];

/** Reads a model directory's config.json and index into the shape the engine model needs. */
export async function loadShape(io: Pick<ServeIo, 'readFile'>, model: string): Promise<ModelShape | string> {
  const local = model.startsWith('/') || model.startsWith('.');
  if (!local) {
    const known = hfModel(model);
    if (!known)
      return `ValueError: Invalid repository ID or local directory specified: '${model}'.\nPlease verify the following requirements:\n1. Provide a valid Hugging Face repository ID.\n2. Specify a local directory that contains a recognized configuration file.\n   - For Hugging Face models: ensure the presence of a 'config.json'.\n   - For Mistral models: ensure the presence of a 'params.json'.`;
    return shapeOf(model, known.config, known.totalSize, known.shards);
  }
  const text = await io.readFile(posix.join(model, 'config.json'));
  if (text === undefined)
    return `ValueError: Invalid repository ID or local directory specified: '${model}'.\nPlease verify the following requirements:\n1. Provide a valid Hugging Face repository ID.\n2. Specify a local directory that contains a recognized configuration file.\n   - For Hugging Face models: ensure the presence of a 'config.json'.\n   - For Mistral models: ensure the presence of a 'params.json'.`;
  let cfg: Record<string, unknown>;
  try {
    cfg = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)`;
  }
  const index = await io.readFile(posix.join(model, 'model.safetensors.index.json'));
  const total = index ? Number(/"total_size":\s*(\d+)/.exec(index)?.[1]) : NaN;
  if (!Number.isFinite(total)) return `RuntimeError: Cannot find any model weights with \`${model}\``;
  const shards = index ? new Set([...index.matchAll(/"(model-\d+-of-\d+\.safetensors)"/g)].map((x) => x[1])).size : 1;
  return shapeOf(model, cfg, total, shards);
}

function shapeOf(path: string, cfg: Record<string, unknown>, total: number, shards: number): ModelShape {
  const n = (k: string, d: number): number => (typeof cfg[k] === 'number' ? (cfg[k] as number) : d);
  const q = cfg.quantization_config as { quant_method?: string } | undefined;
  return {
    path,
    architecture: String((cfg.architectures as string[] | undefined)?.[0] ?? 'LlamaForCausalLM'),
    layers: n('num_hidden_layers', 32),
    heads: n('num_attention_heads', 32),
    kvHeads: n('num_key_value_heads', n('num_attention_heads', 32)),
    hidden: n('hidden_size', 4096),
    vocab: n('vocab_size', 32000),
    maxPos: n('max_position_embeddings', 4096),
    dtype: String(cfg.torch_dtype ?? 'bfloat16'),
    ...(q?.quant_method ? { quantization: q.quant_method } : {}),
    weightBytes: total,
    shards,
  };
}

/** `INFO 01-06 09:10:05 [file.py:NN] ` */
function stamp(ms: number, level = 'INFO'): string {
  const d = new Date(ms).toISOString();
  return `${level} ${d.slice(5, 7)}-${d.slice(8, 10)} ${d.slice(11, 19)}`;
}

/** Runs `vllm serve ARGS` to its end; the exit code. */
export async function runServe(io: ServeIo, argv: readonly string[]): Promise<number> {
  const m = io.machine;
  const fast = preloaded.has(m);
  preloaded.delete(m);
  let t = fast ? m.system.boot.at + 21_000 : m.clock.now();
  const at = (): number => (fast ? t : m.clock.now());
  const pass = async (ms: number): Promise<boolean> => {
    if (fast) {
      t += ms;
      return !io.signal.aborted;
    }
    return io.sleep(ms);
  };
  const tag = (who: string, pid: number): string => `(${who} pid=${pid}) `;
  const api = tag('APIServer', io.main.pid);
  const log = (line: string, src: string, who = api, level = 'INFO'): Promise<void> =>
    io.out(`${who}${stamp(at(), level)} [${src}] ${line}\n`);
  const fatal = async (who: string, msg: string, frames: string[] = []): Promise<number> => {
    const lines = ['Traceback (most recent call last):', ...frames, ...msg.split('\n')];
    await io.err(lines.map((l) => `${who}${l}\n`).join(''));
    return 1;
  };

  const cuda = cudaRuntime(m);
  await io.out(
    cuda.ok
      ? `${stamp(at())} [__init__.py:216] Automatically detected platform cuda.\n`
      : `${stamp(at())} [__init__.py:220] No platform detected, vLLM is running on UnspecifiedPlatform\n`,
  );
  const parsed = parseServe(argv);
  if (!parsed.ok) {
    await io.err(
      'unrecognized' in parsed
        ? `${SERVE_USAGE}vllm serve: error: unrecognized arguments: ${parsed.unrecognized.join(' ')}\n`
        : `${SERVE_USAGE}vllm serve: error: ${parsed.error}\n`,
    );
    return 2;
  }
  // vLLM's api_server: `args.api_key or envs.VLLM_API_KEY` (the option wins; an empty variable is no key).
  const envKey = io.env.VLLM_API_KEY;
  const a: ServeArgs = parsed.args.apiKey === undefined && envKey ? { ...parsed.args, apiKey: envKey } : parsed.args;
  const who = a.headless ? '' : api;
  if (!a.headless) {
    await log(`vLLM API server version ${VLLM_VERSION}`, 'api_server.py:1839');
    await log(`non-default args: {${a.nonDefault.map(([k, v]) => `'${k}': ${pyRepr(v)}`).join(', ')}}`, 'utils.py:233');
  }
  if (!cuda.ok) return fatal(who, 'RuntimeError: Failed to infer device type');
  const shape = await loadShape(io, a.model);
  if (typeof shape === 'string')
    return fatal(who, shape, [
      '  File "/opt/l20/venv/lib/python3.10/site-packages/vllm/transformers_utils/config.py", line 542, in get_config',
      '    raise ValueError(error_message) from e',
    ]);
  if (shape.heads % a.tp !== 0)
    return fatal(
      who,
      `ValueError: Total number of attention heads (${shape.heads}) must be divisible by tensor parallel size (${a.tp}).`,
    );
  if (a.backend === 'ray') {
    // The engine joins the running Ray cluster and places tp × pp workers in it.
    const node = rayNode(m);
    if (!node)
      return fatal(
        who,
        'ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.',
      );
    const gpus = clusterNodes(io.cluster, node.gcs).reduce((x, n) => x + n.node.gpus, 0);
    if (gpus < a.tp * a.pp)
      return fatal(
        who,
        `ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement group. Required: ${a.tp * a.pp}, available: ${gpus}.`,
      );
  }
  const perNode = a.backend === 'ray' ? a.tp : a.tp * a.pp * a.dpLocal;
  if (perNode > m.gpus.length)
    return fatal(
      who,
      `ValueError: World size (${perNode}) is larger than the number of available GPUs (${m.gpus.length}) in this node.`,
    );
  const math = engineMath(shape, a, a.backend === 'ray' && a.pp > 1);
  const used = Math.max(
    0,
    ...m.gpus.map((g) => (m.gpuWork ?? []).filter((w) => w.gpu === g.index).reduce((s, w) => s + w.memMiB, 0)),
  );
  const totalGiB = (m.gpus[0]?.memoryMiB ?? 46068) / 1024;
  if (used / 1024 > totalGiB - math.budgetGiB) {
    return fatal(
      who,
      `ValueError: Free memory on device (${(totalGiB - used / 1024).toFixed(2)}/${totalGiB.toFixed(2)} GiB) on startup is less than desired GPU memory utilization (${a.gpuMemoryUtilization}, ${math.budgetGiB.toFixed(2)} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.`,
    );
  }

  const server: VllmServer = {
    machine: m,
    args: a,
    shape,
    state: 'starting',
    main: io.main,
    engines: [],
    enginesReady: 0,
    startedAt: at(),
    served: { requests: 0, promptTokens: 0, generationTokens: 0 },
  };
  const owns = (ip: string): boolean =>
    ip === '0.0.0.0' || ip === '::' || m.netdevs.some((d) => d.addresses.some((x) => x.local === ip));
  if (!a.headless) {
    const host = a.host ?? '0.0.0.0';
    if (!owns(host)) return fatal(api, 'OSError: [Errno 99] Cannot assign requested address');
    if (listensOn(m, host, a.port)) return fatal(api, 'OSError: [Errno 98] Address already in use');
    server.api = { host, port: a.port };
    if (a.dp > a.dpLocal) {
      const hs = a.dpAddress ?? '127.0.0.1';
      if (!owns(hs))
        return fatal(
          api,
          "zmq.error.ZMQError: Cannot assign requested address (addr='tcp://" + hs + ':' + a.dpRpcPort + "')",
        );
      server.handshake = { host: hs, port: a.dpRpcPort };
    }
  }
  registerServer(server);
  try {
    return await serve(io, server, math, { log, pass, at, fast });
  } finally {
    endServer(server);
  }
}

interface Pace {
  log(line: string, src: string, who?: string, level?: string): Promise<void>;
  pass(ms: number): Promise<boolean>;
  at(): number;
  fast: boolean;
}

async function serve(io: ServeIo, s: VllmServer, math: ReturnType<typeof engineMath>, p: Pace): Promise<number> {
  const m = io.machine;
  const a = s.args;
  const shape = s.shape;
  if (!a.headless) {
    await p.log(`Resolved architecture: ${shape.architecture}`, '__init__.py:742');
    await p.log(`Using max model len ${math.maxModelLen}`, '__init__.py:1815');
    await p.log('Chunked prefill is enabled with max_num_batched_tokens=2048.', 'scheduler.py:222');
  } else {
    await io.out(
      `${stamp(p.at())} [serve.py:218] Launching ${a.dpLocal} data parallel engine(s) in headless mode, with head node address tcp://${a.dpAddress ?? '127.0.0.1'}:${a.dpRpcPort}.\n`,
    );
  }
  if (math.weightsGiB > math.budgetGiB) {
    return failEngine(
      io,
      `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a total capacity of 44.99 GiB of which 412.00 MiB is free. Including non-PyTorch memory, this process has 44.57 GiB memory in use.`,
    );
  }
  if (math.kvTokens < math.maxModelLen) {
    return failEngine(
      io,
      `ValueError: To serve at least one request with the models's max seq len (${math.maxModelLen}), (${((math.maxModelLen * math.kvBytesPerToken) / 2 ** 30).toFixed(2)} GiB KV cache is needed, which is larger than the available KV cache memory (${Math.max(0, math.kvGiB).toFixed(2)} GiB). Based on the available memory, the estimated maximum model length is ${math.kvTokens}. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine.`,
    );
  }
  // One engine per local data-parallel rank; each holds tp × pp GPUs (a Ray backend places them on every node).
  const group = a.backend === 'ray' ? a.tp : a.tp * a.pp;
  const engines = Array.from({ length: a.backend === 'ray' ? 1 : a.dpLocal }, (_, i) => {
    const rank = a.dpStartRank + i;
    const proc = io.spawn([`VLLM::EngineCore_DP${rank}`], 'VLLM::EngineCor');
    s.engines.push(proc);
    return {
      rank,
      proc,
      tag: `(EngineCore_DP${rank} pid=${proc.pid}) `,
      gpus: Array.from({ length: group }, (_, g) => i * group + g),
    };
  });
  servingChanged();
  const each = async (f: (e: (typeof engines)[number]) => Promise<void>): Promise<void> => {
    for (const e of engines) await f(e);
  };
  await each((e) =>
    io
      .out(`${stamp(p.at())} [__init__.py:216] Automatically detected platform cuda.\n`)
      .then(() => p.log('Waiting for init message from front-end.', 'core.py:654', e.tag)),
  );
  if (a.headless) {
    // The engines need node 1's handshake socket before they can load anything.
    while (!io.signal.aborted) {
      const r = vllmListening(io.cluster, m, a.dpAddress ?? '127.0.0.1', a.dpRpcPort);
      if (typeof r !== 'string' && r.kind === 'handshake') break;
      await waitServingChange(io.signal);
    }
    if (io.signal.aborted) return 0;
  }
  if (!(await p.pass(6_000))) return 0;
  const cfgLine = (rank: number): string =>
    `Initializing a V1 LLM engine (v${VLLM_VERSION}) with config: model='${a.model}', speculative_config=None, tokenizer='${a.model}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.${shape.dtype}, max_seq_len=${math.maxModelLen}, download_dir=None, load_format=auto, tensor_parallel_size=${a.tp}, pipeline_parallel_size=${a.pp}, data_parallel_size=${a.dp}, disable_custom_all_reduce=False, quantization=${a.quantization ?? shape.quantization ?? 'None'}, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=${a.servedName}, enable_prefix_caching=True, chunked_prefill_enabled=True, pooler_config=None, data_parallel_rank=${rank}`;
  await each(async (e) => {
    await p.log(cfgLine(e.rank), 'core.py:77', e.tag);
    await p.log(
      `rank 0 in world size ${group} is assigned as DP rank ${e.rank}, PP rank 0, TP rank 0, EP rank ${e.rank}`,
      'parallel_state.py:1208',
      e.tag,
    );
    if (a.tp > 2)
      await p.log(
        "Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        'custom_all_reduce.py:153',
        e.tag,
        'WARNING',
      );
    await p.log(`Starting to load model ${a.model}...`, 'gpu_model_runner.py:2602', e.tag);
    await p.log('Using Flash Attention backend on V1 engine.', 'cuda.py:366', e.tag);
  });
  if (!(await p.pass(math.loadS * 1000))) return 0;
  await io.out(
    `Loading safetensors checkpoint shards: 100% Completed | ${shape.shards}/${shape.shards} [00:${String(Math.round(math.loadS)).padStart(2, '0')}<00:00, ${(shape.shards / math.loadS).toFixed(2)}it/s]\n`,
  );
  await each(async (e) => {
    await p.log(`Loading weights took ${(math.loadS - 0.4).toFixed(2)} seconds`, 'default_loader.py:267', e.tag);
    await p.log(
      `Model loading took ${math.weightsGiB.toFixed(4)} GiB and ${math.loadS.toFixed(6)} seconds`,
      'gpu_model_runner.py:2653',
      e.tag,
    );
  });
  if (!(await p.pass(math.compileS * 1000))) return 0;
  await each(async (e) => {
    await p.log(
      `Using cache directory: ${m.user.home}/.cache/vllm/torch_compile_cache/5d3a8c7e21/rank_${e.rank}_0/backbone for vLLM's torch.compile`,
      'backends.py:548',
      e.tag,
    );
    await p.log(`torch.compile takes ${math.compileS.toFixed(2)} s in total`, 'monitor.py:34', e.tag);
  });
  if (!(await p.pass((math.profileS + math.graphS) * 1000))) return 0;
  for (const e of engines) {
    await p.log(`Available KV cache memory: ${math.kvGiB.toFixed(2)} GiB`, 'gpu_worker.py:298', e.tag);
    await p.log(`GPU KV cache size: ${math.kvTokens.toLocaleString('en-US')} tokens`, 'kv_cache_utils.py:1087', e.tag);
    await p.log(
      `Maximum concurrency for ${math.maxModelLen.toLocaleString('en-US')} tokens per request: ${(math.kvTokens / math.maxModelLen).toFixed(2)}x`,
      'kv_cache_utils.py:1091',
      e.tag,
    );
    await p.log(
      `Graph capturing finished in ${Math.round(math.graphS)} secs, took 0.52 GiB`,
      'gpu_model_runner.py:3480',
      e.tag,
    );
    await p.log(
      `init engine (profile, create kv cache, warmup model) took ${(math.profileS + math.graphS + math.compileS).toFixed(2)} seconds`,
      'core.py:210',
      e.tag,
    );
    markEngineReady(s, e.gpus, e.proc, Math.round(math.budgetGiB * 1024));
  }
  if (!a.headless) {
    // The API answers only once every data-parallel engine, local and remote, has reported in.
    while (!io.signal.aborted && s.enginesReady + remoteEngines(io.cluster, s) < (a.backend === 'ray' ? 1 : a.dp))
      await waitServingChange(io.signal);
    if (io.signal.aborted) return 0;
    await p.log(
      `Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: ${Math.floor(math.kvTokens / 16)}`,
      'loggers.py:147',
    );
    await p.log("Supported_tasks: ['generate']", 'api_server.py:1634');
    await p.log(`Starting vLLM API server 0 on http://${s.api?.host}:${a.port}`, 'api_server.py:1912');
    await p.log('Available routes are:', 'launcher.py:34');
    for (const [r, methods] of ROUTES) await p.log(`Route: ${r}, Methods: ${methods}`, 'launcher.py:42');
    const ap = `(APIServer pid=${io.main.pid}) `;
    await io.out(
      `${ap}INFO:     Started server process [${io.main.pid}]\n${ap}INFO:     Waiting for application startup.\n${ap}INFO:     Application startup complete.\n`,
    );
  }
  s.state = 'ready';
  s.readyAt = p.at();
  servingChanged();
  await new Promise<void>((resolve) =>
    io.signal.aborted ? resolve() : io.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  if (!a.headless) {
    const ap = `(APIServer pid=${io.main.pid}) `;
    await io.out(
      `${ap}INFO:     Shutting down\n${ap}INFO:     Waiting for application shutdown.\n${ap}INFO:     Application shutdown complete.\n`,
    );
  } else await io.out(`${stamp(m.clock.now())} [serve.py:232] Shutting down.\n`);
  return 0;
}

async function failEngine(io: ServeIo, msg: string): Promise<number> {
  await io.err(
    `(EngineCore_DP0 pid=${io.main.pid + 1}) ERROR ${stamp(io.machine.clock.now()).slice(5)} [core.py:718] EngineCore failed to start.\n(EngineCore_DP0 pid=${io.main.pid + 1}) ERROR ${msg}\nRuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': 1}\n`,
  );
  return 1;
}
