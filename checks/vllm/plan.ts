/**
 * What the vllm stage deploys on each host for a layout: the `vllm serve` argv (docs/STAGES.md §3.11) and
 * the systemd unit around it. Shared by the checks (planned flags must exist in the installed vLLM;
 * the deployed unit must match) and the steps (which write it). Node 1 serves the API on its
 * management address; data-parallel peers run `--headless` engines that join node 1 over the control
 * subnet; a TP × PP layout runs one server on node 1 over Ray and nothing on the others.
 */
import type { ClusterConfig } from '../../src/config/schema.js';
import { controlAddress } from '../common/design.js';
import type { Advice, Layout } from './advisor.js';
import { adviseLayout } from './advisor.js';
import { knownModel, modelName, modelPath, modelShapeFromFiles, type ModelShape } from './catalog.js';
import { VENV_BIN, VLLM_ENV_FILE } from './probes.js';
import type { SharedFacts } from './shared-facts.js';

export const DP_RPC_PORT = 13345;

/** The configured model's shape: from this host's copy when present, else the built-in table. */
export function modelShapeFor(config: ClusterConfig, facts: SharedFacts): ModelShape | string {
  const id = config.vllm.model;
  const dir = facts.models.find((m) => m.path === modelPath(id));
  if (dir?.config) return modelShapeFromFiles(id, dir.config, dir.weightBytes, `${facts.host}:${dir.path}`);
  return (
    knownModel(id) ??
    `${id}: not on ${facts.host} (${modelPath(id)}) and not in the built-in model table; apply vllm.model-sync first`
  );
}

/** Advice for this host's view of the cluster, with the operator's override applied. */
export interface LayoutDecision {
  advice?: Advice;
  /** The layout to deploy (advice, or the override when it is feasible). */
  layout?: Layout;
  usesRay?: boolean;
  /** Why no layout could be decided. */
  problem?: string;
  /** config.vllm.layout when it is not `auto`. */
  override?: 'dp' | 'tp-pp';
  lines: string[];
}

export function decideLayout(config: ClusterConfig, facts: SharedFacts, nodes: number): LayoutDecision {
  const shape = modelShapeFor(config, facts);
  if (typeof shape === 'string') return { problem: shape, lines: [] };
  const gpus = facts.gpus ?? { count: 8, memoryMiB: 46068 };
  const advice = adviseLayout({
    model: shape,
    gpusPerNode: gpus.count,
    nodes,
    memoryMiB: gpus.memoryMiB,
    ...(facts.p2pOk !== undefined ? { p2pOk: facts.p2pOk } : {}),
  });
  const lines = [...advice.lines, ...advice.notes.map((n) => `note: ${n}`)];
  if (!facts.gpus)
    lines.unshift(
      `GPUs not readable on ${facts.host} (${facts.gpuEvidence.split('\n')[0]}): assuming 8 × L20 with 46,068 MiB`,
    );
  const override = config.vllm.layout === 'auto' ? undefined : config.vllm.layout;
  if (!override) {
    return advice.ok
      ? { advice, layout: advice.layout, usesRay: advice.usesRay, lines }
      : { advice, problem: advice.reason, lines };
  }
  const G = gpus.count;
  if (override === 'dp') {
    const fits = advice.ok && advice.kind === 'dp';
    if (!fits)
      return {
        advice,
        override,
        problem: `layout override "dp" needs the model on one GPU, but the advice is ${advice.ok ? advice.kind.toUpperCase() : 'refuse'}`,
        lines,
      };
    return {
      advice,
      override,
      layout: { tp: 1, pp: 1, dp: G * nodes, dpLocal: G, backend: 'mp' },
      usesRay: false,
      lines,
    };
  }
  if (advice.ok === false && advice.rule === 'R43') return { advice, override, problem: advice.reason, lines };
  if (shape.heads % G !== 0)
    return {
      advice,
      override,
      problem: `layout override "tp-pp" needs TP ${G} to divide the ${shape.heads} attention heads of ${shape.id}`,
      lines,
    };
  return { advice, override, layout: { tp: G, pp: nodes, dp: 1, dpLocal: 1, backend: 'ray' }, usesRay: true, lines };
}

