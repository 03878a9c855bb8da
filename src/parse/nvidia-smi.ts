/**
 * `nvidia-smi` default table, drivers 390 … 610.
 *
 * Header `| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0 |` (390 has no CUDA
 * Version; R610 prints `KMD Version:` and `CUDA UMD Version:`). Per GPU two rows (three from 450 on: `MIG M.`):
 *   `|   0  NVIDIA H200          On  |   00000000:00:06.0 Off |                    0 |`
 *   `| N/A   51C    P0   691W /  700W |     883MiB / 143771MiB |    100%      Default |`
 *   `|                               |                        |             Disabled |`
 * Tables are 79, 89 or 91 columns wide, so rows are split on `|`, never at fixed offsets. Then optional
 * `MIG devices:` and `Processes:` tables (`GPU GI CI PID Type Process name GPU Memory` from 450, `GPU PID Type …`
 * before). An error text instead of the table (`NVIDIA-SMI has failed …`, `Failed to initialize NVML: …`,
 * `No devices were found`) gives `gpus: []`. A `| grep MiB` excerpt (second rows only) still yields GPUs,
 * without index or name.
 */
import { z } from 'zod';
import { compact, guard, toInt, toNum, validate } from './common.js';
import { clip, logLines } from './log-lines.js';

export const NvidiaSmiGpuSchema = z.object({
  index: z.number().int().optional(),
  name: z.string().optional(),
  /** As printed (`00000000:00:06.0`). */
  busId: z.string().optional(),
  persistenceMode: z.string().optional(),
  dispA: z.string().optional(),
  /** `Volatile Uncorr. ECC`: a count, or the text printed (`N/A`, `On` under MIG, `ERR!`). */
  eccUncorr: z.union([z.number(), z.string()]).optional(),
  fanPct: z.number().optional(),
  tempC: z.number().optional(),
  perfState: z.string().optional(),
  powerW: z.number().optional(),
  powerCapW: z.number().optional(),
  memUsedMiB: z.number().optional(),
  memTotalMiB: z.number().optional(),
  utilPct: z.number().optional(),
  computeMode: z.string().optional(),
  /** `MIG M.` row (450+): `Disabled`, `Enabled`, `N/A`. */
  migMode: z.string().optional(),
  /** Fields printed as `ERR!` (`fan`, `temp`, `power`, …). */
  errFields: z.array(z.string()).optional(),
});
export type NvidiaSmiGpu = z.infer<typeof NvidiaSmiGpuSchema>;

export const NvidiaSmiProcessSchema = z.object({
  gpu: z.number().int(),
  gi: z.string().optional(),
  ci: z.string().optional(),
  pid: z.number().int().optional(),
  type: z.string().optional(),
  name: z.string(),
  memMiB: z.number().optional(),
});

export const NvidiaSmiFactsSchema = z.object({
  smiVersion: z.string().optional(),
  driverVersion: z.string().optional(),
  cudaVersion: z.string().optional(),
  timestamp: z.string().optional(),
  gpus: z.array(NvidiaSmiGpuSchema),
  processes: z.array(NvidiaSmiProcessSchema),
  migDevices: z
    .array(
      z.object({
        gpu: z.number().int(),
        gi: z.number().int().optional(),
        ci: z.number().int().optional(),
        mig: z.number().int().optional(),
        memUsedMiB: z.number().optional(),
        memTotalMiB: z.number().optional(),
      }),
    )
    .optional(),
  /** The text printed instead of (or within) the table: driver, NVML or device errors. */
  errors: z.array(z.string()),
  noRunningProcesses: z.boolean().optional(),
});
export type NvidiaSmiFacts = z.infer<typeof NvidiaSmiFactsSchema>;

export interface SmiHit {
  line: number;
  text: string;
}

export interface NvidiaSmiScan {
  facts: NvidiaSmiFacts;
  /** D13 texts. */
  driverErrors: SmiHit[];
  /** D21: `Unable to determine the device handle`, `fallen off the bus`. */
  gpuLost: SmiHit[];
  /** D21: GPU rows holding `ERR!`, with the fields. */
  errRows: Array<SmiHit & { fields: string[] }>;
  /** D21: rows with `Volatile Uncorr. ECC` > 0. */
  eccRows: Array<SmiHit & { count: number; gpu?: number }>;
  /** D23: `MIG M.` Enabled rows and the `MIG devices:` header. */
  mig: SmiHit[];
}

const BUS = /([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])/;
export const SMI_DRIVER_ERROR =
  /NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver|Failed to initialize NVML|No devices were found|NVRM: No NVIDIA graphics adapter probed|Driver\/library version mismatch/i;
