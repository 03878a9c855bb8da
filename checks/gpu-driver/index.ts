/**
 * Stage 7, `gpu-driver` (docs/STAGES.md §3.7): one install method (apt), a supported branch new enough for
 * the CUDA wheels, the open kernel modules (DMA-BUF GPUDirect), every GPU visible, persistence on, and
 * the same driver on every host. The tutorial's apt 535 driver plus a CUDA runfile with --driver is two
 * methods and two branches; the runfile stops and installs nothing.
 */
import type { StageDef } from '../../src/engine/types.js';
import { collectGpuDriver, type GpuDriverFacts } from './facts.js';
import { gpuDriverChecks } from './checks.js';
import { gpuDriverProbes } from './probes.js';
import { gpuDriverSteps } from './steps.js';

export const gpuDriverStage: StageDef<GpuDriverFacts> = {
  id: 'gpu-driver',
  title: 'one install method, open modules, persistence',
  purpose:
    'One apt-installed driver (R580 LTSB, open kernel modules) at one version on every host, loaded, with persistence on and held against unattended upgrades. CUDA wheels bring their own runtime: a toolkit is only for building nccl-tests. The tutorial mixes apt 535 with a CUDA runfile --driver (R32) on an end-of-life branch (R33).',
  probes: gpuDriverProbes,
  collect: collectGpuDriver,
  checks: gpuDriverChecks,
  steps: gpuDriverSteps,
};
