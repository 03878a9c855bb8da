/**
 * Scenario parts for the nccl stage (docs/STAGES.md §4.4).
 *
 * `ready`: what applying the stage leaves for design A — `/etc/nccl.conf`, the cluster venv with the
 * pinned vLLM/Ray/torch and the all-reduce benchmark — is all files: the recorded ones (ready/).
 *
 * `tutorial`: the recipe's `/etc/nccl.conf` verbatim (test/fixtures/tutorial/etc/nccl.conf), and its
 * `pip install vllm transformers sentencepiece` run as the login user without a venv, so vLLM, torch
 * and their console scripts (`~/.local/bin/torchrun`, `ray`, `vllm`) sit in the user site.
 */
import { posix } from 'node:path';
import type { Cluster } from '../model/cluster.js';
import { SYSTEM_PYTHON, dependencyClosure, distributionFiles, userSite, type VenvFile } from '../model/python.js';
import type { Machine } from '../model/types.js';

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

/** The tutorial's `pip install vllm transformers sentencepiece` as the login user: the user site and ~/.local/bin. */
export function tutorialUserSite(m: Machine): Map<string, VenvFile> {
  const home = m.user.home;
  const dists = dependencyClosure('vllm');
  return distributionFiles(userSite(home), posix.join(home, '.local', 'bin'), SYSTEM_PYTHON, dists);
}

function put(m: Machine, files: ReadonlyMap<string, VenvFile>): void {
  m.files ??= new Map();
  for (const [p, f] of files) m.files.set(p, { content: f.content, mode: f.mode });
}

export function ready(_cluster: Cluster): void {
  // Nothing beyond the recorded files.
}

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    put(m, new Map([['/etc/nccl.conf', { content: TUTORIAL_NCCL_CONF, mode: 0o644 }]]));
    put(m, tutorialUserSite(m));
  }
}
