/**
 * nvidia-smi of driver 580 over the machine's GPUs, the loaded driver (model/nvidia.ts) and the
 * telemetry of model/gpu-telemetry.ts (one function for every view).
 *
 * Formats from real captures: the default table follows fixtures/h200-x2/nvidia-smi.txt (580, `+---`
 * separators) with an L20's passive-cooled row (`N/A` fan, `N/A` MIG as fixtures/corpus/
 * nvidia-smi__l40s-595.80-*.txt); process rows as nvidia-smi__l40s-595.80-with-processes.txt;
 * `--query-gpu`/`--query-compute-apps` CSV as fixtures/h200-x2/query-*.txt (header names with
 * `[unit]`, `clocks.sm` reported as `clocks.current.sm`, values with units unless `nounits`, `[N/A]`);
 * `-L`, `--version` as fixtures/h200-x2; the bad-field and missing-value errors as 580.159.04 prints
 * them. Without a loaded module: `NVIDIA-SMI has failed because it couldn't communicate with the
 * NVIDIA driver…` (exit 9); userspace newer than the module: `Failed to initialize NVML:
 * Driver/library version mismatch` (exit 18).
 *
 * Loop mode (`-l [SEC]`, `--loop=SEC`, `-lms [MS]`, `--loop-ms=MS`; `-l` alone is 5 s as the man page
 * says) prints a block every interval until the client cancels, as the real tool runs until Ctrl+C:
 * the CSV header only before the first block (fixtures/h200-x2/query-gpu_lms500_busy.txt is a
 * noheader capture, one row per GPU per block), each block sampled at its own time. A driver that
 * fails fails at once, before any loop.
 */
import type { ExecResult } from 'just-bash';
import { toolIo } from '../system/live.js';
import { cudaOf, runtime, smiFailure } from '../model/nvidia.js';
import { gpuSample, workOn, type GpuSample } from '../model/gpu-telemetry.js';
import type { Gpu, Machine } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import { renderP2p, renderTopoMatrix } from './nvidia-smi-topo.js';
import type { Tool, ToolEnv } from './types.js';

/** `00000000:3A:00.0`: NVML's bus id (8-digit domain, upper-case hex). */
export function busId(bdf: string): string {
  return `0000${bdf}`.toUpperCase();
}

const p2 = (n: number): string => String(n).padStart(2, '0');

/** `Sun Nov 29 16:07:18 2026` as the table's first line prints it (asctime). */
function asctime(ms: number): string {
  const d = new Date(ms);
  const day = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'][d.getUTCDay()];
  const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
  return `${day} ${mon} ${String(d.getUTCDate()).padStart(2, ' ')} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
}

/** `2026/07/03 08:33:53.650` (the CSV timestamp field). */
function csvTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}/${p2(d.getUTCMonth() + 1)}/${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, '0')}`;
}

function pcieGen(m: Machine, g: Gpu, which: 'sta' | 'cap'): number {
  const l = m.pci.find((p) => p.bdf === g.pci)?.link;
  return (which === 'sta' ? l?.staGen : l?.capGen) ?? 4;
}
function pcieWidth(m: Machine, g: Gpu, which: 'sta' | 'cap'): number {
  const l = m.pci.find((p) => p.bdf === g.pci)?.link;
  return (which === 'sta' ? l?.staWidth : l?.capWidth) ?? 16;
}

interface FieldCtx {
  m: Machine;
  g: Gpu;
  s: GpuSample;
  now: number;
}

/** A queryable field: the header name nvidia-smi prints, its unit, and its value (null = `[N/A]`). */
interface Field {
  header: string;
  unit?: string;
  value(c: FieldCtx): string | number | null;
}

const f2 = (n: number): string => n.toFixed(2);

