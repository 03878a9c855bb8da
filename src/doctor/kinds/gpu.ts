/**
 * doctor kinds for the GPU, NCCL, Ray, vLLM and DCGM outputs (DOCTOR.md "Kinds"), and the output rules that
 * read them (RULES.md §3: D01–D07, D13, D15–D18, D20–D24).
 *
 * Detection scores structure only: headers and line shapes the tools always print. Every detector is a handful
 * of linear regexes or substring counts over the text head; parsers are single passes. Scores are tiered so a
 * file holding several outputs picks the primary one: nccl-tests (0.95) over the NCCL INFO lines interleaved in
 * it (0.9); a vLLM log (0.95) over its NCCL lines; an NCCL log (0.9) over a torch watchdog excerpt (0.85).
 *
 * Torch `Watchdog caught collective operation timeout` logs are their own kind, `torch-nccl-watchdog` (they
 * seldom hold an NCCL INFO line); NCCL and vLLM logs report D07 for the same lines themselves. `nvidia-smi -L`
 * and `nvidia-smi --version` are small extra kinds (`nvidia-smi-list`, `nvidia-smi-version`).
 */
import { parseDcgmiDiag, type DcgmiDiagFacts } from '../../parse/dcgmi-diag.js';
import { parseDcgmiDiscovery, type DcgmiDiscoveryFacts } from '../../parse/dcgmi-discovery.js';
import { countIncludes, logLines } from '../../parse/log-lines.js';
import { CONFIG_REJECTED, parseNcclLog, scanNcclLog, type NcclLogFacts } from '../../parse/nccl-log.js';
import { parseNcclTests, type NcclTestsFacts } from '../../parse/nccl-tests.js';
import { parseNvcc, type NvccFacts } from '../../parse/nvcc.js';
import { parseNvidiaDriverVersion, type NvidiaDriverVersionFacts } from '../../parse/nvidia-driver-version.js';
import { parseNvidiaSmiCsv, type NvidiaSmiCsvFacts } from '../../parse/nvidia-smi-csv.js';
import { parseNvidiaSmiDmon, type NvidiaSmiDmonFacts } from '../../parse/nvidia-smi-dmon.js';
import { parseNvidiaSmiList, parseNvidiaSmiVersion, type NvidiaSmiListFacts, type NvidiaSmiVersionFacts } from '../../parse/nvidia-smi-misc.js';
import { parseNvidiaSmiQ, scanNvidiaSmiQ, type NvidiaSmiQFacts } from '../../parse/nvidia-smi-q.js';
import { parseNvidiaSmiTopo, type NvidiaSmiTopoFacts } from '../../parse/nvidia-smi-topo.js';
import { parseNvidiaSmi, scanNvidiaSmi, SMI_DRIVER_ERROR, type NvidiaSmiFacts } from '../../parse/nvidia-smi.js';
import { parseRayStart, type RayStartFacts } from '../../parse/ray-start.js';
import { scanRayStatus, type RayStatusFacts } from '../../parse/ray-status.js';
import { parseTorchWatchdog, type TorchWatchdogFacts } from '../../parse/torch-nccl-watchdog.js';
import { parseVllmBench, type VllmBenchFacts } from '../../parse/vllm-bench.js';
import { parseVllmLog, type VllmLogFacts } from '../../parse/vllm-log.js';
import { d01NcclSocket } from '../../rules/output/d01-nccl-socket.js';
import { d02GdrDisabled } from '../../rules/output/d02-gdr-disabled.js';
import { d03NcclConfigRejected } from '../../rules/output/d03-nccl-config-rejected.js';
import { d04CompletionError } from '../../rules/output/d04-completion-error.js';
import { d05ModifyQp } from '../../rules/output/d05-modify-qp.js';
import { d06BootstrapNoInterface } from '../../rules/output/d06-bootstrap-no-interface.js';
import { d07CollectiveTimeout } from '../../rules/output/d07-collective-timeout.js';
import { d13NvidiaDriver, type D13Hit } from '../../rules/output/d13-nvidia-driver.js';
import { d15NcclTestsWrong } from '../../rules/output/d15-nccl-tests-wrong.js';
import { d16VllmLaunch } from '../../rules/output/d16-vllm-launch.js';
import { d17NcclUnhandled } from '../../rules/output/d17-nccl-unhandled.js';
import { d18DcgmDiagFail } from '../../rules/output/d18-dcgm-diag-fail.js';
import { d20Bandwidth } from '../../rules/output/d20-bandwidth.js';
import { d21GpuErrors, type D21Hit } from '../../rules/output/d21-gpu-errors.js';
import { d22NetPlugin } from '../../rules/output/d22-net-plugin.js';
import { d23MigEnabled, type D23Hit } from '../../rules/output/d23-mig-enabled.js';
import { d24RayClusterSmall } from '../../rules/output/d24-ray-cluster-small.js';
import type { Finding } from '../../rules/types.js';
import type { KindDef } from '../types.js';

