/** The registry of stages with checks. Later stages join this list as they are built. */
import type { StageId, AnyStageDef } from '../src/engine/types.js';
import { inventoryStage } from './inventory/index.js';
import { osStage } from './os/index.js';
import { nicStackStage } from './nic-stack/index.js';
import { networkStage } from './network/index.js';
import { qosStage } from './qos/index.js';
import { rdmaLinkStage } from './rdma-link/index.js';
import { gpuDriverStage } from './gpu-driver/index.js';
import { gpudirectStage } from './gpudirect/index.js';
import { ncclStage } from './nccl/index.js';
import { rayStage } from './ray/index.js';
import { vllmStage } from './vllm/index.js';

export const STAGES: ReadonlyArray<AnyStageDef> = [
  inventoryStage,
  osStage,
  nicStackStage,
  networkStage,
  qosStage,
  rdmaLinkStage,
  gpuDriverStage,
  gpudirectStage,
  ncclStage,
  rayStage,
  vllmStage,
];

export function stageById(id: StageId): AnyStageDef | undefined {
  return STAGES.find((s) => s.id === id);
}

export const STAGE_TITLES: Record<StageId, string> = {
  inventory: 'hardware, OS, NICs, GPUs, topology, cabling',
  os: 'sudo, base packages, time sync, memlock',
  'nic-stack': 'rdma-core, DOCA-OFED or MLNX_OFED; firmware',
  network: 'fabric addressing, MTU, bonds, firewall',
  qos: 'DSCP trust and PFC on priority 3, both ends',
  'rdma-link': 'ports, GIDs, MTU, ib_write_bw per cable',
  'gpu-driver': 'one install method, open modules, persistence',
  gpudirect: 'DMA-BUF or nvidia-peermem, ACS, IOMMU, P2P',
  nccl: '/etc/nccl.conf from discovered names, all-reduce',
  ray: 'units with pinned ports and fabric addresses',
  vllm: 'model, layout, serve units, health, benchmark',
};
