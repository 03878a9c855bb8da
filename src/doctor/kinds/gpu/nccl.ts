/**
 * NCCL-side doctor kinds: NCCL INFO/WARN logs, nccl-tests tables, and torch NCCL watchdog excerpts, plus
 * `ncclLogFindings`, the NCCL-log rules (D01–D07, D17, D22) that vLLM logs and nccl-tests reuse.
 */
import { countIncludes, logLines } from '../../../parse/log-lines.js';
import { parseNcclLog, scanNcclLog } from '../../../parse/nccl-log.js';
import { CONFIG_REJECTED, type NcclLogFacts } from '../../../parse/nccl-log-schema.js';
import { parseNcclTests, type NcclTestsFacts } from '../../../parse/nccl-tests.js';
import { parseTorchWatchdog, type TorchWatchdogFacts } from '../../../parse/torch-nccl-watchdog.js';
import { d01NcclSocket } from '../../../rules/output/d01-nccl-socket.js';
import { d02GdrDisabled } from '../../../rules/output/d02-gdr-disabled.js';
import { d03NcclConfigRejected } from '../../../rules/output/d03-nccl-config-rejected.js';
import { d04CompletionError } from '../../../rules/output/d04-completion-error.js';
import { d05ModifyQp } from '../../../rules/output/d05-modify-qp.js';
import { d06BootstrapNoInterface } from '../../../rules/output/d06-bootstrap-no-interface.js';
import { d07CollectiveTimeout } from '../../../rules/output/d07-collective-timeout.js';
import { d15NcclTestsWrong } from '../../../rules/output/d15-nccl-tests-wrong.js';
import { d17NcclUnhandled } from '../../../rules/output/d17-nccl-unhandled.js';
import { d20Bandwidth } from '../../../rules/output/d20-bandwidth.js';
import { d22NetPlugin } from '../../../rules/output/d22-net-plugin.js';
import { envEchoFindings } from '../../../rules/cfg/env-echo.js';
import type { Finding } from '../../../rules/types.js';
import type { KindDef } from '../../types.js';
import { defined, fmt, hasAny, head } from './common.js';

/** The NCCL-log rules over a text (nccl-log kind, and NCCL lines embedded in vLLM logs and nccl-tests). */
export function ncclLogFindings(text: string, opts: { socket?: boolean } = {}): Finding[] {
  const scan = scanNcclLog(text);
  const d01 = opts.socket === false ? undefined : d01NcclSocket(scan);
  const d04 = d04CompletionError(scan.completion);
  const d05 = d05ModifyQp(scan.modifyQp);
  const d06 = d06BootstrapNoInterface(scan.noSocketInterface, scan.facts.env);
  // NCCL returns a bootstrap without a socket interface to PyTorch as ncclInvalidUsage ("invalid usage
  // (run with NCCL_DEBUG=WARN …)", NCCL 2.28 on the H200 box: test/fixtures/device/): with D06 naming
  // that cause, the generic line is no rejected configuration.
  const rejected = d06 ? scan.configRejected.filter((h) => !/invalid usage/i.test(h.text)) : scan.configRejected;
  const related = [d01, d04, d05, d06].filter((x): x is Finding => x !== undefined).map((f) => f.rule);
  const d07 = d07CollectiveTimeout(
    scan.watchdog,
    [d04, d05, ...(scan.unhandled.length > 0 ? ['D17'] : [])]
      .filter((x) => x !== undefined)
      .map((x) => (typeof x === 'string' ? x : x.rule)),
  );
  return defined([
    d01,
    d02GdrDisabled(scan),
    d03NcclConfigRejected(rejected, scan.algoEnv),
    d04,
    d05,
    d06,
    d07,
    d17NcclUnhandled(scan.unhandled, related, scan.facts.errors),
    d22NetPlugin(scan),
  ]);
}

/**
 * Doctor's reading of NCCL lines in any pasted text: the NCCL-log rules plus the cfg rules over the values
 * NCCL echoed (`NCCL_ALGO set by environment to …`) — a paste is the only view doctor has of the job's
 * configuration. (Live checks lint the hosts' files themselves and take `ncclLogFindings` alone.)
 */
export function pastedNcclFindings(text: string): Finding[] {
  const scan = scanNcclLog(text);
  const echo = envEchoFindings(scan.envEcho, { ncclVersion: scan.facts.ncclVersion, source: 'nccl-log' });
  return [...ncclLogFindings(text), ...echo];
}

