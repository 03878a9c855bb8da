/**
 * The measured performance of the stages' cluster runs — ib_write_bw per cable and all at once, the
 * NCCL all-reduce's bus bandwidth, vllm bench serve's output tokens/s — each next to what the tutorial
 * claims for it (its "logical 100GbE" bond of four 25GbE ports, and its 1,200 → 2,300 tok/s table,
 * which R50 calls unverifiable: no real model, lengths, concurrency or tool).
 */
import type { RdmaLinkCluster } from '../../checks/rdma-link/cluster.js';
import { AGGREGATE_PASS_GBPS, runStatus } from '../../checks/rdma-link/bw-checks.js';
import type { NcclCluster } from '../../checks/nccl/validation.js';
import { THRESHOLDS } from '../../checks/nccl/validation.js';
import type { VllmCluster } from '../../checks/vllm/pair-checks.js';
import { BENCH } from '../../checks/vllm/pair-checks.js';
import { peakBusbw } from '../parse/torch-allreduce.js';

export interface PerfRow {
  /** `ib_write_bw cable 1`, `NCCL all-reduce (inter-node)`, `vllm bench serve`. */
  what: string;
  /** The measurement, or why there is none. */
  measured: string;
  /** The number itself, for sorting and tests. */
  value?: number;
  unit?: string;
  /** What the tutorial says about it. */
  claim: string;
  /** How the measurement reads against the expectation: ok, low, or none where nothing comparable exists. */
  verdict: 'ok' | 'low' | 'none';
  note?: string;
}

/** The tutorial's table (§4.2): single node 8 GPUs vs two nodes 16 GPUs. */
export const TUTORIAL_TABLE = {
  tokS: { single: 1200, dual: 2300 },
  ttftMs: { single: 85, dual: 92 },
  maxConcurrency: { single: 32, dual: 64 },
} as const;

const fmt = (x: number, d = 2): string =>
  x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export function rdmaRows(c: RdmaLinkCluster | undefined): PerfRow[] {
  if (!c)
    return [
      {
        what: 'ib_write_bw per cable',
        measured: 'not run',
        claim: 'four 25GbE ports bonded into a "logical 100GbE" interface',
        verdict: 'none',
      },
    ];
  const rows: PerfRow[] = c.runs.map((r) => {
    const line = r.unit.lineGbps;
    const ends = `${r.unit.client.host} ${r.unit.client.device} → ${r.unit.server.host} ${r.unit.server.device}`;
    if (r.gbps === undefined) {
      return {
        what: `ib_write_bw ${r.unit.label}`,
        measured: `no result: ${r.completionError ?? r.error ?? 'unknown'}`,
        claim: `${line} GbE port (line rate)`,
        verdict: 'none' as const,
        note: ends,
      };
    }
    return {
      what: `ib_write_bw ${r.unit.label}`,
      measured: `${fmt(r.gbps)} Gb/s${r.mtu ? ` (MTU ${r.mtu})` : ''}`,
      value: r.gbps,
      unit: 'Gb/s',
      claim: `${line} GbE port: ≈ ${fmt(line * 0.98, 1)} Gb/s at RoCE MTU 4096`,
      verdict: runStatus(r) === 'pass' ? ('ok' as const) : ('low' as const),
      note: ends,
    };
  });
  for (const s of c.skipped)
    rows.push({
      what: `ib_write_bw ${s.label}`,
      measured: `not tested: ${s.reason}`,
      claim: '25 GbE port',
      verdict: 'none',
    });
  const all = c.aggregate.length > 0 ? c.aggregate : [];
  if (all.length > 0) {
    const total = all.reduce((s, r) => s + (r.gbps ?? 0), 0);
    rows.push({
      what: `ib_write_bw all ${all.length} cables at once`,
      measured: `${fmt(total)} Gb/s`,
      value: total,
      unit: 'Gb/s',
      claim:
        'the tutorial\'s "logical 100GbE" bond0; RDMA never spreads over a balance-xor bond (one QP, one port), separate rails do',
      verdict: total >= AGGREGATE_PASS_GBPS ? 'ok' : 'low',
    });
  }
  return rows;
}