/**
 * `vllm serve` arguments for host `hostIndex` (0 = node 1); null when the host runs no vLLM. No `--api-key`:
 * an argument is in every local user's `ps` and /proc/<pid>/cmdline. vLLM takes the key from VLLM_API_KEY
 * when the option is absent (`args.api_key or envs.VLLM_API_KEY`); the unit loads it from /etc/l20/vllm.env.
 */
export function serveArgs(config: ClusterConfig, hostIndex: number, layout: Layout, apiIp: string): string[] | null {
  const path = modelPath(config.vllm.model);
  const name = modelName(config.vllm.model);
  const base = [`${VENV_BIN}/vllm`, 'serve', path, '--served-model-name', name];
  const api = ['--host', apiIp, '--port', String(config.vllm.port)];
  if (layout.pp > 1 || layout.backend === 'ray') {
    if (hostIndex > 0) return null;
    return [
      ...base,
      '-tp',
      String(layout.tp),
      '-pp',
      String(layout.pp),
      '--distributed-executor-backend',
      'ray',
      ...api,
    ];
  }
  const tp = layout.tp > 1 ? ['--tensor-parallel-size', String(layout.tp)] : [];
  const dp = ['--data-parallel-size', String(layout.dp), '--data-parallel-size-local', String(layout.dpLocal)];
  const rpc = [
    '--data-parallel-address',
    controlAddress(config.network.design, 0),
    '--data-parallel-rpc-port',
    String(DP_RPC_PORT),
  ];
  if (hostIndex === 0) return [...base, ...tp, ...dp, ...rpc, ...api];
  return [
    ...base,
    ...tp,
    '--headless',
    ...dp,
    '--data-parallel-start-rank',
    String(hostIndex * layout.dpLocal),
    ...rpc,
  ];
}

/** Long ExecStart lines folded after each option's value, as the spec prints them. */
function execStart(argv: readonly string[]): string {
  const parts: string[] = [];
  let line = `ExecStart=${argv.slice(0, 3).join(' ')}`;
  for (let i = 3; i < argv.length; i++) {
    const word = argv[i] as string;
    const isOpt = word.startsWith('-');
    const next = argv[i + 1];
    const chunk = isOpt && next !== undefined && !next.startsWith('-') ? `${word} ${next}` : word;
    if (isOpt && next !== undefined && !next.startsWith('-')) i++;
    if (line.length + chunk.length + 1 > 100) {
      parts.push(`${line} \\`);
      line = `  ${chunk}`;
    } else line += ` ${chunk}`;
  }
  parts.push(line);
  return parts.join('\n');
}

export function vllmUnit(
  config: ClusterConfig,
  hostIndex: number,
  layout: Layout,
  argv: readonly string[],
  user: string,
): string {
  const head = hostIndex === 0;
  const ray = layout.backend === 'ray';
  const what = head ? 'vLLM OpenAI API server' : 'vLLM headless data-parallel engines';
  return [
    `# Written by l20-setup (stage vllm, STAGES.md §3.11): ${what} for ${config.vllm.model}.`,
    '# Re-running the stage rewrites this file; change the inventory, not the file.',
    '[Unit]',
    `Description=${what} (l20-setup)`,
    `After=network-online.target l20-roce-qos.service${ray ? ' l20-ray.service' : ''}`,
    `Wants=network-online.target${ray ? ' l20-ray.service' : ''}`,
    '',
    '[Service]',
    'Type=simple',
    `User=${user}`,
    'LimitMEMLOCK=infinity',
    'LimitNOFILE=65536',
    // VLLM_API_KEY (mode 0600, root): vLLM requires it on the API; it never reaches the command line.
    `EnvironmentFile=${VLLM_ENV_FILE}`,
    `Environment=VLLM_HOST_IP=${controlAddress(config.network.design, hostIndex)}`,
    'Environment=HF_HUB_OFFLINE=1',
    execStart(argv),
    'Restart=on-failure',
    'RestartSec=10',
    'TimeoutStopSec=60',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
