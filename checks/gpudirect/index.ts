/**
 * Stage 8, `gpudirect` (docs/STAGES.md §3.8): a GPUDirect RDMA path (DMA-BUF with the open module, else
 * nvidia-peermem on an OFED/DOCA ib_core), ACS off and the IOMMU in passthrough on the PCIe paths
 * between GPUs and NICs, P2P inside tensor-parallel groups, and which GPUs sit near a NIC. The
 * tutorial loads nvidia-peermem from /etc/modules and never looks at ACS or the IOMMU.
 */
import type { StageDef } from '../../src/engine/types.js';
import { collectGpudirect, type GpudirectFacts } from './facts.js';
import { gpudirectChecks } from './checks.js';
import { gpudirectProbes } from './probes.js';
import { gpudirectSteps } from './steps.js';

export const gpudirectStage: StageDef<GpudirectFacts> = {
  id: 'gpudirect',
  title: 'DMA-BUF or nvidia-peermem, ACS, IOMMU, P2P',
  purpose:
    'GPU memory straight to the NIC: DMA-BUF (open kernel module, kernel ≥ 5.12, chosen by NCCL itself) or the legacy nvidia-peermem on an OFED/DOCA stack; PCIe ACS off and IOMMU passthrough so P2P and GPUDirect traffic stays below the switches; P2P inside tensor-parallel groups; which GPUs share a switch with a NIC.',
  probes: gpudirectProbes,
  collect: collectGpudirect,
  checks: gpudirectChecks,
  steps: gpudirectSteps,
};
