/**
 * The monitor without a terminal: one line per host per sample, greppable (`[l20-n1] gpu …`), the
 * alerts after it. The TUI draws the same sample richer.
 */
import type { HostSample, MonitorSample } from './types.js';

const f = (v: number | null, digits = 0): string => (v === null ? '?' : v.toFixed(digits));

function hostLines(h: HostSample): string[] {
  const tag = `[${h.name}]`;
  if (h.stale) return [`${tag} STALE ${h.error ?? ''}`.trimEnd()];
  const util = h.gpus.map((g) => f(g.utilPct)).join(' ');
  const power = h.gpus.reduce((s, g) => s + (g.powerW ?? 0), 0);
  const hottest = Math.max(...h.gpus.map((g) => g.tempC ?? 0), 0);
  const lines = [
    h.gpus.length === 0 && h.gpuError
      ? `${tag} gpus not read`
      : `${tag} gpus ${h.gpus.length} util% ${util || '-'} power ${power.toFixed(0)} W max ${hottest} °C`,
  ];
  for (const p of h.ports) {
    const pauses = [...Object.values(p.pauseRxPerSec), ...Object.values(p.pauseTxPerSec)].reduce((a, b) => a + b, 0);
    lines.push(
      `${tag} ${p.netdev}${p.rdmaDevice ? `/${p.rdmaDevice}` : ''} ${p.up ? `up ${f(p.speedGbps)}G` : 'DOWN'} tx ${f(p.txGbps, 1)} rx ${f(p.rxGbps, 1)} Gb/s pause ${pauses}/s discards ${f(p.discardsPerSec)}/s`,
    );
  }
  if (h.vllm)
    lines.push(
      `${tag} vllm running ${f(h.vllm.running)} waiting ${f(h.vllm.waiting)} gen ${f(h.vllm.generationTokensPerSec)} tok/s kv ${f(h.vllm.kvCacheUsagePct, 1)}% ttft ${f(h.vllm.ttftMs)} ms`,
    );
  for (const a of h.alerts) lines.push(`${tag} ${a.severity.toUpperCase()} ${a.kind}: ${a.message}`);
  if (h.error) lines.push(`${tag} note: ${h.error}`);
  return lines;
}

export function formatSampleLines(sample: MonitorSample): string[] {
  return [`# ${sample.time}`, ...sample.hosts.flatMap(hostLines)];
}
