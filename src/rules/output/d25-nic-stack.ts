/**
 * D25 NIC software stack unsupported for this NIC, or not an LTS line — medium, graded (docs/RULES.md §3).
 * Reads `ofed_info -s` (MLNX_OFED / DOCA-OFED version), `ethtool -i` (driver version = the OFED version
 * with MLNX_OFED; firmware), the device from `lspci -nn` or the ibstat CA type. By R30's tables:
 * - MLNX_OFED on a non-LTS branch (LTS: 4.9, 5.4, 5.8, 23.10, 24.10) → medium;
 * - an MLNX_OFED version that was never published (23.10-1.1.8.0) → medium;
 * - a stack newer than the device supports (ConnectX-4: MLNX_OFED ≤ 24.10 LTS, DOCA ≤ 2.9 / OFED 24.10) → medium;
 * - ConnectX-4 Lx firmware below 14.32 → low.
 */
import type { Finding, Severity } from '../types.js';

export const MLNX_OFED_LTS = ['4.9', '5.4', '5.8', '23.10', '24.10'] as const;
/** Versions that appear in guides but were never published (the 23.10 GA is 23.10-1.1.9.0). */
export const MLNX_OFED_UNPUBLISHED = ['23.10-1.1.8.0'] as const;
/** The last OFED release (YY.MM) supporting ConnectX-4 (MT4115, 15b3:1013). */
const CX4_LAST_OFED = 24.1;

export type NicGeneration = 'ConnectX-4' | 'ConnectX-4 Lx' | 'other';

export interface D25Input {
  stack?: { flavor?: 'MLNX_OFED' | 'DOCA'; version: string; evidence: string; line?: number };
  firmware?: { version: string; evidence: string; line?: number };
  device?: { generation: NicGeneration; evidence: string };
  kind: string;
}

/** ConnectX generation from a PCI id, a CA type / part number, or a firmware major. */
export function nicGeneration(hint: { pciId?: string; caType?: string; firmware?: string }): NicGeneration | undefined {
  const id = hint.pciId?.toLowerCase();
  if (id === '15b3:1013') return 'ConnectX-4';
  if (id === '15b3:1015') return 'ConnectX-4 Lx';
  if (id?.startsWith('15b3:')) return 'other';
  const ca = hint.caType?.toUpperCase();
  if (ca === 'MT4115') return 'ConnectX-4';
  if (ca === 'MT4117') return 'ConnectX-4 Lx';
  if (ca && /^MT\d+$/.test(ca)) return 'other';
  const fw = /^(\d+)\./.exec(hint.firmware ?? '')?.[1];
  if (fw === '12') return 'ConnectX-4';
  if (fw === '14') return 'ConnectX-4 Lx';
  return fw ? 'other' : undefined;
}

function release(version: string): string | undefined {
  return /^(\d+\.\d+)/.exec(version)?.[1];
}

/** An `ethtool -i` driver version that is an OFED version (`5.0-2.1.8`, `23.10-1.1.9`), not the kernel's. */
export function ofedVersionFromDriver(
  version: string | undefined,
): { version: string; flavor?: 'MLNX_OFED' } | undefined {
  if (!version) return undefined;
  const m = /^(\d+\.\d+-\d+\.\d+\.\d+(?:\.\d+)?)$/.exec(version.trim());
  if (!m || m[1] === undefined) return undefined;
  // 4.x / 5.x are only MLNX_OFED; YY.MM numbers are shared with DOCA-OFED, so the flavour stays open.
  return /^[45]\./.test(m[1]) ? { version: m[1], flavor: 'MLNX_OFED' } : { version: m[1] };
}

function cmpFw(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function d25NicStack(input: D25Input): Finding[] {
  const out: Finding[] = [];
  const push = (severity: Severity, title: string, evidence: string, fix: string, line?: number): void => {
    out.push({
      rule: 'D25',
      severity,
      title,
      evidence,
      fix,
      ...(line !== undefined ? { line } : {}),
      source: input.kind,
    });
  };
  const s = input.stack;
  const gen = input.device?.generation;
  const devEv = input.device ? `; device: ${input.device.evidence}` : '';
  if (s) {
    const rel = release(s.version);
    if (s.flavor === 'MLNX_OFED' && (MLNX_OFED_UNPUBLISHED as readonly string[]).includes(s.version)) {
      push(
        'medium',
        'NIC software stack: an MLNX_OFED version that was never published',
        `${s.evidence} — ${s.version} was never released (the 23.10 GA is 23.10-1.1.9.0)`,
        'Install a published LTS build: MLNX_OFED 23.10-1.1.9.0 or 24.10 LTS for ConnectX-4; for ConnectX-4 Lx the inbox mlx5 + rdma-core or current DOCA-OFED (R30).',
        s.line,
      );
    } else if (s.flavor === 'MLNX_OFED' && rel !== undefined && !(MLNX_OFED_LTS as readonly string[]).includes(rel)) {
      push(
        'medium',
        'NIC software stack: MLNX_OFED on a non-LTS branch',
        `${s.evidence} — branch ${rel} is not LTS (LTS: ${MLNX_OFED_LTS.join(', ')})${devEv}`,
        `Move to an LTS line: MLNX_OFED 24.10 LTS (the last standalone MLNX_OFED; ConnectX-4 stops there) or 23.10 LTS; ` +
          `for ConnectX-4 Lx the inbox mlx5 + rdma-core or current DOCA-OFED is supported (R30). The OFED installer removes the distro RDMA packages; reinstall them when going inbox.`,
        s.line,
      );
    }
    if (gen === 'ConnectX-4' && rel !== undefined) {
      const [yy, mm] = rel.split('.').map(Number);
      const numeric = (yy ?? 0) + (mm ?? 0) / 100;
      if ((yy ?? 0) >= 23 && numeric > CX4_LAST_OFED) {
        push(
          'medium',
          'NIC software stack newer than this NIC supports',
          `${s.evidence}${devEv} — ConnectX-4 is supported up to MLNX_OFED 24.10 LTS / DOCA 2.9 LTS`,
          'Pin ConnectX-4 hosts to MLNX_OFED 24.10 LTS or the DOCA 2.9 LTS line (R30).',
          s.line,
        );
      }
    }
  }
  const fw = input.firmware;
  if (fw && (gen === 'ConnectX-4 Lx' || (gen === undefined && /^14\./.test(fw.version)))) {
    if (/^14\.\d+/.test(fw.version) && cmpFw(fw.version, '14.32') < 0) {
      push(
        'low',
        'ConnectX-4 Lx firmware older than 14.32',
        `${fw.evidence} — below 14.32, the last ConnectX-4 Lx firmware line${devEv}`,
        'Update the firmware to the latest 14.32.x (mlxfwmanager --online -u, or mstflint with the PSID-matched image); reboot or mlxfwreset afterwards.',
        fw.line,
      );
    }
  }
  return out;
}