export const SMI_GPU_LOST = /Unable to determine the device handle for GPU|GPU has fallen off the bus|GPU is lost/i;

function unit(s: string | undefined, suffix: RegExp): number | undefined {
  if (s === undefined) return undefined;
  return toNum(s.replace(suffix, ''));
}

/** `|    0   N/A  N/A      1032      C   python      745MiB |` (450+) or `|    0      1032      C   python   10781MiB |`. */
function processRow(t: string): NvidiaSmiFacts['processes'][number] | undefined {
  const tok = t.replace(/^\|/, '').replace(/\|$/, '').trim().split(/\s+/);
  const gpu = toInt(tok[0]);
  if (gpu === undefined || tok.length < 4) return undefined;
  const memTok = tok[tok.length - 1] ?? '';
  const mem = /^(\d+)MiB$/.exec(memTok);
  if (!mem && memTok !== 'N/A') return undefined;
  const gici =
    /^(?:\d+|N\/A)$/.test(tok[1] ?? '') &&
    /^(?:\d+|N\/A)$/.test(tok[2] ?? '') &&
    /^\d+$/.test(tok[3] ?? '') &&
    tok.length >= 6;
  const pidAt = gici ? 3 : 1;
  const pid = toInt(tok[pidAt]);
  const type = tok[pidAt + 1];
  const name = tok.slice(pidAt + 2, -1).join(' ');
  if (pid === undefined || type === undefined || !/^[CGM+]{1,3}$/.test(type) || name === '') return undefined;
  return compact({
    gpu,
    gi: gici ? tok[1] : undefined,
    ci: gici ? tok[2] : undefined,
    pid,
    type,
    name,
    memMiB: mem ? Number(mem[1]) : undefined,
  });
}

function emptyScan(): NvidiaSmiScan {
  return {
    facts: { gpus: [], processes: [], errors: [] },
    driverErrors: [],
    gpuLost: [],
    errRows: [],
    eccRows: [],
    mig: [],
  };
}