const FIELDS: Record<string, Field> = {
  timestamp: { header: 'timestamp', value: (c) => csvTime(c.now) },
  driver_version: { header: 'driver_version', value: (c) => runtime(c.m).loaded?.version ?? null },
  count: { header: 'count', value: (c) => c.m.gpus.length },
  index: { header: 'index', value: (c) => c.g.index },
  name: { header: 'name', value: (c) => c.g.name },
  serial: { header: 'serial', value: (c) => c.g.serial },
  uuid: { header: 'uuid', value: (c) => c.g.uuid },
  'pci.bus_id': { header: 'pci.bus_id', value: (c) => busId(c.g.pci) },
  'pci.domain': { header: 'pci.domain', value: (c) => `0x${c.g.pci.slice(0, 4).toUpperCase()}` },
  'pci.bus': { header: 'pci.bus', value: (c) => `0x${c.g.pci.slice(5, 7).toUpperCase()}` },
  'pci.device': { header: 'pci.device', value: (c) => `0x${c.g.pci.slice(8, 10).toUpperCase()}` },
  'pci.device_id': { header: 'pci.device_id', value: () => '0x26BA10DE' },
  'pci.sub_device_id': { header: 'pci.sub_device_id', value: () => '0x195710DE' },
  'pcie.link.gen.current': { header: 'pcie.link.gen.current', value: (c) => pcieGen(c.m, c.g, 'sta') },
  'pcie.link.gen.max': { header: 'pcie.link.gen.max', value: (c) => pcieGen(c.m, c.g, 'cap') },
  'pcie.link.width.current': { header: 'pcie.link.width.current', value: (c) => pcieWidth(c.m, c.g, 'sta') },
  'pcie.link.width.max': { header: 'pcie.link.width.max', value: (c) => pcieWidth(c.m, c.g, 'cap') },
  vbios_version: { header: 'vbios_version', value: (c) => c.g.vbios },
  persistence_mode: { header: 'persistence_mode', value: (c) => (runtime(c.m).persistence ? 'Enabled' : 'Disabled') },
  pstate: { header: 'pstate', value: (c) => c.s.pstate },
  'fan.speed': { header: 'fan.speed', unit: '%', value: () => null },
  'temperature.gpu': { header: 'temperature.gpu', value: (c) => c.s.tempC },
  'temperature.memory': { header: 'temperature.memory', value: () => null },
  'utilization.gpu': { header: 'utilization.gpu', unit: '%', value: (c) => c.s.utilPct },
  'utilization.memory': { header: 'utilization.memory', unit: '%', value: (c) => c.s.memUtilPct },
  'memory.total': { header: 'memory.total', unit: 'MiB', value: (c) => c.s.memTotalMiB },
  'memory.used': { header: 'memory.used', unit: 'MiB', value: (c) => c.s.memUsedMiB },
  'memory.free': { header: 'memory.free', unit: 'MiB', value: (c) => c.s.memTotalMiB - c.s.memUsedMiB },
  'power.draw': { header: 'power.draw', unit: 'W', value: (c) => f2(c.s.powerW) },
  'power.draw.instant': { header: 'power.draw.instant', unit: 'W', value: (c) => f2(c.s.powerW) },
  'power.limit': { header: 'power.limit', unit: 'W', value: (c) => f2(c.s.powerCapW) },
  'enforced.power.limit': { header: 'enforced.power.limit', unit: 'W', value: (c) => f2(c.s.powerCapW) },
  'power.default_limit': { header: 'power.default_limit', unit: 'W', value: (c) => f2(c.g.powerLimitW) },
  'power.min_limit': { header: 'power.min_limit', unit: 'W', value: () => '100.00' },
  'power.max_limit': { header: 'power.max_limit', unit: 'W', value: (c) => f2(c.g.powerLimitW) },
  'clocks.current.sm': { header: 'clocks.current.sm', unit: 'MHz', value: (c) => c.s.smClockMHz },
  'clocks.current.graphics': { header: 'clocks.current.graphics', unit: 'MHz', value: (c) => c.s.smClockMHz },
  'clocks.current.memory': { header: 'clocks.current.memory', unit: 'MHz', value: (c) => c.s.memClockMHz },
  'clocks.max.sm': { header: 'clocks.max.sm', unit: 'MHz', value: () => 2520 },
  'clocks.max.memory': { header: 'clocks.max.memory', unit: 'MHz', value: () => 9001 },
  'ecc.mode.current': { header: 'ecc.mode.current', value: () => 'Enabled' },
  'ecc.mode.pending': { header: 'ecc.mode.pending', value: () => 'Enabled' },
  'ecc.errors.uncorrected.volatile.total': { header: 'ecc.errors.uncorrected.volatile.total', value: () => 0 },
  'ecc.errors.corrected.volatile.total': { header: 'ecc.errors.corrected.volatile.total', value: () => 0 },
  compute_mode: { header: 'compute_mode', value: () => 'Default' },
  'mig.mode.current': { header: 'mig.mode.current', value: () => null },
  display_active: { header: 'display_active', value: () => 'Disabled' },
  // NVML's bits: 0x1 GpuIdle, 0x4 SwPowerCap (a board held at its power limit under load).
  'clocks_event_reasons.active': {
    header: 'clocks_event_reasons.active',
    value: (c) =>
      c.s.pstate === 'P8'
        ? '0x0000000000000001'
        : c.s.powerW >= c.s.powerCapW * 0.97
          ? '0x0000000000000004'
          : '0x0000000000000000',
  },
};
const ALIASES: Record<string, string> = {
  gpu_name: 'name',
  gpu_uuid: 'uuid',
  gpu_serial: 'serial',
  gpu_bus_id: 'pci.bus_id',
  'clocks.sm': 'clocks.current.sm',
  'clocks.gr': 'clocks.current.graphics',
  'clocks.mem': 'clocks.current.memory',
  'clocks.applications.graphics': 'clocks.current.graphics',
  'clocks_throttle_reasons.active': 'clocks_event_reasons.active',
};