export const ncclLog: KindDef<NcclLogFacts> = {
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
    if (
      !hasAny(
        h,
        'ibv_modify_qp',
        'Got completion',
        'socket interface',
        'nrecognized',
        'ntries except',
        'lgorithm/protocol',
        'nvalid usage',
      )
    )
      return 0;
    return CONFIG_REJECTED.test(h) ||
      /Call to ibv_modify_qp failed|Got completion from peer \S+ with (?:error|status)|Bootstrap\s*:\s*no socket interface found/.test(
        h,
      )
      ? 0.55
      : 0;
  },
  parse: parseNcclLog,
  findings: (_facts, text) => pastedNcclFindings(text),
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.ncclVersion) rows.push(['NCCL', f.ncclBuild ?? f.ncclVersion]);
    if (f.network) rows.push(['network', f.network]);
    rows.push(['HCAs', f.hcas.length > 0 ? f.hcas.join(' ') : 'none']);
    if (f.gdr !== undefined) rows.push(['GPUDirect RDMA', f.gdr ? 'used' : 'disabled']);
    if (f.nNodes !== undefined || f.nRanks !== undefined)
      rows.push(['nodes / ranks', `${f.nNodes ?? '?'} / ${f.nRanks ?? '?'}`]);
    const ch = Object.entries(f.channels);
    if (ch.length > 0) rows.push(['channels', ch.map(([k, v]) => `${k} ${v}`).join(', ')]);
    rows.push(['WARN lines', String(f.warnCount)]);
    return rows;
  },
};

// ---------------------------------------------------------------- nccl-tests

const ROW =
  /^\s*\d+\s+\d+\s+(?:float|double|half|bfloat16|int8|uint8|int32|uint32|int64|uint64|f8e4m3|f8e5m2|fp8_e4m3|fp8_e5m2|int|char)\s+\S/m;

export const ncclTests: KindDef<NcclTestsFacts> = {
  kind: 'nccl-tests',
  detect(text) {
    const t = head(text, 1024 * 1024);
    if (!hasAny(t, 'busbw', 'nThread', 'Collective test', 'Avg bus bandwidth')) return 0;
    const header =
      /^#\s*nThread \d+ nGpus \d+/m.test(t) ||
      /^#\s+size\s+count\s+type\b/m.test(t) ||
      /^#\s*Collective test starting:/m.test(t);
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
    const largest = f.rows.reduce<NcclTestsFacts['rows'][number] | undefined>(
      (m, r) => (m === undefined || r.bytes >= m.bytes ? r : m),
      undefined,
    );
    const isAllReduce = f.test !== undefined && /^all_reduce/.test(f.test);
    const interNode = f.hosts.length >= 2 ? true : f.hosts.length === 1 ? false : undefined;
    const l20 = f.ranks.length === 8 && f.ranks.every((r) => /\bL20\b/.test(r.name ?? ''));
    if (largest && isAllReduce && f.maxBusbw !== undefined && (interNode === true || (interNode === false && l20))) {
      // Inter-node needs the aggregate RDMA line rate: doctor has none from an nccl-tests output alone, so d20
      // stays silent there (docs/RULES.md: it fires only when the link speed is known).
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
    if (/NCCL (?:INFO|WARN)/.test(text)) out.push(...pastedNcclFindings(text));
    return defined(out);
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.test) rows.push(['test', f.test]);
    rows.push(['rows', String(f.rows.length)]);
    const last = f.rows[f.rows.length - 1];
    if (last)
      rows.push([
        'largest size',
        `${last.bytes} B: busbw ${fmt(last.busbwOut ?? undefined)} / ${fmt(last.busbwIn ?? undefined)} GB/s (out / in)`,
      ]);
    if (f.avgBusbw !== undefined) rows.push(['avg busbw', `${f.avgBusbw} GB/s`]);
    if (f.hosts.length > 0) rows.push(['hosts', `${f.hosts.length} (${f.ranks.length} ranks)`]);
    if (f.outOfBounds !== undefined)
      rows.push(['out of bounds', `${f.outOfBounds} ${f.outOfBoundsStatus ?? ''}`.trim()]);
    if (f.validated === false) rows.push(['validation', 'not validated (#wrong N/A or validation: 0)']);
    return rows;
  },
};

// ---------------------------------------------------------------- torch watchdog

export const torchWatchdog: KindDef<TorchWatchdogFacts> = {
  kind: 'torch-nccl-watchdog',
  detect(text) {
    const t = head(text);
    if (!hasAny(t, 'atchdog', 'WorkNCCL')) return 0;
    if (
      /Watchdog caught collective operation timeout|Exception \(either an error or timeout\) detected by watchdog/i.test(
        t,
      )
    )
      return 0.85;
    return /ProcessGroupNCCL/.test(t) && /WorkNCCL\(/.test(t) ? 0.75 : 0;
  },
  parse: parseTorchWatchdog,
  findings(_f, text) {
    const scan = scanNcclLog(text);
    return defined([
      d07CollectiveTimeout(scan.watchdog, scan.unhandled.length > 0 ? ['D17'] : []),
      d17NcclUnhandled(scan.unhandled, [], scan.facts.errors),
    ]);
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
