/**
 * D04 RDMA completion error — blocker (docs/RULES.md §3). `NET/IB : Got completion from peer … with error 12 …`
 * (≤ 2.19), `… with status=12 …` (2.2x), `… with status=IBV_WC_RETRY_EXC_ERR(12) … vendor_err=129 … hca mlx5_1`.
 * The earliest error is reported; status 5 (flushed) is secondary to any other.
 */
import type { CompletionHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

const MEANING: Record<number, string> = {
  12: 'transport retry counter exceeded: the peer never ACKed',
  13: 'RNR retry counter exceeded',
  4: 'local protection error (NCCL hints ACS with GDR)',
  5: 'work request flushed: secondary to an earlier error, here or on the peer',
  1: 'local length error (MTU mismatch, R24)',
};

const CAUSES: Record<number, string> = {
  12:
    'Causes of 12: a GID mismatch from a forced NCCL_IB_GID_INDEX (R05); no path for the QP: cross-NIC under design A or the 4-port bond (R15, R16); ' +
    'the peer died (its log holds the first error); a port flap changed the GIDs (D08); a lossy path (D11, D12).',
  4: 'Cause of 4: GDR or P2P through ACS/IOMMU (R36); try NCCL_NET_GDR_LEVEL=LOC to confirm.',
  1: 'Cause of 1: MTU differs between the cable ends (R24): set mtu 9000 on both.',
  13: 'Cause of 13: the receiver posted no buffers in time (a stalled or dead peer).',
  5: "Status 5 follows another failure: read the peer's log for its first error.",
};

export function d04CompletionError(hits: readonly CompletionHit[]): Finding | undefined {
  if (hits.length === 0) return undefined;
  const primary = hits.find((h) => h.status !== 5) ?? hits[0];
  if (!primary) return undefined;
  const others = hits
    .filter((h) => h !== primary)
    .slice(0, 2)
    .map((h) => `line ${h.line}: ${h.text}`);
  const meaning = MEANING[primary.status] ?? `IBV_WC status ${primary.status}`;
  const hca = primary.hca ?? '<hca>';
  return {
    rule: 'D04',
    severity: 'blocker',
    title: `RDMA completion error ${primary.status}${primary.peer ? ` from peer ${primary.peer}` : ''}`,
    evidence: [
      `line ${primary.line}: ${primary.text}`,
      `status ${primary.status}: ${meaning}${primary.vendorErr !== undefined ? `; vendor err ${primary.vendorErr}` : ''}`,
      ...others,
    ].join('\n'),
    fix:
      `${CAUSES[primary.status] ?? CAUSES[12]} Next: \`ib_write_bw -d ${hca} -x <v2 GID index> --tclass=106 -F --report_gbits\` between the same HCA pair, ` +
      'and compare `show_gids` on both hosts (the GID index must be a RoCE v2 IPv4 entry on both).',
    line: primary.line,
  };
}