function scanImpl(text: string): NvidiaSmiScan {
  const s = emptyScan();
  const f = s.facts;
  const lines = logLines(text);
  let section: 'gpus' | 'mig' | 'procs' = 'gpus';
  let cur: NvidiaSmiGpu | undefined;
  let curHasRow2 = false;
  let curLine = 0;
  const migDevices: NonNullable<NvidiaSmiFacts['migDevices']> = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const t = line.trim();
    if (t === '') continue;
    const lineNo = i + 1;
    const hit = (): SmiHit => ({ line: lineNo, text: clip(t) });
    if (SMI_DRIVER_ERROR.test(t)) {
      if (s.driverErrors.length < 10) s.driverErrors.push(hit());
      if (f.errors.length < 20) f.errors.push(clip(t));
      continue;
    }
    if (SMI_GPU_LOST.test(t)) {
      if (s.gpuLost.length < 10) s.gpuLost.push(hit());
      if (f.errors.length < 20) f.errors.push(clip(t));
      continue;
    }
    if (t.includes('NVIDIA-SMI') && /NVIDIA-SMI\s+\d/.test(t)) {
      f.smiVersion = /NVIDIA-SMI\s+(\S+)/.exec(t)?.[1];
      const drv = /(?:Driver|KMD) Version:\s*(\S+)/.exec(t);
      if (drv?.[1]) f.driverVersion = drv[1];
      const cuda = /CUDA (?:UMD )?Version:\s*([^\s|]+)/.exec(t);
      if (cuda?.[1]) f.cudaVersion = cuda[1];
      continue;
    }
    if (/^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} +\d+ [\d:]+ \d{4}$/.test(t)) {
      f.timestamp ??= t;
      continue;
    }
    if (/^\|\s*Processes:/.test(t)) {
      section = 'procs';
      continue;
    }
    if (/^\|\s*MIG devices:/.test(t)) {
      section = 'mig';
      if (s.mig.length < 10) s.mig.push(hit());
      continue;
    }
    if (!t.startsWith('|')) continue;
    if (/^[|+][-=+|\s]*$/.test(t)) continue; // separators
    const cells = t.split('|').slice(1, -1);
    if (section === 'procs') {
      if (/No running processes found/i.test(t)) {
        f.noRunningProcesses = true;
        continue;
      }
      const p = processRow(t);
      if (p) f.processes.push(p);
      continue;
    }
    if (section === 'mig') {
      const m = /^\|\s*(\d+)\s+(\d+|N\/A)\s+(\d+|N\/A)\s+(\d+)\s*\|\s*(\d+)MiB\s*\/\s*(\d+)MiB/.exec(t);
      if (m)
        migDevices.push(
          compact({
            gpu: Number(m[1]),
            gi: toInt(m[2]),
            ci: toInt(m[3]),
            mig: toInt(m[4]),
            memUsedMiB: Number(m[5]),
            memTotalMiB: Number(m[6]),
          }),
        );
      continue;
    }
    if (cells.length < 3) {
      // A process row without its table header (`nvidia-smi | grep MiB`).
      const p = cells.length <= 1 ? processRow(t) : undefined;
      if (p) f.processes.push(p);
      continue;
    }
    const [c1 = '', c2 = '', c3 = ''] = cells;
    // Row 1: index, name, persistence | bus id, Disp.A | ECC
    // Persistence-M (Linux) or the driver model TCC/WDDM (Windows) ends the first cell.
    const r1 = /^\s*(\d+)\s+(.*?)\s+(On|Off|N\/A|TCC|WDDM|MCDM)\s*$/.exec(c1);
    const bus = BUS.exec(c2);
    if (r1 && bus) {
      if (cur) f.gpus.push(cur);
      const ecc = c3.trim();
      cur = compact({
        index: Number(r1[1]),
        name: (r1[2] ?? '').trim(),
        persistenceMode: r1[3],
        busId: bus[1],
        dispA: /\b(On|Off|N\/A)\s*$/.exec(c2)?.[1],
        eccUncorr: ecc === '' ? undefined : (toInt(ecc) ?? ecc),
      });
      curHasRow2 = false;
      curLine = lineNo;
      const eccN = toInt(ecc);
      if (eccN !== undefined && eccN > 0) s.eccRows.push({ ...hit(), count: eccN, gpu: Number(r1[1]) });
      if (ecc === 'ERR!') s.errRows.push({ ...hit(), fields: ['ecc'] });
      continue;
    }
    // Row 2: fan temp perf power/cap | used / total | util compute-mode
    const mem = /(\d+)MiB\s*\/\s*(\d+)MiB/.exec(c2);
    const r2 = /^\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*\/\s*(\S+)\s*$/.exec(c1);
    if (mem && r2) {
      if (!cur || curHasRow2) {
        if (cur) f.gpus.push(cur);
        cur = {};
        curLine = lineNo;
      }
      curHasRow2 = true;
      const errFields: string[] = [];
      const [, fan, temp, perf, pwr, cap] = r2;
      const names = ['fan', 'temp', 'perf', 'power', 'powerCap'] as const;
      [fan, temp, perf, pwr, cap].forEach((v, k) => {
        if (v === 'ERR!') errFields.push(names[k] ?? 'field');
      });
      const u = /^\s*(\S+)\s+(.*?)\s*$/.exec(c3);
      if (u?.[1] === 'ERR!') errFields.push('util');
      Object.assign(
        cur,
        compact({
          fanPct: unit(fan, /%$/),
          tempC: unit(temp, /C$/),
          perfState: perf === 'ERR!' ? undefined : perf,
          powerW: unit(pwr, /W$/),
          powerCapW: unit(cap, /W$/),
          memUsedMiB: Number(mem[1]),
          memTotalMiB: Number(mem[2]),
          utilPct: unit(u?.[1], /%$/),
          computeMode: u?.[2] || undefined,
        }),
      );
      if (errFields.length > 0) {
        cur.errFields = [...(cur.errFields ?? []), ...errFields];
        s.errRows.push({ ...hit(), fields: errFields });
      }
      continue;
    }
    // Row 3 (450+): MIG M. in the last cell, the others empty.
    if (cur && c1.trim() === '' && c2.trim() === '' && /^\s*(Enabled|Disabled|N\/A)\s*$/.test(c3)) {
      cur.migMode = c3.trim();
      if (cur.migMode === 'Enabled' && s.mig.length < 10) s.mig.push(hit());
      continue;
    }
  }
  if (cur) f.gpus.push(cur);
  void curLine;
  if (migDevices.length > 0) f.migDevices = migDevices;
  return s;
}

let cache: { text: string; scan: NvidiaSmiScan } | undefined;

export function scanNvidiaSmi(text: string): NvidiaSmiScan {
  if (typeof text !== 'string') return emptyScan();
  if (cache && cache.text === text) return cache.scan;
  const scan = guard(() => scanImpl(text), emptyScan);
  cache = { text, scan };
  return scan;
}

export function parseNvidiaSmi(text: string): NvidiaSmiFacts {
  return guard(
    () => validate(NvidiaSmiFactsSchema, compact({ ...scanNvidiaSmi(text).facts })),
    () => emptyScan().facts,
  );
}
