/**
 * The cluster venv the nccl stage builds and the ray and vllm stages reuse (docs/STAGES.md §3.9), and the
 * versions it pins. The product owns these: the checks compare what a host runs with them, the apply
 * installs them, the bundle probes the venv at this path. The lab's Python model reads them from here
 * (it models what the product installs), never the other way round.
 *
 * Pins (consistent with each other as released): vLLM 0.11.0 requires torch==2.8.0; the torch 2.8.0
 * CUDA 12.8 wheel depends on nvidia-nccl-cu12==2.27.3 (built against CUDA 12.9, which NCCL prints
 * as `NCCL version 2.27.3+cuda12.9`); vLLM 0.11 accepts Ray ≥ 2.48, pinned to 2.49.2.
 */

export const CLUSTER_VENV = '/opt/l20/venv';

export const PINS = {
  vllm: '0.11.0',
  ray: '2.49.2',
  torch: '2.8.0',
  /** torch's local version tag: `2.8.0+cu128`. */
  torchCuda: 'cu128',
  nccl: '2.27.3',
  /** The CUDA the NCCL wheel was built with (the `+cudaX.Y` of `NCCL version`). */
  ncclCuda: '12.9',
} as const;

/** The pip command line's requirements (`pip install vllm==… "ray[default]==…"`). */
export const CLUSTER_REQUIREMENTS = [`vllm==${PINS.vllm}`, `ray[default]==${PINS.ray}`] as const;
