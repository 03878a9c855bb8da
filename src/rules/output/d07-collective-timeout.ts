/**
 * D07 Collective timeout / watchdog — high (docs/RULES.md §3). Read by nccl-log, vllm-log and torch-nccl-watchdog.
 * `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=…, OpType=…, … Timeout(ms)=…) ran for … milliseconds
 * before timing out`, or `Exception (either an error or timeout) detected by watchdog`.
 */
import type { LogHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d07CollectiveTimeout(hits: readonly LogHit[], earlier: readonly string[] = []): Finding | undefined {
  const first = hits.find((h) => /Watchdog caught/i.test(h.text)) ?? hits[0];
  if (!first) return undefined;
  const seq = /SeqNum=(\d+)/.exec(first.text)?.[1];
  const op = /OpType=(\w+)/.exec(first.text)?.[1];
  const ranks = new Set<string>();
  for (const h of hits) {
    const r = /\[Rank (\d+)\]|\bRank (\d+)\]/.exec(h.text);
    if (r) ranks.add(r[1] ?? r[2] ?? '');
  }
  const lines = [`line ${first.line}: ${first.text}`];
  if (ranks.size > 1)
    lines.push(
      `${hits.length}${hits.length >= 20 ? '+' : ''} watchdog lines from ranks ${[...ranks].slice(0, 16).join(', ')}`,
    );
  if (earlier.length > 0) lines.push(`earlier in this text: ${earlier.join(', ')} (see those findings)`);
  return {
    rule: 'D07',
    severity: 'high',
    title: `Collective timeout caught by the NCCL watchdog${op ? ` (${op}${seq ? `, SeqNum ${seq}` : ''})` : ''}`,
    evidence: lines.join('\n'),
    fix:
      'Causes, most likely first: another rank died or stalled (an earlier D04, D05 or D17 here or on the peer); a network hang ' +
      '(cross-NIC, R15/R16, or GDR through ACS, R36); SeqNum or OpType differing across ranks (an application bug); a timeout shorter ' +
      "than a long first operation. Next: collect both hosts' logs with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` and run " +
      'nccl-tests `all_reduce_perf -b 8 -e 1G -f 2 -g 1` across the nodes.',
    line: first.line,
  };
}