const HEAD = 256 * 1024;
const head = (t: string, n = HEAD): string => (t.length > n ? t.slice(0, n) : t);
const defined = (xs: Array<Finding | undefined>): Finding[] => xs.filter((x): x is Finding => x !== undefined);
const fmt = (n: number | undefined, unit = ''): string => (n === undefined ? '?' : `${Math.round(n * 100) / 100}${unit}`);

/** Cheap gate before any regex: does the text hold one of these literal strings? */
const hasAny = (t: string, ...needles: string[]): boolean => needles.some((n) => t.includes(n));

/** The first `n` lines of `text`, without splitting the rest. */
function firstLines(text: string, n: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (out.length < n && at <= text.length) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    out.push(text.slice(at, Math.min(end, at + 4096)));
    if (nl < 0) break;
    at = nl + 1;
  }
  return out;
}

/** 0-based index of the first non-empty line matching `re` among the first `max` non-empty lines, or -1. */
function lineIndexOf(text: string, re: RegExp, max = 40): number {
  let k = 0;
  for (const l of firstLines(text, 400)) {
    if (l.trim() === '') continue;
    if (re.test(l)) return k;
    if (++k >= max) break;
  }
  return -1;
}

// ---------------------------------------------------------------- NCCL log (also used by other kinds)

/** The NCCL-log rules over a text (nccl-log kind, and NCCL lines embedded in vLLM logs and nccl-tests). */
export function ncclLogFindings(text: string, opts: { socket?: boolean } = {}): Finding[] {
  const scan = scanNcclLog(text);
  const d01 = opts.socket === false ? undefined : d01NcclSocket(scan);
  const d04 = d04CompletionError(scan.completion);
  const d05 = d05ModifyQp(scan.modifyQp);
  const d06 = d06BootstrapNoInterface(scan.noSocketInterface, scan.facts.env);
  const related = [d01, d04, d05, d06].filter((x): x is Finding => x !== undefined).map((f) => f.rule);
  const d07 = d07CollectiveTimeout(scan.watchdog, [d04, d05, ...(scan.unhandled.length > 0 ? ['D17'] : [])].filter((x) => x !== undefined).map((x) => (typeof x === 'string' ? x : x.rule)));
  return defined([
    d01,
    d02GdrDisabled(scan),
    d03NcclConfigRejected(scan.configRejected, scan.algoEnv),
    d04,
    d05,
    d06,
    d07,
    d17NcclUnhandled(scan.unhandled, related, scan.facts.errors),
    d22NetPlugin(scan),
  ]);
}

const ncclLog: KindDef<NcclLogFacts> = {
  kind: 'nccl-log',
  detect(text) {
    const t = head(text);
    const n = countIncludes(t, 'NCCL INFO', 50) + countIncludes(t, 'NCCL WARN', 50);
    if (n >= 3) return 0.9;
    if (n === 2) return 0.8;
    if (n === 1) return 0.6;
    if (t.includes('NCCL version') && /^NCCL version \d+\.\d+\.\d+/m.test(t)) return 0.55;
    // A lone NCCL error message pasted without its prefix.
    const h = head(t, 16 * 1024);
    if (!hasAny(h, 'ibv_modify_qp', 'Got completion', 'socket interface', 'nrecognized', 'ntries except', 'lgorithm/protocol', 'nvalid usage')) return 0;
    return CONFIG_REJECTED.test(h) || /Call to ibv_modify_qp failed|Got completion from peer \S+ with (?:error|status)|Bootstrap\s*:\s*no socket interface found/.test(h) ? 0.55 : 0;
  },
  parse: parseNcclLog,
  findings: (_facts, text) => ncclLogFindings(text),
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.ncclVersion) rows.push(['NCCL', f.ncclBuild ?? f.ncclVersion]);
    if (f.network) rows.push(['network', f.network]);
    rows.push(['HCAs', f.hcas.length > 0 ? f.hcas.join(' ') : 'none']);
    if (f.gdr !== undefined) rows.push(['GPUDirect RDMA', f.gdr ? 'used' : 'disabled']);
    if (f.nNodes !== undefined || f.nRanks !== undefined) rows.push(['nodes / ranks', `${f.nNodes ?? '?'} / ${f.nRanks ?? '?'}`]);
    const ch = Object.entries(f.channels);
    if (ch.length > 0) rows.push(['channels', ch.map(([k, v]) => `${k} ${v}`).join(', ')]);
    rows.push(['WARN lines', String(f.warnCount)]);
    return rows;
  },
};

// ---------------------------------------------------------------- nccl-tests

