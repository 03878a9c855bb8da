/**
 * From two readings of raw counters to rates: port throughput (kernel bytes plus RDMA words × 4, since
 * RDMA bypasses the kernel's counters), PFC pauses per priority, discards, and vLLM's tokens per
 * second and time to first token. A counter that went backwards (driver reload, reboot, wrap) gives
 * no rate for that interval rather than a huge negative one.
 */
import { parsePrometheus, type LoopFrame, type PortCounters } from './parse.js';
import type { PortReading, VllmReading } from './types.js';

const GBIT = 1e9;

function perSec(cur: number | null | undefined, prev: number | null | undefined, dt: number | null): number | null {
  if (dt === null || dt <= 0 || cur === null || cur === undefined || prev === null || prev === undefined || cur < prev)
    return null;
  return (cur - prev) / dt;
}

const round = (n: number | null, digits: number): number | null =>
  n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits;

function sumOrNull(...xs: Array<number | null>): number | null {
  const known = xs.filter((x): x is number => x !== null);
  return known.length ? known.reduce((a, b) => a + b, 0) : null;
}

function pauses(
  cur: PortCounters,
  prev: PortCounters | undefined,
  dt: number | null,
  dir: 'rx' | 'tx',
  priority: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, total] of Object.entries(cur.ethtool)) {
    const m = new RegExp(`^${dir}_prio([0-7])_pause$`).exec(key);
    if (!m) continue;
    const prio = m[1] as string;
    const rate = perSec(total, prev?.ethtool[key], dt);
    // Priorities that ever paused, and the RoCE priority even at 0: an operator wants to see it quiet.
    if (total > 0 || Number(prio) === priority) out[prio] = Math.round(rate ?? 0);
  }
  return out;
}

export function portReadings(cur: LoopFrame, prev: LoopFrame | null, rocePriority = 3): PortReading[] {
  const dt = prev && cur.uptime !== null && prev.uptime !== null ? cur.uptime - prev.uptime : null;
  return cur.ports.map((p) => {
    const q = prev?.ports.find((x) => x.netdev === p.netdev);
    const bits = (b: number | null): number | null => (b === null ? null : (b * 8) / GBIT);
    // RDMA bytes: the port counters (words of 4 octets) where sysfs has them, else mlx5's vport counters.
    const words = (w: number | null | undefined): number | null => (w === null || w === undefined ? null : w * 4);
    const rdmaTxBits =
      p.xmitWords !== null
        ? bits(perSec(words(p.xmitWords), words(q?.xmitWords), dt))
        : bits(perSec(p.ethtool.tx_vport_rdma_unicast_bytes, q?.ethtool.tx_vport_rdma_unicast_bytes, dt));
    const rdmaRxBits =
      p.rcvWords !== null
        ? bits(perSec(words(p.rcvWords), words(q?.rcvWords), dt))
        : bits(perSec(p.ethtool.rx_vport_rdma_unicast_bytes, q?.ethtool.rx_vport_rdma_unicast_bytes, dt));
    const kernelTx = bits(perSec(p.txBytes, q?.txBytes, dt));
    const kernelRx = bits(perSec(p.rxBytes, q?.rxBytes, dt));
    const discards =
      p.ethtool.rx_discards_phy !== undefined
        ? perSec(p.ethtool.rx_discards_phy, q?.ethtool.rx_discards_phy, dt)
        : perSec(p.rxDropped, q?.rxDropped, dt);
    const oob =
      p.outOfBuffer !== null
        ? perSec(p.outOfBuffer, q?.outOfBuffer, dt)
        : perSec(p.ethtool.rx_out_of_buffer, q?.ethtool.rx_out_of_buffer, dt);
    return {
      netdev: p.netdev,
      rdmaDevice: p.rdmaDevice,
      speedGbps: p.speedMbps === null ? null : p.speedMbps / 1000,
      up: p.operstate === 'up',
      adminUp: p.adminUp,
      txGbps: round(sumOrNull(kernelTx, rdmaTxBits), 2),
      rxGbps: round(sumOrNull(kernelRx, rdmaRxBits), 2),
      rdmaTxGbps: round(rdmaTxBits, 2),
      rdmaRxGbps: round(rdmaRxBits, 2),
      pauseRxPerSec: pauses(p, q, dt, 'rx', rocePriority),
      pauseTxPerSec: pauses(p, q, dt, 'tx', rocePriority),
      discardsPerSec: round(discards, 1),
      outOfBufferPerSec: round(oob, 1),
    };
  });
}

export interface MetricsReading {
  /** Host uptime (s) of the frame that read them. */
  at: number;
  lines: string[];
}

/** vLLM's view from two /metrics readings; null when nothing answered on the port. */
export function vllmReading(cur: MetricsReading, prev: MetricsReading | null, url: string): VllmReading | null {
  const now = parsePrometheus(cur.lines);
  if (now.size === 0) return null;
  const before = prev ? parsePrometheus(prev.lines) : new Map<string, { sum: number; count: number }>();
  const dt = prev ? cur.at - prev.at : null;
  const total = (name: string): number | null => now.get(name)?.sum ?? null;
  const rate = (name: string): number | null => perSec(now.get(name)?.sum, before.get(name)?.sum, dt);
  const kv = now.get('vllm:kv_cache_usage_perc') ?? now.get('vllm:gpu_cache_usage_perc');
  const dCount = perSec(
    now.get('vllm:time_to_first_token_seconds_count')?.sum,
    before.get('vllm:time_to_first_token_seconds_count')?.sum,
    1,
  );
  const dSum = perSec(
    now.get('vllm:time_to_first_token_seconds_sum')?.sum,
    before.get('vllm:time_to_first_token_seconds_sum')?.sum,
    1,
  );
  return {
    url,
    running: total('vllm:num_requests_running'),
    waiting: total('vllm:num_requests_waiting'),
    generationTokensPerSec: round(rate('vllm:generation_tokens_total'), 1),
    promptTokensPerSec: round(rate('vllm:prompt_tokens_total'), 1),
    kvCacheUsagePct: kv ? round((kv.sum / kv.count) * 100, 1) : null,
    ttftMs: dCount !== null && dCount > 0 && dSum !== null ? round((dSum / dCount) * 1000, 1) : null,
  };
}
