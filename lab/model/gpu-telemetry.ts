/**
 * GPU telemetry: utilisation, memory, power, temperature and clocks of each GPU at the current
 * simulated time, from one function every view uses (nvidia-smi's table, its CSV queries, the
 * monitor). Idle L20s sit in P8 at ≈ 24–34 W; work registered in `machine.gpuWork` (NCCL tests,
 * vLLM engines, torch ranks) moves them to P0 with power, heat and clocks following the load.
 * Noise comes from the seeded PRNG keyed by GPU and by the second of simulated time, so the same
 * seed and commands print the same numbers.
 */
import { rng } from '../util/prng.js';
import type { Gpu, GpuWork, Machine } from './types.js';

export interface GpuSample {
  utilPct: number;
  memUtilPct: number;
  memUsedMiB: number;
  memTotalMiB: number;
  powerW: number;
  powerCapW: number;
  tempC: number;
  pstate: 'P0' | 'P2' | 'P8';
  smClockMHz: number;
  memClockMHz: number;
}

/** L20 clocks (nvidia-smi -q -d CLOCK): boost 2520 MHz SM, GDDR6 at 9001 MHz; P8 idles at 210/405. */
export const L20_CLOCKS = { smMax: 2520, memMax: 9001, smIdle: 210, memIdle: 405 } as const;

export function workOn(m: Machine, gpu: number): GpuWork[] {
  return (m.gpuWork ?? []).filter((w) => w.gpu === gpu);
}

/** Adds a CUDA process to a GPU (what a benchmark or an engine does when it starts). */
export function addGpuWork(m: Machine, work: GpuWork): void {
  (m.gpuWork ??= []).push(work);
  m.revision++;
}

/** Removes a process's work from every GPU (it exited). */
export function removeGpuWork(m: Machine, pid: number): void {
  if (!m.gpuWork) return;
  m.gpuWork = m.gpuWork.filter((w) => w.pid !== pid);
  m.revision++;
}

export function gpuSample(m: Machine, gpu: Gpu, now = m.clock.now()): GpuSample {
  const work = workOn(m, gpu.index);
  const second = Math.floor(now / 1000);
  const noise = rng(m.seed, m.hostname, 'gpu-telemetry', gpu.index, second);
  // Each board runs a little warmer or cooler than its neighbours, steadily.
  const board = rng(m.seed, m.hostname, 'gpu-board', gpu.index);
  const ambient = 27 + board.int(0, 5);
  const memUsedMiB = Math.min(
    gpu.memoryMiB,
    work.reduce((s, w) => s + w.memMiB, 0),
  );
  const utilPct = Math.min(100, Math.round(work.reduce((s, w) => s + w.utilPct, 0)));
  const base = { memUsedMiB, memTotalMiB: gpu.memoryMiB, powerCapW: gpu.powerLimitW };
  if (work.length === 0) {
    return {
      ...base,
      utilPct: 0,
      memUtilPct: 0,
      pstate: 'P8',
      smClockMHz: L20_CLOCKS.smIdle,
      memClockMHz: L20_CLOCKS.memIdle,
      powerW: round2(24 + board.next() * 6 + noise.next() * 4),
      tempC: ambient + noise.int(0, 1),
    };
  }
  // A context holds the GPU in P0 even when it waits; power and heat follow the load.
  const load = utilPct / 100;
  const powerW = Math.min(gpu.powerLimitW, round2(58 + load * (gpu.powerLimitW - 58) * 0.9 + (noise.next() - 0.5) * 6));
  return {
    ...base,
    utilPct,
    memUtilPct: Math.round(utilPct * 0.6),
    pstate: 'P0',
    smClockMHz: utilPct > 0 ? L20_CLOCKS.smMax - (utilPct > 90 ? 15 * noise.int(0, 3) : 0) : 1755,
    memClockMHz: L20_CLOCKS.memMax,
    powerW,
    tempC: Math.round(ambient + 8 + load * 34 + noise.int(0, 2)),
  };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