const ROW = /^\s*\d+\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64|f8e4m3|f8e5m2|fp8_e4m3|fp8_e5m2|int|char)\s+\S/m;

const ncclTests: KindDef<NcclTestsFacts> = {
  kind: 'nccl-tests',
  detect(text) {
    const t = head(text, 1024 * 1024);
    if (!hasAny(t, 'busbw', 'nThread', 'Collective test', 'Avg bus bandwidth')) return 0;
    const header = /^#\s*nThread \d+ nGpus \d+/m.test(t) || /^#\s+size\s+count\s+type\b/m.test(t) || /^#\s*Collective test starting:/m.test(t);
    const rows = ROW.test(t);
    if (header && rows) return 0.95;
    if (header || (rows && /^#\s*(?:Avg bus bandwidth|Out of bounds values)\s*:/m.test(t))) return 0.85;
    return rows && countIncludes(t, 'GB/s', 3) === 0 && /\btime\b.*\balgbw\b.*\bbusbw\b/.test(t) ? 0.7 : 0;
  },
  parse: parseNcclTests,
  findings(f, text) {
    const lines = logLines(text);
    const oobIdx = lines.findIndex((l) => /^#\s*Out of bounds values\s*:/.test(l));
    const footer = oobIdx >= 0 ? { line: oobIdx + 1, text: (lines[oobIdx] ?? '').trim() } : undefined;
    const out: Array<Finding | undefined> = [d15NcclTestsWrong(f, footer)];
    const largest = f.rows.reduce<NcclTestsFacts['rows'][number] | undefined>((m, r) => (m === undefined || r.bytes >= m.bytes ? r : m), undefined);
    const isAllReduce = f.test !== undefined && /^all_reduce/.test(f.test);
    const interNode = f.hosts.length >= 2 ? true : f.hosts.length === 1 ? false : undefined;
    const l20 = f.ranks.length === 8 && f.ranks.every((r) => /\bL20\b/.test(r.name ?? ''));
    if (largest && isAllReduce && f.maxBusbw !== undefined && (interNode === true || (interNode === false && l20))) {
      // Inter-node needs the aggregate RDMA line rate: doctor has none from an nccl-tests output alone, so d20
      // stays silent there (RULES.md: it fires only when the link speed is known).
      out.push(
        d20Bandwidth({
          kind: 'nccl-tests',
          busbwGBps: f.maxBusbw,
          bytes: largest.bytes,
          interNode,
          evidence: `line ${largest.line}: ${(lines[largest.line - 1] ?? '').trim()}`,
          line: largest.line,
        }),
      );
    }
    // NCCL INFO lines interleaved with the table are an NCCL log too.
    if (/NCCL (?:INFO|WARN)/.test(text)) out.push(...ncclLogFindings(text));
    return defined(out);
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.test) rows.push(['test', f.test]);
    rows.push(['rows', String(f.rows.length)]);
    const last = f.rows[f.rows.length - 1];
    if (last) rows.push(['largest size', `${last.bytes} B: busbw ${fmt(last.busbwOut ?? undefined)} / ${fmt(last.busbwIn ?? undefined)} GB/s (out / in)`]);
    if (f.avgBusbw !== undefined) rows.push(['avg busbw', `${f.avgBusbw} GB/s`]);
    if (f.hosts.length > 0) rows.push(['hosts', `${f.hosts.length} (${f.ranks.length} ranks)`]);
    if (f.outOfBounds !== undefined) rows.push(['out of bounds', `${f.outOfBounds} ${f.outOfBoundsStatus ?? ''}`.trim()]);
    if (f.validated === false) rows.push(['validation', 'not validated (#wrong N/A or validation: 0)']);
    return rows;
  },
};

// ---------------------------------------------------------------- torch watchdog

const torchWatchdog: KindDef<TorchWatchdogFacts> = {
  kind: 'torch-nccl-watchdog',
  detect(text) {
    const t = head(text);
    if (!hasAny(t, 'atchdog', 'WorkNCCL')) return 0;
    if (/Watchdog caught collective operation timeout|Exception \(either an error or timeout\) detected by watchdog/i.test(t)) return 0.85;
    return /ProcessGroupNCCL/.test(t) && /WorkNCCL\(/.test(t) ? 0.75 : 0;
  },
  parse: parseTorchWatchdog,
  findings(_f, text) {
    const scan = scanNcclLog(text);
    return defined([d07CollectiveTimeout(scan.watchdog, scan.unhandled.length > 0 ? ['D17'] : []), d17NcclUnhandled(scan.unhandled, [], scan.facts.errors)]);
  },
  summary(f) {
    return [
      ['timeouts', String(f.timeouts.length)],
      ['ranks', f.ranks.length > 0 ? f.ranks.join(', ') : '?'],
      ['operations', f.opTypes.join(', ') || '?'],
      ['timeout', f.timeoutMs !== undefined ? `${f.timeoutMs} ms` : '?'],
    ];
  },
};

// ---------------------------------------------------------------- nvidia-smi

function smiDriverHits(text: string): D13Hit[] {
  const hits: D13Hit[] = [];
  const lines = logLines(head(text, 64 * 1024));
  for (let i = 0; i < lines.length && hits.length < 5; i++) {
    const l = (lines[i] ?? '').trim();
    if (SMI_DRIVER_ERROR.test(l)) hits.push({ line: i + 1, text: l });
  }
  return hits;
}

const nvidiaSmi: KindDef<NvidiaSmiFacts> = {
  kind: 'nvidia-smi',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (t.includes('NVIDIA-SMI') && /NVIDIA-SMI \d+\.\d+/.test(t) && /(?:Driver|KMD) Version:/.test(t)) return 0.95;
    if (t.includes('MiB') && /^\|\s*(?:\d+%|N\/A|ERR!)\s+(?:\d+C|N\/A|ERR!)\s+P\d+\s/m.test(t) && /MiB\s*\/\s*\d+MiB/.test(t)) return 0.75;
    if (/^\|\s+\d+\s+(?:N\/A|\d+)\s+(?:N\/A|\d+)\s+\d+\s+[CGM]\S{0,2}\s+\S.*\d+MiB\s*\|$/m.test(t)) return 0.6;
    if (!hasAny(t, 'NVIDIA-SMI has failed', 'NVML', 'No devices were found', 'No NVIDIA graphics', 'version mismatch', 'device handle', 'fallen off the bus')) return 0;
    return SMI_DRIVER_ERROR.test(t) || /Unable to determine the device handle for GPU|GPU has fallen off the bus/.test(t) ? 0.6 : 0;
  },
  parse: parseNvidiaSmi,
  findings(_f, text) {
    const s = scanNvidiaSmi(text);
    const d21: D21Hit[] = [
      ...s.gpuLost.map((h) => ({ line: h.line, text: h.text })),
      ...s.eccRows.map((h) => ({ line: h.line, text: `${h.text}  (Volatile Uncorr. ECC ${h.count})` })),
      ...s.errRows.map((h) => ({ line: h.line, text: `${h.text}  (ERR! in ${h.fields.join(', ')})`, fanOnly: h.fields.every((x) => x === 'fan') })),
    ].sort((a, b) => a.line - b.line);
    const d23: D23Hit[] = s.mig.map((h) => ({ line: h.line, text: h.text }));
    const migGpus = s.facts.gpus.filter((g) => g.migMode === 'Enabled').map((g) => g.index);
    if (d23.length > 0 && migGpus.length > 0 && d23[0]) d23[0].gpu = migGpus.join(', ');
    return defined([d13NvidiaDriver(s.driverErrors), d21GpuErrors(d21), d23MigEnabled(d23)]);
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.driverVersion) rows.push(['driver', f.driverVersion]);
    if (f.cudaVersion) rows.push(['CUDA (driver)', f.cudaVersion]);
    const names = [...new Set(f.gpus.map((g) => g.name).filter((n) => n))];
    rows.push(['GPUs', `${f.gpus.length}${names.length > 0 ? ` × ${names.join(', ')}` : ''}`]);
    const busy = f.gpus.filter((g) => (g.utilPct ?? 0) > 0).length;
    if (f.gpus.length > 0) rows.push(['busy GPUs', String(busy)]);
    rows.push(['processes', String(f.processes.length)]);
    if (f.errors.length > 0) rows.push(['error', f.errors[0] ?? '']);
    return rows;
  },
};

// ---------------------------------------------------------------- nvidia-smi --query-gpu / --query-compute-apps

const CSV_HEADER = /^\s*[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?(?:\s*,\s*[a-z_][a-z0-9_.]*(?: \[[^\]]+\])?)+\s*$/;
const KNOWN_FIELD = /(?:^|,\s*)(?:index|name|uuid|gpu_uuid|gpu_name|gpu_bus_id|pci\.bus_id|pid|process_name|used_gpu_memory|timestamp|driver_version|[a-z_]+\.[a-z_.]+)(?: \[[^\]]+\])?\s*(?:,|$)/;

