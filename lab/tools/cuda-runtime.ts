/**
 * What a CUDA program (torch, NCCL) finds on a modelled host, from the NVIDIA driver model
 * (model/nvidia.ts): whether a kernel module is loaded and its userspace matches (else torch's
 * "Found no NVIDIA driver" or the NVML mismatch), the CUDA driver version NCCL logs as
 * `cudaDriverVersion 13000`, and the GPUDirect RDMA path (DMA-BUF or nvidia-peermem, R34).
 */
import { cudaOf, gdrPath as driverGdrPath, smiFailure } from '../model/nvidia.js';
import type { Machine } from '../model/types.js';

export interface CudaRuntime {
  ok: boolean;
  /** Why CUDA cannot initialise (torch's wording), when !ok. */
  error?: string;
  /** `580.126.09` */
  driverVersion?: string;
  /** CUDA driver API version as an integer: 13000 for CUDA 13.0 (R580). */
  cudaDriverVersion?: number;
  open: boolean;
  peermem: boolean;
}

export function cudaRuntime(m: Machine): CudaRuntime {
  const peermem = m.modules.includes('nvidia_peermem');
  const loaded = m.nvidia?.loaded;
  if (!loaded) {
    return {
      ok: false,
      open: false,
      peermem,
      error:
        'Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx',
    };
  }
  if (smiFailure(m)) {
    return {
      ok: false,
      open: loaded.open,
      peermem,
      driverVersion: loaded.version,
      error: 'CUDA driver initialization failed, you might not have a CUDA gpu.',
    };
  }
  const [maj = '13', min = '0'] = cudaOf(loaded.version).split('.');
  return {
    ok: true,
    open: loaded.open,
    peermem,
    driverVersion: loaded.version,
    cudaDriverVersion: Number(maj) * 1000 + Number(min) * 10,
  };
}

/** Whether GPUDirect RDMA has a working path: DMA-BUF (open module, kernel ≥ 5.12) or nvidia-peermem. */
export function gdrPath(m: Machine): 'dmabuf' | 'peermem' | undefined {
  const p = driverGdrPath(m);
  return p === 'none' ? undefined : p;
}
