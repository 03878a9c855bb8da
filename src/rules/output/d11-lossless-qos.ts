/**
 * D11 Lossless QoS missing on a RoCE port — medium (docs/RULES.md §3). Reads `mlnx_qos`: PFC enabled on no
 * priority; `Priority trust state: pcp` while RoCE is DSCP-marked; or PFC not on dscp2prio[RoCE DSCP]. The
 * RoCE class is NCCL_IB_TC=106 → DSCP 26 → prio 3 unless told otherwise.
 */
import type { MlnxQosFacts } from '../../parse/mlnx-qos.js';
import type { Finding } from '../types.js';

export const ROCE_TC = 106;
export const ROCE_DSCP = ROCE_TC >> 2;
export const ROCE_PRIO = 3;

export function d11LosslessQos(
  f: MlnxQosFacts,
  lines: readonly string[],
  roceDscp: number = ROCE_DSCP,
): Finding | undefined {
  const ev: string[] = [];
  let line: number | undefined;
  const find = (re: RegExp): number => lines.findIndex((l) => re.test(l));
  const pf = f.netdev ?? '<pf>';
  const enabledIdx = find(/^\s*enabled(?:\s+\d){8}\s*$/);
  const enabledText =
    enabledIdx >= 0 ? (lines[enabledIdx] ?? '').trim().replace(/\s+/g, ' ') : f.pfc ? `enabled ${f.pfc.join(' ')}` : '';
  const wantPrio = f.dscp2prio?.[String(roceDscp)] ?? ROCE_PRIO;
  if (f.pfc && f.pfc.every((x) => x === 0)) {
    ev.push(`PFC configuration: ${enabledText} (no lossless priority)`);
    line ??= enabledIdx >= 0 ? enabledIdx + 1 : undefined;
  }
  if (f.trust === 'pcp') {
    const i = find(/Priority trust (?:state|mode):\s*pcp/i);
    ev.push(
      `${i >= 0 ? (lines[i] ?? '').trim() : 'Priority trust state: pcp'} (RoCE is DSCP-marked: TC ${ROCE_TC} → DSCP ${roceDscp})`,
    );
    line = line === undefined || (i >= 0 && i + 1 < line) ? (i >= 0 ? i + 1 : line) : line;
  }
  if (
    f.trust === 'dscp' &&
    f.pfc &&
    !f.pfc.every((x) => x === 0) &&
    f.dscp2prio &&
    f.dscp2prio[String(roceDscp)] !== undefined
  ) {
    const prio = f.dscp2prio[String(roceDscp)]!;
    if (f.pfc[prio] !== 1) {
      const rowIdx = find(new RegExp(`^\\s*prio:\\s*${prio}\\s+dscp:`));
      const on = f.pfc.map((v, i) => (v === 1 ? i : -1)).filter((i) => i >= 0);
      ev.push(
        `DSCP ${roceDscp} → prio ${prio}${rowIdx >= 0 ? ` (${(lines[rowIdx] ?? '').trim()})` : ''}; PFC ${enabledText} → PFC on prio ${on.join(',')}, not on prio ${prio}`,
      );
      line ??= enabledIdx >= 0 ? enabledIdx + 1 : undefined;
    }
  }
  if (ev.length === 0) return undefined;
  const vec = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => (i === wantPrio ? 1 : 0)).join(',');
  return {
    rule: 'D11',
    severity: 'medium',
    title: 'Lossless QoS missing on a RoCE port',
    evidence: `${f.netdev ? `${f.netdev}: ` : ''}${ev.join('; ')}`,
    fix:
      `On every RoCE PF of both hosts: \`mlnx_qos -i ${pf} --trust dscp --pfc ${vec}\` (PFC only on prio ${wantPrio}, which DSCP ${roceDscp} maps to). ` +
      `Inbox tools: \`dcb app replace dev ${pf} dscp-prio ${roceDscp}:${wantPrio}\` and \`dcb pfc set dev ${pf} prio-pfc all:off ${wantPrio}:on\`. ` +
      `Never on a bond (R25); make it persistent with a roce-qos.service (R27); keep DCBX OS-controlled (R28).`,
    ...(line !== undefined ? { line } : {}),
    source: 'mlnx_qos',
  };
}