const nvidiaSmiCsv: KindDef<NvidiaSmiCsvFacts> = {
  kind: 'nvidia-smi-csv',
  detect(text) {
    const lines = firstLines(text, 60).map((l) => l.trim()).filter((l) => l !== '');
    const hi = lines.findIndex((l) => CSV_HEADER.test(l) && KNOWN_FIELD.test(l));
    if (hi >= 0) {
      const width = (lines[hi] ?? '').split(',').length;
      const data = lines.slice(hi + 1).filter((l) => l.split(',').length === width).length;
      return data > 0 ? 0.9 : 0.6;
    }
    const rows = lines.filter((l) => (l.match(/,/g)?.length ?? 0) >= 2);
    if (rows.length === 0) return 0;
    const width = (rows[0] ?? '').split(',').length;
    const uniform = rows.filter((l) => l.split(',').length === width).length >= Math.max(1, rows.length - 1);
    const smiish = rows.some((l) => /GPU-[0-9a-f]{8}-|[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.\d|\bNVIDIA\b|\[N\/A\]|^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d{3},/i.test(l));
    return uniform && smiish ? 0.6 : 0;
  },
  parse: (text) => parseNvidiaSmiCsv(text),
  findings(f, text) {
    const d13 = f.driverLoaded === false || f.nvmlError !== undefined || f.noDevices ? d13NvidiaDriver(smiDriverHits(text)) : undefined;
    const d21: D21Hit[] = [];
    const d23: D23Hit[] = [];
    f.rows.forEach((r, k) => {
      const gpu = r.index ?? k;
      for (const [c, v] of Object.entries(r)) {
        if (/^ecc\.errors\.uncorrected\.volatile\./.test(c) && typeof v === 'number' && v > 0) d21.push({ text: `GPU ${gpu}: ${c} = ${v}` });
        if (c === 'mig.mode.current' && typeof v === 'string' && /^enabled$/i.test(v)) d23.push({ text: `GPU ${gpu}: mig.mode.current = ${v}`, gpu: typeof gpu === 'number' || typeof gpu === 'string' ? gpu : undefined });
      }
    });
    return defined([d13, d21GpuErrors(d21), d23MigEnabled(d23)]);
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.query) rows.push(['query', f.query === 'gpu' ? '--query-gpu' : '--query-compute-apps']);
    rows.push(['columns', f.columns.length > 0 ? f.columns.join(', ') : f.columnsUnknown ? 'unknown (no header)' : 'none']);
    rows.push(['rows', String(f.rows.length || f.values?.length || 0)]);
    if (f.nvmlError) rows.push(['NVML error', f.nvmlError]);
    if (f.driverLoaded === false) rows.push(['driver', 'not loaded']);
    return rows;
  },
};

