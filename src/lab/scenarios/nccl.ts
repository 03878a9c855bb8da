/**
 * Scenario parts for the nccl stage (STAGES.md §4.4).
 *
 * `ready`: what applying the stage leaves for design A — `/etc/nccl.conf` (0644) naming each host's
 * cable-1 netdev and the RDMA devices of cables 1–4 as `rdma link show` names them at this point of
 * the build, the cluster venv with the pinned vLLM/Ray/torch, and the all-reduce benchmark.
 *
 * `tutorial`: the recipe's `/etc/nccl.conf` verbatim (test/fixtures/tutorial/etc/nccl.conf), and its
 * `pip install vllm transformers sentencepiece` run as the login user without a venv, so vLLM, torch
 * and their console scripts (`~/.local/bin/torchrun`, `ray`, `vllm`) sit in the user site.
 */
import { posix } from 'node:path';
import { BENCH_PATH, BENCH_SCRIPT } from '../../../checks/nccl/bench-script.js';
import { NCCL_CONF, designALines, renderConf } from '../../../checks/nccl/conf.js';
import type { Cluster } from '../model/cluster.js';
import { CLUSTER_VENV } from '../../../checks/common/pins.js';
import { CLUSTER_DISTRIBUTIONS, SYSTEM_PYTHON, dependencyClosure, distributionFiles, userSite, venvFiles, type VenvFile } from '../model/python.js';
import type { Machine } from '../model/types.js';
import { LAB_EPOCH_MS } from '../util/clock.js';

/** The tutorial's /etc/nccl.conf, byte for byte. */
export const TUTORIAL_NCCL_CONF = `# 基础调试设置
NCCL_DEBUG=INFO
NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,COLL
# 网络配置
NCCL_SOCKET_IFNAME=bond0
NCCL_IB_HCA=mlx5_0:1,mlx5_0:2,mlx5_1:1,mlx5_1:2
# RoCE v2特定参数
NCCL_IB_GID_INDEX=3
NCCL_IB_TC=106
NCCL_IB_SL=3
# GPU Direct RDMA
NCCL_IB_CUDA_SUPPORT=1
NCCL_NET_GDR_LEVEL=5
# 性能优化
NCCL_ALGO=COLLNET_CHAIN
NCCL_BUFFSIZE=4194304
`;

/** The run id of the modelled apply (the lab epoch, as backupRunId formats it). */
export const READY_RUN_ID = new Date(LAB_EPOCH_MS).toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');

function put(m: Machine, files: ReadonlyMap<string, VenvFile>): void {
  m.files ??= new Map();
  for (const [p, f] of files) m.files.set(p, { content: f.content, mode: f.mode });
}

function inRail(address: string, k: number): boolean {
  return address.startsWith(`192.168.${100 + k}.`);
}

/** Design A's cable-k port of a machine: the one the network stage gave 192.168.10k.x, else cable k's end. */
function railPort(cluster: Cluster, m: Machine, k: number): string | undefined {
  const byAddress = m.netdevs.find((d) => d.addresses.some((a) => a.family === 'inet' && inRail(a.local, k)));
  if (byAddress) return byAddress.name;
  const cable = cluster.cables[k - 1];
  return cable ? [cable.a, cable.b].find((e) => e.host === m.hostname)?.ifname : undefined;
}

/** `/etc/nccl.conf` for design A as the nccl.conf step writes it on this machine now. */
export function readyNcclConf(cluster: Cluster, m: Machine): string | undefined {
  const ports = [1, 2, 3, 4].map((k) => railPort(cluster, m, k)).filter((p): p is string => p !== undefined);
  const devices = ports.map((p) => m.rdma.find((r) => r.netdev === p)?.name).filter((d): d is string => d !== undefined);
  if (ports.length === 0 || devices.length !== ports.length) return undefined;
  // DSCP 26 with ECN 2 → traffic class 106; NCCL_CROSS_NIC=0 (config defaults).
  return renderConf('A', READY_RUN_ID, designALines(ports[0]!, devices, 106, 0)).content;
}

export function ready(cluster: Cluster): void {
  for (const m of cluster.machines) {
    const conf = readyNcclConf(cluster, m);
    if (conf !== undefined) put(m, new Map([[NCCL_CONF, { content: conf, mode: 0o644 }]]));
    put(m, venvFiles(CLUSTER_VENV, CLUSTER_DISTRIBUTIONS));
    put(m, new Map([[BENCH_PATH, { content: BENCH_SCRIPT, mode: 0o755 }]]));
  }
}

/** The tutorial's `pip install vllm transformers sentencepiece` as the login user: the user site and ~/.local/bin. */
export function tutorialUserSite(m: Machine): Map<string, VenvFile> {
  const home = m.user.home;
  const dists = dependencyClosure('vllm');
  return distributionFiles(userSite(home), posix.join(home, '.local', 'bin'), SYSTEM_PYTHON, dists);
}

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    put(m, new Map([[NCCL_CONF, { content: TUTORIAL_NCCL_CONF, mode: 0o644 }]]));
    put(m, tutorialUserSite(m));
  }
}
