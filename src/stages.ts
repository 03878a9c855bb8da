/** The registry of stages with checks. Later stages join this list as they are built. */
import type { StageDef, StageId } from './engine/types.js';
import { inventoryStage } from '../checks/inventory/index.js';
import { osStage } from '../checks/os/index.js';
import { nicStackStage } from '../checks/nic-stack/index.js';
import { networkStage } from '../checks/network/index.js';
import { qosStage } from '../checks/qos/index.js';
import { rdmaLinkStage } from '../checks/rdma-link/index.js';
import { gpuDriverStage } from '../checks/gpu-driver/index.js';
import { gpudirectStage } from '../checks/gpudirect/index.js';
import { ncclStage } from '../checks/nccl/index.js';
import { rayStage } from '../checks/ray/index.js';
import { vllmStage } from '../checks/vllm/index.js';

export const STAGES: ReadonlyArray<StageDef<any, any>> = [inventoryStage, osStage, nicStackStage, networkStage, qosStage, rdmaLinkStage, gpuDriverStage, gpudirectStage, ncclStage, rayStage, vllmStage];

export function stageById(id: StageId): StageDef<any, any> | undefined {
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