// ---------------------------------------------------------------- nvidia-smi -q / -q -x

const nvidiaSmiQ: KindDef<NvidiaSmiQFacts> = {
  kind: 'nvidia-smi-q',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'NVSMI LOG', 'nvidia_smi_log', 'Attached GPUs', 'Product Name')) return 0;
    if (/=+\s*NVSMI LOG\s*=+/.test(t) || /<nvidia_smi_log>/.test(t)) return 0.95;
    if (/^Attached GPUs\s*:/m.test(t) && /^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:/m.test(t)) return 0.85;
    return /^\s+Product Name\s+:/m.test(t) && /^\s+(?:Bus Id|GPU UUID)\s+:/m.test(t) ? 0.7 : 0;
  },
  parse: parseNvidiaSmiQ,
  findings(f, text) {
    const s = scanNvidiaSmiQ(text);
    let lines: string[] | undefined;
    const where = (h: { line: number }): string => ((lines ??= logLines(text))[h.line - 1] ?? '').trim();
    const d21 = s.hits.filter((h) => h.rule === 'D21').map((h) => ({ line: h.line, text: `GPU ${h.gpu}: ${h.field}: ${h.value}${f.format === 'xml' ? `  (${where(h)})` : ''}` }));
    const d23 = s.hits.filter((h) => h.rule === 'D23').map((h) => ({ line: h.line, text: `GPU ${h.gpu}: MIG Mode Current: ${h.value}`, gpu: h.gpu }));
    const d13 = f.errors.some((e) => SMI_DRIVER_ERROR.test(e)) ? d13NvidiaDriver(smiDriverHits(text)) : undefined;
    return defined([d13, d21GpuErrors(d21), d23MigEnabled(d23)]);
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.driverVersion) rows.push(['driver', f.driverVersion]);
    if (f.cudaVersion) rows.push(['CUDA (driver)', f.cudaVersion]);
    const names = [...new Set(f.gpus.map((g) => g.name).filter((n) => n))];
    rows.push(['GPUs', `${f.gpus.length}${names.length > 0 ? ` × ${names.join(', ')}` : ''}`]);
    const ecc = f.gpus.map((g) => g.eccMode?.current).filter((x) => x);
    if (ecc.length > 0) rows.push(['ECC', [...new Set(ecc)].join(', ')]);
    const mig = f.gpus.map((g) => g.migMode?.current).filter((x) => x);
    if (mig.length > 0) rows.push(['MIG', [...new Set(mig)].join(', ')]);
    rows.push(['format', f.format]);
    return rows;
  },
};

