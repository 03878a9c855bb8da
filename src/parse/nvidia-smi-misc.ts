/**
 * Two small nvidia-smi outputs:
 * - `nvidia-smi -L`: `GPU 0: NVIDIA L40S (UUID: GPU-…)`, MIG instances indented below as
 *   `  MIG 3g.40gb     Device  0: (UUID: MIG-…)`.
 * - `nvidia-smi --version`: `NVIDIA-SMI version  : 595.80`, `NVML version : …`, `DRIVER version : …`,
 *   `CUDA Version : 13.2`.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';

export const NvidiaSmiListFactsSchema = z.object({
  gpus: z.array(
    z.object({
      index: z.number().int(),
      name: z.string(),
      uuid: z.string().optional(),
      migDevices: z.array(z.string()).optional(),
    }),
  ),
});
export type NvidiaSmiListFacts = z.infer<typeof NvidiaSmiListFactsSchema>;

export function parseNvidiaSmiList(text: string): NvidiaSmiListFacts {
  return guard(
    () => {
      const f: NvidiaSmiListFacts = { gpus: [] };
      for (const line of logLines(text)) {
        const g = /^GPU (\d+):\s*(.+?)\s*\(UUID:\s*([^)\s]+)\)/.exec(line.trim());
        if (g) {
          f.gpus.push({ index: Number(g[1]), name: g[2] ?? '', uuid: g[3] });
          continue;
        }
        const m = /^\s+MIG\s+(\S+)\s+Device\s+\d+:/.exec(line);
        const last = f.gpus[f.gpus.length - 1];
        if (m?.[1] && last) (last.migDevices ??= []).push(m[1]);
      }
      return validate(NvidiaSmiListFactsSchema, f);
    },
    () => ({ gpus: [] }),
  );
}

export const NvidiaSmiVersionFactsSchema = z.object({
  smiVersion: z.string().optional(),
  nvmlVersion: z.string().optional(),
  driverVersion: z.string().optional(),
  cudaVersion: z.string().optional(),
});
export type NvidiaSmiVersionFacts = z.infer<typeof NvidiaSmiVersionFactsSchema>;

export function parseNvidiaSmiVersion(text: string): NvidiaSmiVersionFacts {
  return guard(
    () => {
      const f: NvidiaSmiVersionFacts = {};
      for (const line of logLines(text)) {
        const m = /^\s*(NVIDIA-SMI|NVML|DRIVER|CUDA)\s+version\s*:\s*(\S+)/i.exec(line);
        if (!m?.[1]) continue;
        const k = m[1].toUpperCase();
        if (k === 'NVIDIA-SMI') f.smiVersion ??= m[2];
        else if (k === 'NVML') f.nvmlVersion ??= m[2];
        else if (k === 'DRIVER') f.driverVersion ??= m[2];
        else f.cudaVersion ??= m[2];
      }
      return validate(NvidiaSmiVersionFactsSchema, compact(f));
    },
    () => ({}),
  );
}
