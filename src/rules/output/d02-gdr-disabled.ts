/**
 * D02 GPUDirect RDMA disabled for an HCA — medium (docs/RULES.md §3).
 * `NET/IB : GPU Direct RDMA Disabled for HCA <n> '<dev>'` (older: `(no module)` appended); `NET/Socket : …`
 * does not count (that is D01). `via NET/IB/<n>` channels without `/GDRDMA` corroborate.
 */
import type { NcclLogScan } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d02GdrDisabled(scan: NcclLogScan): Finding | undefined {
  const hits = scan.ibGdrDisabled;
  const first = hits[0];
  if (!first) return undefined;
  const devs = [...new Set(hits.map((h) => h.hca).filter((d) => d !== ''))];
  const shown = new Set<string>();
  const lines: string[] = [];
  for (const h of hits) {
    if (shown.has(h.hca)) continue;
    shown.add(h.hca);
    lines.push(`line ${h.line}: ${h.text}`);
    if (lines.length >= 4) break;
  }
  const corroborate =
    scan.ibChannelsNoGdr > 0
      ? `\n${scan.ibChannelsNoGdr} channel(s) via NET/IB without /GDRDMA: data is staged through host memory.`
      : '';
  return {
    rule: 'D02',
    severity: 'medium',
    title: `GPUDirect RDMA disabled for ${devs.length > 0 ? devs.join(', ') : 'an HCA'}`,
    evidence: `${lines.join('\n')}${corroborate}`,
    fix:
      'Causes: no DMA-BUF (proprietary kernel module, or NCCL_DMABUF_ENABLE=0); nvidia_peermem not loaded; peermem on an inbox ib_core; ' +
      'rdma-core without dmabuf (`ibv_reg_dmabuf_mr failed … Operation not supported`). Next (R34): `cat /proc/driver/nvidia/version` ' +
      '(want "Open Kernel Module"), `uname -r` (≥ 5.12), `lsmod | grep -E "nvidia_peermem|nv_peer_mem"`. Host staging is acceptable at 25GbE.',
    line: first.line,
  };
}