// ---------------------------------------------------------------- dmon / pmon

const nvidiaSmiDmon: KindDef<NvidiaSmiDmonFacts> = {
  kind: 'nvidia-smi-dmon',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!t.includes('gpu')) return 0;
    if (/^#\s*(?:Date\s+Time\s+)?gpu\s+\S/m.test(t) && /^#\s*(?:\S+\s+\S+\s+)?Idx\b/m.test(t)) return 0.95;
    return /^#\s*gpu\s+(?:pwr|sm|pid)\b/m.test(t) ? 0.8 : 0;
  },
  parse: parseNvidiaSmiDmon,
  findings: () => [],
  summary(f) {
    return [
      ['mode', f.mode ?? '?'],
      ['columns', f.columns.join(' ')],
      ['samples', String(f.rows.length)],
      ['GPUs', f.gpus.join(', ') || '?'],
    ];
  },
};

// ---------------------------------------------------------------- small tools

const nvcc: KindDef<NvccFacts> = {
  kind: 'nvcc',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Cuda compil', 'nvcc')) return 0;
    const a = /Cuda compilation tools,\s*release \d+\.\d+/.test(t);
    const b = /nvcc: NVIDIA \(R\) Cuda compiler driver/.test(t);
    return a && b ? 0.8 : a || b ? 0.7 : 0;
  },
  parse: parseNvcc,
  findings: () => [],
  summary: (f) => [['CUDA toolkit', f.cudaVersion ?? '?'], ...(f.cudaBuildVersion ? ([['build', f.cudaBuildVersion]] as Array<[string, string]>) : [])],
};

const nvidiaDriverVersion: KindDef<NvidiaDriverVersionFacts> = {
  kind: 'nvidia-driver-version',
  detect: (text) => {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'NVRM version', '/proc/driver/nvidia/version')) return 0;
    return /NVRM version:\s*NVIDIA\b/.test(t) ? 0.95 : /\/proc\/driver\/nvidia\/version: No such file/.test(t) ? 0.7 : 0;
  },
  parse: parseNvidiaDriverVersion,
  findings: () => [],
  summary(f) {
    if (f.present === false) return [['driver', 'not loaded (/proc/driver/nvidia/version missing)']];
    return [
      ['driver', f.version ?? '?'],
      ['kernel module', f.openKernelModule === undefined ? '?' : f.openKernelModule ? 'open (DMA-BUF capable)' : 'proprietary'],
      ...(f.gccVersion ? ([['GCC', f.gccVersion]] as Array<[string, string]>) : []),
    ];
  },
};

const nvidiaSmiTopo: KindDef<NvidiaSmiTopoFacts> = {
  kind: 'nvidia-smi-topo',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'GPU0', 'X ', 'NIC')) return 0;
    const at = lineIndexOf(t, /\bGPU0\b.*(?:CPU Affinity|\bGPU1\b|\bNIC0\b|\bmlx5_\d)/);
    // Another output above the matrix (`lsmod | grep nvidia` then `topo -m`) is the primary one.
    if (at >= 0) return at <= 2 ? 0.95 : 0.7;
    if (/^\s*X\s*=\s*Self\b/m.test(t) && /^\s*GPU\d+\s+X\b/m.test(t)) return 0.8;
    // A fragment: matrix rows only (`NIC30  SYS  SYS  NODE  PIX …`).
    return /^\s*(?:GPU|NIC)\d+(?:\s+(?:X|SYS|NODE|PHB|PXB|PIX|NV\d+)){3}/m.test(t) ? 0.7 : 0;
  },
  parse: parseNvidiaSmiTopo,
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [
      ['GPUs', String(f.gpus.length)],
      ['NICs', f.nics.length > 0 ? f.nics.map((n) => f.nicNames[n] ?? n).join(' ') : 'none'],
    ];
    for (const g of f.gpus.slice(0, 16)) {
      const near = f.nics.filter((n) => /^(?:PIX|PXB)$/.test(f.links[g]?.[n] ?? ''));
      if (f.nics.length > 0) rows.push([g, near.length > 0 ? `GDR-close NIC: ${near.map((n) => f.nicNames[n] ?? n).join(', ')}` : 'no NIC at PIX/PXB']);
    }
    return rows;
  },
};

const nvidiaSmiList: KindDef<NvidiaSmiListFacts> = {
  kind: 'nvidia-smi-list',
  detect: (text) => (text.includes('(UUID: GPU-') && /^GPU \d+: .+ \(UUID: GPU-[0-9a-fA-F-]+\)/m.test(head(text, 64 * 1024)) ? 0.8 : 0),
  parse: parseNvidiaSmiList,
  findings: () => [],
  summary: (f) => [['GPUs', `${f.gpus.length}${f.gpus[0]?.name ? ` × ${[...new Set(f.gpus.map((g) => g.name))].join(', ')}` : ''}`]],
};