function cell(f: Field, v: string | number | null, nounits: boolean): string {
  if (v === null) return '[N/A]';
  return f.unit && !nounits ? `${v} ${f.unit}` : String(v);
}

interface Format {
  header: boolean;
  units: boolean;
}

function parseFormat(spec: string | undefined): Format | string {
  const parts = (spec ?? '').split(',').map((x) => x.trim());
  if (!parts.includes('csv')) return `"${spec ?? ''}" is not a valid format.`;
  return { header: !parts.includes('noheader'), units: !parts.includes('nounits') };
}

function selectGpus(m: Machine, id: string | undefined): Gpu[] | string {
  const all = [...m.gpus].sort((a, b) => a.index - b.index);
  if (id === undefined) return all;
  const picked: Gpu[] = [];
  for (const want of id.split(',')) {
    const g = all.find(
      (x) =>
        String(x.index) === want ||
        x.uuid === want ||
        busId(x.pci) === want.toUpperCase() ||
        x.pci === want.toLowerCase(),
    );
    if (!g) return `No devices were found`;
    picked.push(g);
  }
  return picked;
}

function queryGpu(m: Machine, gpus: Gpu[], fields: string, format: Format, now: number): ExecResult {
  const names = fields
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const defs: Field[] = [];
  for (const n of names) {
    const def = FIELDS[ALIASES[n] ?? n];
    if (!def) return fail(2, '', `Field "${n}" is not a valid field to query.\n\n`);
    defs.push(def);
  }
  const lines: string[] = [];
  if (format.header) lines.push(defs.map((d) => (d.unit ? `${d.header} [${d.unit}]` : d.header)).join(', '));
  for (const g of gpus) {
    const c = { m, g, s: gpuSample(m, g, now), now };
    lines.push(defs.map((d) => cell(d, d.value(c), !format.units)).join(', '));
  }
  return ok(`${lines.join('\n')}\n`);
}

const APP_FIELDS: Record<
  string,
  {
    header: string;
    unit?: string;
    value: (m: Machine, g: Gpu, w: { pid: number; name: string; memMiB: number }, now: number) => string | number;
  }
> = {
  timestamp: { header: 'timestamp', value: (_m, _g, _w, now) => csvTime(now) },
  gpu_name: { header: 'gpu_name', value: (_m, g) => g.name },
  gpu_bus_id: { header: 'gpu_bus_id', value: (_m, g) => busId(g.pci) },
  gpu_serial: { header: 'gpu_serial', value: (_m, g) => g.serial },
  gpu_uuid: { header: 'gpu_uuid', value: (_m, g) => g.uuid },
  pid: { header: 'pid', value: (_m, _g, w) => w.pid },
  process_name: { header: 'process_name', value: (_m, _g, w) => w.name },
  name: { header: 'process_name', value: (_m, _g, w) => w.name },
  used_gpu_memory: { header: 'used_gpu_memory', unit: 'MiB', value: (_m, _g, w) => w.memMiB },
  used_memory: { header: 'used_gpu_memory', unit: 'MiB', value: (_m, _g, w) => w.memMiB },
};

