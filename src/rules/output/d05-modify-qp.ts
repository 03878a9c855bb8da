/**
 * D05 ibv_modify_qp failed — blocker (docs/RULES.md §3). `Call to ibv_modify_qp failed with error Network is unreachable`
 * (older) or `… failed with 110 Connection timed out, on dev mlx5_x:1, curr state INIT, next state RTR, …`.
 * An INFO `… retrying 1/N` line alone does not count (the scanner skips it).
 */
import type { ModifyQpHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

const BY_ERRNO: Record<number, string> = {
  101: "errno 101 Network is unreachable: no route from this port to the remote GID's IP (a cross-subnet QP, R15).",
  110: 'errno 110 Connection timed out: neighbour resolution failed (cabling, peer port down, cross-rail); NCCL hints NCCL_CROSS_NIC=0 (R15).',
  22: 'errno 22 Invalid argument: a forced GID index of the wrong type (R05); NCCL hints NCCL_IB_GID_INDEX=-1 (unset it).',
};

export function d05ModifyQp(hits: readonly ModifyQpHit[]): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const dev = /on dev\s+([^\s,]+)/.exec(first.text)?.[1];
  const meaning = first.errno !== undefined ? BY_ERRNO[first.errno] : undefined;
  const more = hits.slice(1, 3).map((h) => `line ${h.line}: ${h.text}`);
  return {
    rule: 'D05',
    severity: 'blocker',
    title: `ibv_modify_qp failed: ${first.message}`,
    evidence: [`line ${first.line}: ${first.text}`, ...(meaning ? [meaning] : []), ...more].join('\n'),
    fix:
      `Next: from each RoCE port${dev ? ` (here ${dev})` : ''}, \`ping -c3 -I <netdev> <peer IP on the same cable>\` (R17: one subnet per cable, same-named ports cabled together), ` +
      'and compare `show_gids` on both hosts; with per-cable subnets set NCCL_CROSS_NIC=0 and leave NCCL_IB_GID_INDEX unset.',
    line: first.line,
  };
}