const nvidiaSmiVersion: KindDef<NvidiaSmiVersionFacts> = {
  kind: 'nvidia-smi-version',
  detect: (text) => (text.includes('NVIDIA-SMI version') && /^NVIDIA-SMI version\s*:/m.test(head(text, 64 * 1024)) && /^DRIVER version\s*:/im.test(head(text, 64 * 1024)) ? 0.9 : 0),
  parse: parseNvidiaSmiVersion,
  findings: () => [],
  summary: (f) => [
    ['driver', f.driverVersion ?? '?'],
    ['CUDA (driver)', f.cudaVersion ?? '?'],
  ],
};

// ---------------------------------------------------------------- DCGM

const dcgmiDiag: KindDef<DcgmiDiagFacts> = {
  kind: 'dcgmi-diag',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!t.includes('iagnostic')) return 0;
    if (/\|\s*Diagnostic\s*\|\s*Result\s*\|/.test(t)) return 0.95;
    return /Successfully ran diagnostic for group/.test(t) ? 0.85 : 0;
  },
  parse: parseDcgmiDiag,
  findings: (f) => defined([d18DcgmDiagFail(f)]),
  summary(f) {
    const count = (r: string): number => f.results.filter((x) => x.result === r).length;
    const rows: Array<[string, string]> = [];
    if (f.dcgmVersion) rows.push(['DCGM', f.dcgmVersion]);
    if (f.driverVersion) rows.push(['driver', f.driverVersion]);
    rows.push(['tests', `${f.results.length}: ${count('Pass')} pass, ${count('Fail')} fail, ${count('Warn')} warn, ${count('Skip')} skip`]);
    const failed = f.results.filter((r) => r.result === 'Fail').map((r) => r.test);
    if (failed.length > 0) rows.push(['failed', failed.join(', ')]);
    const ran = f.results.filter((r) => r.section !== 'Deployment' && r.section !== 'Metadata');
    if (ran.length > 0 && ran.every((r) => r.result === 'Skip')) rows.push(['note', 'every test after Deployment was skipped: the diagnostic did not run']);
    return rows;
  },
};

const dcgmiDiscovery: KindDef<DcgmiDiscoveryFacts> = {
  kind: 'dcgmi-discovery',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Device Information', 'PCI Bus ID')) return 0;
    if (/\|\s*GPU ID\s*\|\s*Device Information\s*\|/.test(t)) return 0.95;
    return /^\s*\d+ GPUs? found\.?\s*$/m.test(t) && /PCI Bus ID:/.test(t) ? 0.8 : 0;
  },
  parse: parseDcgmiDiscovery,
  findings: () => [],
  summary: (f) => [
    ['GPUs', `${f.gpusFound ?? f.gpus.length}${f.gpus[0]?.name ? ` × ${[...new Set(f.gpus.map((g) => g.name))].join(', ')}` : ''}`],
    ...(f.nvSwitchesFound !== undefined ? ([['NvSwitches', String(f.nvSwitchesFound)]] as Array<[string, string]>) : []),
  ],
};

// ---------------------------------------------------------------- Ray

const rayStatus: KindDef<RayStatusFacts> = {
  kind: 'ray-status',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Autoscaler status', 'Node status', 'Active:', 'Healthy:')) return 0;
    if (/=+\s*Autoscaler status\b/.test(t)) return 0.95;
    if (/^Node status\s*$/m.test(t) && /^Resources\s*$/m.test(t)) return 0.85;
    return /^(?:Active|Healthy):\s*$/m.test(t) && /^\s*\d+(?:\.\d+)?\/\d+(?:\.\d+)? (?:CPU|GPU)\b/m.test(t) ? 0.75 : 0;
  },
  parse: (text) => scanRayStatus(text).facts,
  findings: (_f, text) => defined([d24RayClusterSmall(scanRayStatus(text))]),
  summary(f) {
    const rows: Array<[string, string]> = [];
    rows.push(['nodes', `${f.nodesActive ?? '?'} active${f.nodesIdle !== undefined ? `, ${f.nodesIdle} idle` : ''}`]);
    if (f.gpusTotal !== undefined) rows.push(['GPUs', `${f.gpusUsed ?? '?'}/${f.gpusTotal} used`]);
    if (f.cpusTotal !== undefined) rows.push(['CPUs', `${f.cpusUsed ?? '?'}/${f.cpusTotal} used`]);
    rows.push(['pending', f.pending.length > 0 ? f.pending.join('; ') : 'none']);
    rows.push(['recent failures', f.failures.length > 0 ? f.failures.join('; ') : 'none']);
    return rows;
  },
};

