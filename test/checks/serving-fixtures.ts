/**
 * Probe outputs for the ray and vllm check tests: each in the format the real command prints (the
 * corpus samples where the spec cites one), assembled per host so a test changes only what it is about.
 */
import { readFileSync } from 'node:fs';
import type { RunResult } from '../../src/transport/types.js';
import type { ClusterConfig } from '../../src/config/schema.js';
import { decideLayout, serveArgs, vllmUnit } from '../../checks/vllm/plan.js';
import type { SharedFacts } from '../../checks/vllm/shared-facts.js';

export const run = (stdout: string, exitCode = 0, stderr = ''): RunResult => ({
  commandLine: 'probe',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});

export const corpus = (name: string): string =>
  readFileSync(new URL(`../fixtures/corpus/${name}`, import.meta.url), 'utf8');

export const QWEN_CONFIG = `{
  "architectures": [
    "Qwen2ForCausalLM"
  ],
  "hidden_size": 3584,
  "max_position_embeddings": 32768,
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "torch_dtype": "bfloat16",
  "vocab_size": 152064
}`;

export function modelsOut(
  dirs: Array<{ path: string; du?: number; sha?: string; index?: string; total?: number; config?: string }>,
): string {
  return dirs
    .map(
      (d) =>
        `### model ${d.path}\ndu ${d.du ?? 15231267378}\nconfig-sha256 ${d.sha ?? 'a'.repeat(64)}\nindex-sha256 ${d.index ?? 'b'.repeat(64)}\n"total_size": ${d.total ?? 15231233024}\n### config ${d.path}\n${d.config ?? QWEN_CONFIG}\n`,
    )
    .join('');
}

export const VERSIONS =
  '### python\nPython 3.10.12\n### ray\nray, version 2.49.2\n### vllm-torch\n0.11.0 2.8.0+cu128\n### vllm\n0.11.0\n### nccl\n(2, 27, 3)\n### driver\n580.126.09\n';
export const NO_VENV =
  '### python\nbash: /opt/l20/venv/bin/python: No such file or directory\n### ray\nbash: /opt/l20/venv/bin/ray: No such file or directory\n### vllm-torch\nbash: /opt/l20/venv/bin/python: No such file or directory\n### vllm\nbash: /opt/l20/venv/bin/vllm: No such file or directory\n### nccl\nbash: /opt/l20/venv/bin/python: No such file or directory\n### driver\n535.288.01\n';

export const GPUS = `index, memory.total [MiB]\n${Array.from({ length: 8 }, (_, i) => `${i}, 46068`).join('\n')}\n`;
export const P2P_OK = `        GPU0    GPU1\n GPU0   X       OK\n GPU1   OK      X\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n`;

export function ipAddr(mgmt: string, fabric: string): string {
  return JSON.stringify([
    {
      ifindex: 1,
      ifname: 'lo',
      flags: ['LOOPBACK', 'UP', 'LOWER_UP'],
      addr_info: [{ family: 'inet', local: '127.0.0.1', prefixlen: 8 }],
    },
    {
      ifindex: 2,
      ifname: 'eno1',
      flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
      addr_info: [{ family: 'inet', local: mgmt, prefixlen: 24 }],
    },
    {
      ifindex: 3,
      ifname: 'ens1f0',
      flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
      addr_info: [{ family: 'inet', local: fabric, prefixlen: 24 }],
    },
  ]);
}

/** `ss -ltnH` lines (iproute2 layout). */
export function ss(...socks: Array<[string, number]>): string {
  return (
    [['0.0.0.0', 22] as [string, number], ...socks]
      .map(([a, p]) => `LISTEN 0      4096   ${a.includes(':') ? `[${a}]` : a}:${p}      0.0.0.0:*   `)
      .join('\n') + '\n'
  );
}

export function shared(i: number, over: Record<string, RunResult> = {}): Record<string, RunResult> {
  return {
    'ssh-connection': run(`10.0.0.100 51234 10.0.0.${i + 1} 22\n`),
    user: run('l20\n'),
    'ip-addr': run(ipAddr(`10.0.0.${i + 1}`, `192.168.101.${i + 1}`)),
    versions: run(VERSIONS),
    gpus: run(GPUS),
    p2p: run(P2P_OK),
    models: run(modelsOut([{ path: '/opt/l20/models/Qwen2.5-7B-Instruct' }])),
    listening: run(ss()),
    ...over,
  };
}