function queryApps(m: Machine, gpus: Gpu[], fields: string, format: Format, now: number): ExecResult {
  const names = fields
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const defs = [];
  for (const n of names) {
    const d = APP_FIELDS[n];
    if (!d) return fail(2, '', `Field "${n}" is not a valid field to query.\n\n`);
    defs.push(d);
  }
  const lines: string[] = [];
  if (format.header) lines.push(defs.map((d) => (d.unit ? `${d.header} [${d.unit}]` : d.header)).join(', '));
  for (const g of gpus) {
    for (const w of workOn(m, g.index))
      lines.push(
        defs
          .map((d) => {
            const v = d.value(m, g, w, now);
            return d.unit && format.units ? `${v} ${d.unit}` : String(v);
          })
          .join(', '),
      );
  }
  return ok(lines.length > 0 ? `${lines.join('\n')}\n` : '');
}

const SEP = '+-----------------------------------------+------------------------+----------------------+';
const WIDE = '+-----------------------------------------------------------------------------------------+';

/** The default table (R580 layout, 89 columns inside the frame). */
export function renderTable(m: Machine, gpus: Gpu[], now: number): string {
  const l = runtime(m).loaded!;
  const cuda = cudaOf(l.version);
  const out: string[] = [`${asctime(now)}       `, WIDE];
  out.push(
    `| NVIDIA-SMI ${l.version.padEnd(23)}Driver Version: ${l.version.padEnd(15)}CUDA Version: ${cuda.padEnd(9)}|`,
  );
  out.push(SEP);
  out.push('| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |');
  out.push('| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |');
  out.push('|                                         |                        |               MIG M. |');
  out.push('|=========================================+========================+======================|');
  const pm = runtime(m).persistence ? 'On' : 'Off';
  for (const g of gpus) {
    const s = gpuSample(m, g, now);
    out.push(
      `|${String(g.index).padStart(4)}  ${g.name.padEnd(31)}${pm.padEnd(3)} |   ${busId(g.pci)} Off |${'0'.padStart(21)} |`,
    );
    const left = ` N/A   ${`${s.tempC}C`.padEnd(3)}    ${s.pstate}`;
    const power = `${Math.round(s.powerW)}W / ${String(s.powerCapW).padStart(4)}W `;
    out.push(
      `|${left}${power.padStart(41 - left.length)}|${`${s.memUsedMiB}MiB`.padStart(11)} / ${String(s.memTotalMiB).padStart(6)}MiB |${`${s.utilPct}%`.padStart(8)}${'Default'.padStart(13)} |`,
    );
    out.push(`|                                         |                        |${'N/A'.padStart(21)} |`);
    out.push(SEP);
  }
  out.push('', WIDE);
  out.push('| Processes:                                                                              |');
  out.push('|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |');
  out.push('|        ID   ID                                                               Usage      |');
  out.push('|=========================================================================================|');
  const rows = gpus.flatMap((g) => workOn(m, g.index).map((w) => ({ g, w })));
  if (rows.length === 0)
    out.push('|  No running processes found                                                             |');
  for (const { g, w } of rows) {
    const mem = `${w.memMiB}MiB`;
    const room = 46 - mem.length - 1;
    const name = w.name.length > room ? `...${w.name.slice(-(room - 3))}` : w.name;
    out.push(
      `|${String(g.index).padStart(5)}   N/A  N/A${String(w.pid).padStart(16)}${(w.type ?? 'C').padStart(7)}   ${name.padEnd(46 - mem.length)}${mem} |`,
    );
  }
  out.push(WIDE);
  return `${out.join('\n')}\n`;
}

