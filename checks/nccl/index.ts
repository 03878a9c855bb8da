/**
 * Stage 9, `nccl` (docs/STAGES.md §3.9): `/etc/nccl.conf` from the names discovered this stage, the
 * validation tools (the cluster venv the ray and vllm stages reuse, and the all-reduce benchmark),
 * and the validation run. Path 1 (nccl-tests + MPI) is not built: path 2 (PyTorch) is the default
 * without a CUDA toolkit, and the lab's hosts have none.
 */
import type { StageDef, StepDef } from '../../src/engine/types.js';
import { CLUSTER_REQUIREMENTS, CLUSTER_VENV } from '../common/pins.js';
import { BENCH_PATH, BENCH_SCRIPT } from './bench-script.js';
import { configChecks } from './checks.js';
import { NCCL_CONF, desiredConf } from './conf.js';
import { collectNccl, type NcclFacts } from './facts.js';
import { ncclProbes } from './probes.js';
import { validateRun, validationCheck, type NcclCluster } from './validation.js';

const confStep: StepDef<NcclFacts> = {
  id: 'nccl.conf',
  title: `write ${NCCL_CONF} from the discovered names`,
  danger: 'safe',
  guards: ['nccl.conf-lint', 'nccl.hca-resolve', 'nccl.conf-names'],
  plan(ctx) {
    const want = desiredConf(ctx.config, ctx.facts.fabric, ctx.runId);
    if (typeof want === 'string') return null;
    return {
      summary: `${NCCL_CONF}: NCCL_SOCKET_IFNAME==${want.socketIfname}, NCCL_IB_HCA ${want.devices.join(',')} (design ${ctx.config.network.design})`,
      files: [{ path: NCCL_CONF, content: want.content, mode: 0o644 }],
    };
  },
};

const benchToolsStep: StepDef<NcclFacts> = {
  id: 'nccl.bench-tools',
  title: 'cluster venv (vLLM, Ray, torch) and the all-reduce benchmark',
  danger: 'safe',
  guards: ['nccl.bench-tools'],
  plan(ctx) {
    const pinned =
      Object.keys(ctx.facts.venvDists).length > 0 &&
      CLUSTER_REQUIREMENTS.every((r) => {
        const [name, version] = r.replace(/\[[^\]]*\]/, '').split('==');
        return ctx.facts.venvDists[name ?? ''] === version;
      });
    return {
      summary: pinned
        ? `install ${BENCH_PATH}`
        : `create ${CLUSTER_VENV} and pip install ${CLUSTER_REQUIREMENTS.join(' ')}; install ${BENCH_PATH}`,
      files: [{ path: BENCH_PATH, content: BENCH_SCRIPT, mode: 0o755 }],
      commands: pinned
        ? []
        : [
            { command: { argv: ['python3', '-m', 'venv', CLUSTER_VENV] }, timeoutMs: 5 * 60_000 },
            // Wheels for torch and the CUDA libraries are large: ≈ 90 s on a good link, much longer on a slow one.
            {
              command: { argv: [`${CLUSTER_VENV}/bin/pip`, 'install', ...CLUSTER_REQUIREMENTS] },
              timeoutMs: 60 * 60_000,
            },
          ],
    };
  },
};

export const ncclStage: StageDef<NcclFacts, NcclCluster> = {
  id: 'nccl',
  title: '/etc/nccl.conf from discovered names, all-reduce',
  purpose:
    "The tutorial's /etc/nccl.conf breaks every NCCL job on the host since NCCL 2.24 (NCCL_ALGO=COLLNET_CHAIN is no token, R01), names ports that do not exist (R06), pins a GID index (R05), forces GDR across sockets (R04) and turns debug output on for everyone (R11). This stage writes the file from the names `rdma link show` reports now, installs the cluster venv and an all-reduce benchmark, and proves the result with NCCL's own log and bandwidth.",
  probes: ncclProbes,
  collect: collectNccl,
  cluster: validateRun,
  checks: [...configChecks, validationCheck],
  steps: [confStep, benchToolsStep],
};