const rayStart: KindDef<RayStartFacts> = {
  kind: 'ray-start',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Ray runtime started', 'Local node IP')) return 0;
    const started = /^\s*Ray runtime started\.?\s*$/m.test(t);
    const ip = /^\s*Local node IP:\s*\S+/m.test(t);
    return started && ip ? 0.95 : started ? 0.85 : ip ? 0.6 : 0;
  },
  parse: parseRayStart,
  findings: () => [],
  summary: (f) => [
    ['role', f.head === undefined ? '?' : f.head ? 'head' : 'worker'],
    ['node IP', f.nodeIp ?? '?'],
    ...(f.address ? ([['address', f.address]] as Array<[string, string]>) : []),
    ...(f.errors.length > 0 ? ([['error', f.errors[0] ?? '']] as Array<[string, string]>) : []),
  ],
};

// ---------------------------------------------------------------- vLLM

const VLLM_MARKERS = [
  /vLLM API server version/,
  /LLM engine \(v\d/,
  /\(APIServer pid=\d+\)/,
  /\(EngineCore(?:_DP)?_?\d* pid=\d+\)/,
  /\(VllmWorker(?: TP\d+)? pid=\d+\)/,
  /RayWorkerWrapper pid=\d+/,
  /[/\\]vllm[/\\](?:worker|engine|entrypoints|executor|distributed|model_executor|v1)[/\\]/,
  /\b(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d [\d:]+ (?:\[)?[\w.]+\.py:\d+\]/,
  /vLLM is using nccl==/,
];

const vllmLog: KindDef<VllmLogFacts> = {
  kind: 'vllm-log',
  detect(text) {
    const t = head(text);
    if (!hasAny(t, 'vLLM', 'vllm', 'LLM engine', 'APIServer', 'EngineCore', 'VllmWorker', 'RayWorkerWrapper')) {
      // Only vLLM's logger prefix is left to recognise it by.
      return (VLLM_MARKERS[7] as RegExp).test(t) ? 0.65 : 0;
    }
    let n = 0;
    for (const re of VLLM_MARKERS) if (re.test(t)) n++;
    return n >= 2 ? 0.95 : n === 1 ? 0.65 : 0;
  },
  parse: parseVllmLog,
  // NCCL_DEBUG lines inside a vLLM log are an NCCL log too: every NCCL rule reads them (D17 points to the WARN).
  findings: (_f, text) => defined([...ncclLogFindings(text), d16VllmLaunch(logLines(text))]),
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.version) rows.push(['vLLM', f.version]);
    if (f.model) rows.push(['model', f.model]);
    rows.push(['TP × PP', `${f.tp ?? '?'} × ${f.pp ?? '?'}`]);
    if (f.executor) rows.push(['executor', f.executor]);
    if (f.ncclVersion) rows.push(['NCCL', f.ncclVersion]);
    if (f.workerIps) rows.push(['Ray worker IPs', f.workerIps.join(', ')]);
    rows.push(['errors', String(f.errors.length)]);
    if (f.apiUrl) rows.push(['serving', f.apiUrl]);
    return rows;
  },
};

const vllmBench: KindDef<VllmBenchFacts> = {
  kind: 'vllm-bench',
  detect(text) {
    const t = head(text, 256 * 1024);
    if (!hasAny(t, 'Benchmark Result', 'TTFT', 'throughput', 'Successful requests')) return 0;
    if (/=+\s*Serving Benchmark Result\s*=+/.test(t)) return 0.97;
    let n = 0;
    for (const re of [/^Successful requests:\s+\d/m, /^Request throughput \(req\/s\):\s+[\d.]/m, /^Mean TTFT \(ms\):\s+[\d.]/m, /^Output token throughput \(tok\/s\):\s+[\d.]/m]) if (re.test(t)) n++;
    return n >= 2 ? 0.85 : 0;
  },
  parse: parseVllmBench,
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [];
    rows.push(['requests', `${f.successful ?? '?'} ok${f.failed !== undefined ? `, ${f.failed} failed` : ''}`]);
    if (f.requestThroughput !== undefined) rows.push(['request throughput', `${f.requestThroughput} req/s`]);
    if (f.outputTokThroughput !== undefined) rows.push(['output tokens', `${f.outputTokThroughput} tok/s`]);
    if (f.totalTokThroughput !== undefined) rows.push(['total tokens', `${f.totalTokThroughput} tok/s`]);
    if (f.meanTtftMs !== undefined) rows.push(['TTFT mean / median / p99', `${fmt(f.meanTtftMs)} / ${fmt(f.medianTtftMs)} / ${fmt(f.p99TtftMs)} ms`]);
    if (f.meanTpotMs !== undefined) rows.push(['TPOT mean', `${f.meanTpotMs} ms`]);
    return rows;
  },
};

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