function persistenceMode(m: Machine, gpus: Gpu[], on: boolean, root: boolean): ExecResult {
  if (!root)
    return fail(
      4,
      '',
      gpus.map((g) => `Unable to set persistence mode for GPU ${busId(g.pci)}: Insufficient Permissions\n`).join('') +
        'Terminating early due to previous errors.\n',
    );
  const rt = runtime(m);
  const word = on ? 'Enabled' : 'Disabled';
  const lines = gpus.map((g) =>
    rt.persistence === on
      ? `Persistence mode is already ${word} for GPU ${busId(g.pci)}.`
      : `${word} persistence mode for GPU ${busId(g.pci)}.`,
  );
  rt.persistence = on;
  m.revision++;
  return ok(`${lines.join('\n')}\nAll done.\n`);
}

function topo(m: Machine, args: string[]): ExecResult {
  const [flag, kind] = args;
  if (flag === '-m' || flag === '--matrix') return ok(renderTopoMatrix(m, false));
  if (flag === '-mp' || flag === '--matrix_pci') return ok(renderTopoMatrix(m, true));
  if (flag === '-p2p' || flag === '--p2pstatus') {
    if (!kind || !['r', 'w', 'n', 'a', 'p'].includes(kind))
      return fail(255, '', `ERROR: Option ${flag} is missing its value. Please run 'nvidia-smi topo -h' for help.\n\n`);
    return ok(renderP2p(m, kind));
  }
  return fail(255, '', `ERROR: Option ${flag ?? ''} is not recognized. Please run 'nvidia-smi topo -h' for help.\n\n`);
}

/** Interval of `-l [SEC]` / `-lms [MS]` when no number follows (the man page's default for `-l`). */
const DEFAULT_LOOP_MS = 5000;

/** What one invocation prints: a block at a given time (`first`: the header goes only there). */
type Block = (now: number, first: boolean) => ExecResult;

function run(args: string[], env: ToolEnv): ExecResult | Promise<ExecResult> {
  const { machine: m, root } = env;
  const now = m.clock.now();
  // These answer without talking to the driver.
  if (args[0] === '-h' || args[0] === '--help')
    return ok(`NVIDIA System Management Interface -- v${runtime(m).loaded?.version ?? '580.126.09'}\n`);
  const failure = smiFailure(m);
  if (failure) return { stdout: failure.text, stderr: '', exitCode: failure.exitCode };
  const l = runtime(m).loaded!;
  if (args[0] === 'topo') return topo(m, args.slice(1));
  if (args[0] === '--version') {
    return ok(
      `NVIDIA-SMI version  : ${l.version}\nNVML version        : ${l.version.split('.').slice(0, 2).join('.')}\nDRIVER version      : ${l.version}\nCUDA Version        : ${cudaOf(l.version)}\n`,
    );
  }
  let id: string | undefined;
  let query: string | undefined;
  let apps: string | undefined;
  let format: string | undefined;
  let pm: string | undefined;
  let list = false;
  let loopMs: number | undefined;
  const missing = (name: string): ExecResult =>
    fail(255, '', `ERROR: Option ${name} is missing its value. Please run 'nvidia-smi -h' for help.\n\n`);
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const [name, inline] =
      a.startsWith('--') && a.includes('=')
        ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
        : [a, undefined];
    const take = (): string | undefined => inline ?? args[++i];
    const need = (v: string | undefined): v is string => v !== undefined;
    // The loop interval is optional: a number after the option is its value, anything else is not.
    const interval = (scale: number): number | ExecResult => {
      const v = inline ?? (/^\d+$/.test(args[i + 1] ?? '') ? args[++i] : undefined);
      if (v === undefined) return DEFAULT_LOOP_MS;
      if (!/^\d+$/.test(v) || Number(v) === 0)
        return fail(
          255,
          '',
          `ERROR: Invalid value "${v}" for option ${name}. Please run 'nvidia-smi -h' for help.\n\n`,
        );
      return Number(v) * scale;
    };
    switch (name) {
      case '-L':
      case '--list-gpus':
        list = true;
        break;
      case '-i':
      case '--id': {
        const v = take();
        if (!need(v)) return missing(name);
        id = v;
        break;
      }
      case '--query-gpu': {
        const v = take();
        if (!need(v)) return missing(name);
        query = v;
        break;
      }
      case '--query-compute-apps': {
        const v = take();
        if (!need(v)) return missing(name);
        apps = v;
        break;
      }
      case '--format': {
        const v = take();
        if (!need(v)) return missing(name);
        format = v;
        break;
      }
      case '-pm':
      case '--persistence-mode': {
        const v = take();
        if (!need(v)) return missing(name);
        pm = v;
        break;
      }
      case '-l':
      case '--loop':
      case '-lms':
      case '--loop-ms': {
        const v = interval(name === '-l' || name === '--loop' ? 1000 : 1);
        if (typeof v !== 'number') return v;
        loopMs = v;
        break;
      }
      default:
        return fail(255, '', `ERROR: Option ${a} is not recognized. Please run 'nvidia-smi -h' for help.\n\n`);
    }
  }
  const gpus = selectGpus(m, id);
  if (typeof gpus === 'string') return fail(6, '', `${gpus}\n`);
  if (list) return ok(gpus.map((g) => `GPU ${g.index}: ${g.name} (UUID: ${g.uuid})\n`).join(''));
  if (pm !== undefined) {
    if (pm !== '0' && pm !== '1' && pm !== 'ENABLED' && pm !== 'DISABLED')
      return fail(255, '', `ERROR: Invalid value "${pm}" for option -pm. Please run 'nvidia-smi -h' for help.\n\n`);
    return persistenceMode(m, gpus, pm === '1' || pm === 'ENABLED', root);
  }
  let block: Block;
  if (query !== undefined || apps !== undefined) {
    const fmt = parseFormat(format);
    if (typeof fmt === 'string') return fail(2, '', `${fmt}\n\n`);
    block = (t, first) => {
      const f = { ...fmt, header: fmt.header && first };
      return query !== undefined ? queryGpu(m, gpus, query, f, t) : queryApps(m, gpus, apps as string, f, t);
    };
  } else block = (t) => ok(renderTable(m, gpus, t));
  if (loopMs === undefined) return block(now, true);
  const first = block(now, true);
  // A bad field fails before anything loops.
  if (first.exitCode !== 0) return first;
  return loop(env, loopMs, block, first, now);
}

