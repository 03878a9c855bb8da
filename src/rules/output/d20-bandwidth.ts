/**
 * D20 RDMA or NCCL bandwidth below the expected share of line rate — medium (docs/RULES.md §3).
 *
 * Shared by the perftest kind (this folder's owner) and nccl-tests. Pure; fires only when the link speed is
 * known (perftest: `lineRateGbps` per port; nccl-tests inter-node: `lineRateGbps` = the aggregate RDMA line
 * rate of the node, e.g. 4 × 25 = 100). Intra-node nccl-tests compare with the fixed 8 × L20 expectation.
 */
import type { Finding } from '../types.js';

/** Thresholds (estimates, kept as data). */
export const D20_THRESHOLDS = {
  /** perftest, per 25GbE port: ≥ 22 Gb/s passes, 20–22 is marginal (no finding), < 20 fires. */
  perftestPassPer25G: 22,
  perftestFirePer25G: 20,
  /** nccl-tests inter-node: busbw below this fraction of the aggregate RDMA line rate fires. */
  ncclInterNodeFraction: 0.4,
  /** nccl-tests intra-node (8 × L20): busbw below this many GB/s fires. */
  ncclIntraNodeGBps: 10,
  /** nccl-tests: only the largest size counts, and only when it is at least 256 MiB. */
  ncclMinBytes: 256 * 1024 * 1024,
} as const;

export type D20Input =
  | {
      kind: 'perftest';
      /** BW average of the largest row, in Gb/s. */
      bwAvgGbps: number;
      /** Ports driven in parallel (default 1). */
      ports?: number;
      /** Line rate of one port, Gb/s (25 for the cluster ports). */
      lineRateGbps?: number;
      /** The `Mtu : <n>[B]` perftest printed. */
      mtu?: number;
      /** Optional names for the fix. */
      device?: string;
      gidIndex?: number;
      evidence: string;
      line?: number;
    }
  | {
      kind: 'nccl-tests';
      /** busbw at the largest size, GB/s. */
      busbwGBps: number;
      bytes: number;
      interNode: boolean | undefined;
      /** Aggregate RDMA line rate of a node, Gb/s (4 × 25 = 100). */
      lineRateGbps?: number;
      evidence: string;
      line?: number;
    };

const TITLE = 'RDMA or NCCL bandwidth below the expected share of line rate';

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 100) / 100);
}

const CAUSES =
  'Causes: the wrong transport (D01) or a bond without a LAG (R16); one QP or one port (no -q 4; one HCA, R06); link speed (D09) or MTU (R24); PCIe or ACS (R38, R36); drops (D12).';

export function d20Bandwidth(input: D20Input): Finding | undefined {
  const line = input.line !== undefined ? { line: input.line } : {};
  if (input.kind === 'perftest') {
    const rate = input.lineRateGbps;
    const bw = input.bwAvgGbps;
    if (rate === undefined || !(rate > 0) || !Number.isFinite(bw) || bw < 0) return undefined;
    const ports = input.ports !== undefined && input.ports >= 1 ? Math.floor(input.ports) : 1;
    const scale = (rate / 25) * ports;
    const fireBelow = D20_THRESHOLDS.perftestFirePer25G * scale;
    if (bw >= fireBelow) return undefined;
    const portsText = `${ports} × ${fmt(rate)} Gb/s`;
    const mtuNote =
      input.mtu === 1024
        ? ` Mtu 1024[B]: the netdev MTU is below 4200, so RoCE runs at active_mtu 1024 (R24: set mtu 9000 on both ends).`
        : '';
    const dev = input.device ?? '<dev>';
    const gid = input.gidIndex !== undefined ? String(input.gidIndex) : '<v2 idx>';
    return {
      rule: 'D20',
      severity: 'medium',
      title: TITLE,
      evidence: `${input.evidence}\nBW average ${fmt(bw)} Gb/s < ${fmt(fireBelow)} Gb/s (${fmt(D20_THRESHOLDS.perftestFirePer25G)} Gb/s per 25 Gb/s × ${portsText}); expected ≥ ${fmt(D20_THRESHOLDS.perftestPassPer25G * scale)} Gb/s.${mtuNote}`,
      fix: `${CAUSES} Next: ib_write_bw -d ${dev} -x ${gid} -F --report_gbits -q 4 -D 10 per port, then all four at once; expect 23–24.5 Gb/s per port and 92–96 Gb/s in total.`,
      ...line,
    };
  }
  const bus = input.busbwGBps;
  if (!Number.isFinite(bus) || bus < 0) return undefined;
  if (!(input.bytes >= D20_THRESHOLDS.ncclMinBytes)) return undefined;
  if (input.interNode === undefined) return undefined;
  const sizeText = `${fmt(input.bytes / (1024 * 1024))} MiB`;
  if (input.interNode) {
    const rate = input.lineRateGbps;
    if (rate === undefined || !(rate > 0)) return undefined;
    const lineGBps = rate / 8;
    const fireBelow = lineGBps * D20_THRESHOLDS.ncclInterNodeFraction;
    if (bus >= fireBelow) return undefined;
    return {
      rule: 'D20',
      severity: 'medium',
      title: TITLE,
      evidence: `${input.evidence}\ninter-node busbw ${fmt(bus)} GB/s at ${sizeText} < ${fmt(fireBelow)} GB/s (40 % of ${fmt(rate)} Gb/s = ${fmt(lineGBps)} GB/s aggregate RDMA line rate); expected ${fmt(lineGBps * 0.4)}–${fmt(lineGBps * 0.8)} GB/s.`,
      fix: `${CAUSES} Next: ib_write_bw -d <dev> -x <v2 idx> -F --report_gbits -q 4 -D 10 per port, then all four at once; expect 23–24.5 Gb/s per port and 92–96 Gb/s in total. Check the NCCL log for NET/IB with every HCA and GDRDMA.`,
      ...line,
    };
  }
  const fireBelow = D20_THRESHOLDS.ncclIntraNodeGBps;
  if (bus >= fireBelow) return undefined;
  return {
    rule: 'D20',
    severity: 'medium',
    title: TITLE,
    evidence: `${input.evidence}\nintra-node busbw ${fmt(bus)} GB/s at ${sizeText} < ${fmt(fireBelow)} GB/s (8 × L20 expect 10–25 GB/s).`,
    fix: `Causes: PCIe link health or ACS/IOMMU redirecting P2P through the root complex (R38, R36), the P2P matrix (R37). Next: nvidia-smi topo -m and lspci -vvv link status; run with NCCL_DEBUG=INFO and check P2P/IPC channels.`,
    ...line,
  };
}