export function ncclRows(c: NcclCluster | undefined): PerfRow[] {
  const claim = 'no figure in the tutorial; NIC ceiling ≈ 11.6 GB/s per node (4 × 25 Gb/s)';
  if (!c) return [{ what: 'NCCL all-reduce bus bandwidth', measured: 'not run', claim, verdict: 'none' }];
  const rows: PerfRow[] = [];
  for (const run of c.runs) {
    for (const [host, table] of Object.entries(run.table)) {
      const minBytes = run.kind === 'inter' ? THRESHOLDS.interMinBytes : THRESHOLDS.intraBytes;
      const peak = peakBusbw(table, minBytes);
      const pass = run.kind === 'inter' ? THRESHOLDS.interPass : THRESHOLDS.intraPass;
      const what =
        run.kind === 'inter'
          ? `NCCL all-reduce, ${run.hosts.length} nodes × 8 GPUs (busbw)`
          : `NCCL all-reduce on ${host} alone, 8 GPUs (busbw)`;
      if (!peak) {
        const h = run.hosts.find((x) => x.host === host) ?? run.hosts[0];
        rows.push({
          what,
          measured: `no result (torchrun exit ${h?.exitCode ?? '?'}${h?.timedOut ? ', timed out' : ''})`,
          claim: run.kind === 'inter' ? claim : 'no figure in the tutorial',
          verdict: 'none',
        });
        continue;
      }
      rows.push({
        what,
        measured: `${fmt(peak.busbwGBps)} GB/s at ${(peak.bytes / 1024 ** 2).toLocaleString('en-US')} MiB`,
        value: peak.busbwGBps,
        unit: 'GB/s',
        claim:
          run.kind === 'inter'
            ? `${claim}; pass ≥ ${THRESHOLDS.interPass} GB/s`
            : `no figure in the tutorial; pass ≥ ${THRESHOLDS.intraPass} GB/s`,
        verdict: peak.busbwGBps >= pass ? 'ok' : 'low',
      });
    }
  }
  for (const s of c.skipped) rows.push({ what: 'NCCL all-reduce', measured: `not run: ${s}`, claim, verdict: 'none' });
  return rows.length > 0
    ? rows
    : [{ what: 'NCCL all-reduce bus bandwidth', measured: 'no run', claim, verdict: 'none' }];
}

export function vllmRows(c: VllmCluster | undefined): PerfRow[] {
  const t = TUTORIAL_TABLE;
  const claim = `${t.tokS.single.toLocaleString('en-US')} → ${t.tokS.dual.toLocaleString('en-US')} tok/s from 8 to 16 GPUs (no model that exists, no lengths, concurrency or tool: R50, not comparable)`;
  if (!c?.bench)
    return [
      {
        what: 'vllm bench serve output tokens/s',
        measured: `not run${c?.skipped ? `: ${c.skipped}` : c?.health ? `: /health ${c.health.code ?? 'no answer'}` : ''}`,
        claim,
        verdict: 'none',
      },
    ];
  const b = c.bench.facts;
  const workload = `${BENCH.prompts} prompts, ${BENCH.inputLen} in / ${BENCH.outputLen} out, concurrency ${BENCH.concurrency}, layout ${c.layout ?? '?'}`;
  const rows: PerfRow[] = [];
  if (b.outputTokThroughput !== undefined) {
    rows.push({
      what: 'vllm bench serve output tokens/s',
      measured: `${fmt(b.outputTokThroughput, 0)} tok/s`,
      value: b.outputTokThroughput,
      unit: 'tok/s',
      claim,
      verdict: (b.failed ?? 0) === 0 ? 'ok' : 'low',
      note: workload,
    });
  } else {
    rows.push({
      what: 'vllm bench serve output tokens/s',
      measured: `no result (exit ${c.bench.exitCode})`,
      claim,
      verdict: 'none',
    });
  }
  if (b.medianTtftMs !== undefined) {
    rows.push({
      what: 'vllm bench serve TTFT (median)',
      measured: `${fmt(b.medianTtftMs, 0)} ms`,
      value: b.medianTtftMs,
      unit: 'ms',
      claim: `${t.ttftMs.single} → ${t.ttftMs.dual} ms (same caveat, R50)`,
      verdict: 'none',
      note: workload,
    });
  }
  rows.push({
    what: 'concurrent requests',
    measured: `${BENCH.concurrency} (the benchmark's --max-concurrency)`,
    claim: `${t.maxConcurrency.single} → ${t.maxConcurrency.dual} "max concurrent requests": set by --max-num-seqs and the KV cache, not by hardware (R50)`,
    verdict: 'none',
  });
  return rows;
}