/**
 * Loop mode: a block now and one every `intervalMs` until the client cancels (the real tool runs
 * until Ctrl+C). At a numeric lab speed the interval is modelled time, so the timestamps step by it.
 * At 'max' the modelled clock only moves by jumps, and a poller that never ends would drive it ahead
 * as fast as its reader drains the stream (every other command's timers with it); there the loop
 * waits real time as the shell's `sleep` does, and the clock follows what really passed.
 *
 * Each block is due one interval after the one before (the first at `firstAt`, when it was sampled)
 * and is stamped and sampled at that due time. Waking a little late is the simulator's load, not the
 * modelled machine's: at lab speed 20 a timer that fires 3 ms late, or a write that waits 3 ms for the
 * SSH window, is 60 ms of modelled time, and measuring the wait from the wake-up would let that drift
 * pile up block after block (CI saw blocks 1,058 ms apart). A loop more than one interval behind (a reader that stopped draining) starts its
 * cadence again from now rather than printing the blocks it missed.
 */
async function loop(
  env: ToolEnv,
  intervalMs: number,
  block: Block,
  first: ExecResult,
  firstAt: number,
): Promise<ExecResult> {
  const m = env.machine;
  const io = toolIo(env.ctx, m.clock);
  let due = firstAt;
  let next = first;
  for (;;) {
    await io.out(next.stdout);
    due += intervalMs;
    const ended =
      m.clock.speed === 'max'
        ? !(await m.clock.sleep(intervalMs, io.signal, true))
        : !(await io.sleep(Math.max(0, due - m.clock.now())));
    if (ended) return io.result(130);
    const now = m.clock.now();
    if (now - due >= intervalMs) due = now;
    next = block(due, false);
  }
}

export const nvidiaSmi: Tool = {
  name: 'nvidia-smi',
  path: '/usr/bin/nvidia-smi',
  packages: ['535', '535-server', '570', '570-server', '580', '580-server'].map((b) => `nvidia-utils-${b}`),
  run,
};
