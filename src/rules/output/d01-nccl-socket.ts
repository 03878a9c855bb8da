/**
 * D01 NCCL used TCP sockets instead of RDMA — high, graded (docs/RULES.md §3).
 * high when the job spans nodes (nNodes > 1, two or more hostnames, or a `via NET/Socket` channel); info for a
 * one-node log without NET channels, since NCCL picks a network even when no collective leaves the node.
 */
import type { NcclLogScan } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d01NcclSocket(scan: NcclLogScan): Finding | undefined {
  const triggers = [
    ...scan.ibNoDevice,
    ...scan.ibInitFailed,
    ...scan.usingNetworkSocket,
    ...scan.socketUsing,
    ...scan.socketChannels,
  ].sort((a, b) => a.line - b.line);
  const first = triggers[0];
  if (!first) return undefined;
  const f = scan.facts;
  const reasons: string[] = [];
  if ((f.nNodes ?? 0) > 1) reasons.push(`nNodes ${f.nNodes}`);
  if (f.hosts.length >= 2)
    reasons.push(`${f.hosts.length} hosts (${f.hosts.slice(0, 4).join(', ')}${f.hosts.length > 4 ? ', …' : ''})`);
  if (scan.socketChannels.length > 0)
    reasons.push(`${f.channels['NET/Socket'] ?? scan.socketChannels.length} channels via NET/Socket`);
  const multi = reasons.length > 0;
  // One line of each trigger kind, in log order.
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const t of triggers) {
    const key = t.text.replace(/^.*?NCCL (?:INFO|WARN)\s*/, '').replace(/\d+/g, '#');
    if (seen.has(key)) continue;
    seen.add(key);
    lines.push(`line ${t.line}: ${t.text}`);
    if (lines.length >= 5) break;
  }
  const grade = multi
    ? `The job spans nodes (${reasons.join('; ')}): inter-node traffic runs over TCP.`
    : `One node${f.nNodes === 1 ? ' (nNodes 1)' : ''} and no NET channels: NCCL picked a network it never used for this job, but a multi-node run on this host would fall back the same way.`;
  return {
    rule: 'D01',
    severity: multi ? 'high' : 'info',
    title: 'NCCL used TCP sockets instead of RDMA',
    evidence: `${lines.join('\n')}\n${grade}`,
    fix:
      'Causes, most likely first: NCCL_IB_HCA matches no device (R06); a container without /dev/infiniband, IPC_LOCK and memlock; ' +
      'libibverbs, ib_uverbs or mlx5_ib missing; NCCL_NET=Socket or NCCL_IB_DISABLE=1; RDMA ports down (D08). ' +
      "Next: run `rdma link show` (and `ibv_devices`) in the job's environment on every node; success looks like " +
      '`NET/IB : Using [0]mlx5_0:1/RoCE …` with `via NET/IB/<n>` channels.',
    line: first.line,
  };
}