/** The facts the plan needs, for rendering the expected unit in a test. */
export function planFacts(i: number): SharedFacts {
  return {
    host: `l20-n${i + 1}`,
    mgmtAddress: `10.0.0.${i + 1}`,
    addresses: [],
    versions: { raw: {} },
    gpus: { count: 8, memoryMiB: 46068 },
    gpuEvidence: '',
    p2pEvidence: '',
    models: [],
    listeningEvidence: '',
  };
}

export function plannedUnit(config: ClusterConfig, i: number): string {
  const d = decideLayout(config, planFacts(i), 2);
  const argv = serveArgs(config, i, d.layout!, `10.0.0.${i + 1}`);
  return vllmUnit(config, i, d.layout!, argv!, 'l20');
}

/** A journal of l20-vllm.service after a good start: `engines` engines loaded, the API up when `api`. */
export function journal(first: number, engines: number, api: boolean): string {
  const lines = ['Starting vLLM OpenAI API server (l20-setup)...', 'Started vLLM OpenAI API server (l20-setup).'];
  for (let r = first; r < first + engines; r++) {
    lines.push(
      `(EngineCore_DP${r} pid=${700 + r}) INFO 01-06 09:01:40 [kv_cache_utils.py:1087] GPU KV cache size: 462,576 tokens`,
    );
  }
  if (api)
    lines.push(
      '(APIServer pid=642) INFO 01-06 09:01:41 [api_server.py:1912] Starting vLLM API server 0 on http://10.0.0.1:8000',
      '(APIServer pid=642) INFO:     Application startup complete.',
    );
  return `${lines.join('\n')}\n`;
}

export const HELP = `usage: vllm serve [model_tag] [options]

options:
  -h, --help            show this help message and exit
  --headless            Run in headless mode. (default: False)
  --host HOST           Host name. (default: None)
  --port PORT           Port number. (default: 8000)
  --api-key API_KEY [API_KEY ...]
                        If provided, the server will require one of these keys
  --served-model-name SERVED_MODEL_NAME [SERVED_MODEL_NAME ...]
                        The model name(s) used in the API.
  --tensor-parallel-size TENSOR_PARALLEL_SIZE, -tp TENSOR_PARALLEL_SIZE
                        Number of tensor parallel groups. (default: 1)
  --pipeline-parallel-size PIPELINE_PARALLEL_SIZE, -pp PIPELINE_PARALLEL_SIZE
                        Number of pipeline parallel groups. (default: 1)
  --data-parallel-size DATA_PARALLEL_SIZE, -dp DATA_PARALLEL_SIZE
                        Number of data parallel groups. (default: 1)
  --data-parallel-start-rank DATA_PARALLEL_START_RANK, -dpr DATA_PARALLEL_START_RANK
                        Starting data parallel rank for secondary nodes.
  --data-parallel-size-local DATA_PARALLEL_SIZE_LOCAL, -dpl DATA_PARALLEL_SIZE_LOCAL
                        Number of data parallel replicas to run on this node.
  --data-parallel-address DATA_PARALLEL_ADDRESS, -dpa DATA_PARALLEL_ADDRESS
                        Address of data parallel cluster head-node.
  --data-parallel-rpc-port DATA_PARALLEL_RPC_PORT, -dpp DATA_PARALLEL_RPC_PORT
                        Port for data parallel RPC communication.
  --distributed-executor-backend {external_launcher,mp,ray,uni}
                        Backend to use for distributed model workers.
  --quantization QUANTIZATION, -q QUANTIZATION
                        Method used to quantize the weights. (default: None)
  --gpu-memory-utilization GPU_MEMORY_UTILIZATION
                        The fraction of GPU memory to be used. (default: 0.9)
  --model MODEL         Name or path of the Hugging Face model to use.
`;

export const TUTORIAL_START_VLLM = readFileSync(new URL('../fixtures/tutorial/start_vllm.sh', import.meta.url), 'utf8');
