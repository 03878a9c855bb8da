/**
 * doctor kinds for the GPU, NCCL, Ray, vLLM and DCGM outputs (docs/DOCTOR.md "Kinds"), and the output rules that
 * read them (docs/RULES.md §3: D01–D07, D13, D15–D18, D20–D24).
 *
 * Detection scores structure only: headers and line shapes the tools always print. Every detector is a handful
 * of linear regexes or substring counts over the text head; parsers are single passes. Scores are tiered so a
 * file holding several outputs picks the primary one: nccl-tests (0.95) over the NCCL INFO lines interleaved in
 * it (0.9); a vLLM log (0.95) over its NCCL lines; an NCCL log (0.9) over a torch watchdog excerpt (0.85).
 *
 * Torch `Watchdog caught collective operation timeout` logs are their own kind, `torch-nccl-watchdog` (they
 * seldom hold an NCCL INFO line); NCCL and vLLM logs report D07 for the same lines themselves. `nvidia-smi -L`
 * and `nvidia-smi --version` are small extra kinds (`nvidia-smi-list`, `nvidia-smi-version`).
 *
 * The kinds live under `gpu/` by tool family (nvidia-smi forms, small NVIDIA tools, NCCL, Ray/vLLM, DCGM);
 * this index lists them in detection order.
 */
import type { KindDef } from '../types.js';
import { dcgmiDiag, dcgmiDiscovery } from './gpu/dcgm.js';
import { ncclLog, ncclTests, torchWatchdog } from './gpu/nccl.js';
import { nvcc, nvidiaDriverVersion, nvidiaSmiList, nvidiaSmiTopo, nvidiaSmiVersion } from './gpu/nvidia-misc.js';
import { nvidiaSmi, nvidiaSmiCsv, nvidiaSmiDmon, nvidiaSmiQ } from './gpu/nvidia-smi.js';
import { rayStart, rayStatus, vllmBench, vllmLog } from './gpu/ray-vllm.js';

export const gpuKinds: KindDef[] = [
  nvidiaSmi,
  nvidiaSmiCsv,
  nvidiaSmiQ,
  nvidiaSmiDmon,
  nvidiaSmiTopo,
  nvidiaSmiList,
  nvidiaSmiVersion,
  nvidiaDriverVersion,
  nvcc,
  ncclLog,
  ncclTests,
  torchWatchdog,
  vllmLog,
  vllmBench,
  rayStatus,
  rayStart,
  dcgmiDiag,
  dcgmiDiscovery,
] as KindDef[];
