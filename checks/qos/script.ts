/**
 * What qos.persist installs (docs/STAGES.md §3.5): the QoS script over the PF netdevs and the oneshot unit
 * that runs it at boot and after a driver reload. One generator serves the step, the persistence
 * check (is the installed script the current one?) and the lab's `ready` scenario.
 */
import type { ClusterConfig } from '../../src/config/schema.js';
import { QOS_SCRIPT_PATH } from './probes.js';

/**
 * Version of the script's format. It is in the header instead of the tool's version so that an
 * upgrade of l20-setup does not rewrite (and re-apply, stalling RDMA) an unchanged script.
 */
export const QOS_SCRIPT_FORMAT = 'qos-script/1';

/** `0,0,0,1,0,0,0,0` for priority 3. */
export function pfcVector(prio: number): string {
  return Array.from({ length: 8 }, (_, i) => (i === prio ? '1' : '0')).join(',');
}

/** The script for these PFs (netdev names checked by the config schema's rules before they get here). */
export function qosScript(pfs: readonly string[], qos: ClusterConfig['qos']): string {
  const { priority: prio, dscp, trust } = qos;
  const mlnx =
    trust === 'dscp'
      ? `mlnx_qos -i "$i" --trust dscp --pfc ${pfcVector(prio)} >/dev/null`
      : `mlnx_qos -i "$i" --trust pcp --pfc ${pfcVector(prio)} >/dev/null`;
  const dcbSet =
    trust === 'dscp'
      ? `dcb app replace dev "$i" dscp-prio ${dscp}:${prio}; dcb pfc set dev "$i" prio-pfc all:off ${prio}:on`
      : `dcb app flush dev "$i" dscp-prio; dcb pfc set dev "$i" prio-pfc all:off ${prio}:on`;
  return [
    '#!/bin/sh',
    `# l20-setup ${QOS_SCRIPT_FORMAT}: ${trust.toUpperCase()} trust + PFC on priority ${prio}; physical ports only, never bonds`,
    'set -e',
    `for i in ${pfs.join(' ')}; do`,
    '  if command -v mlnx_qos >/dev/null; then',
    '    if [ "${1:-}" = --reset ]; then mlnx_qos -i "$i" --trust pcp --pfc 0,0,0,0,0,0,0,0 >/dev/null',
    `    else ${mlnx}; fi`,
    '  elif [ "${1:-}" = --reset ]; then dcb app flush dev "$i" dscp-prio; dcb pfc set dev "$i" prio-pfc all:off',
    `  else ${dcbSet}; fi`,
    'done',
    '',
  ].join('\n');
}

export function qosUnit(qos: ClusterConfig['qos']): string {
  return [
    '[Unit]',
    `Description=l20-setup RoCE QoS (${qos.trust.toUpperCase()} trust, PFC on priority ${qos.priority}) on the ConnectX ports`,
    'After=network-online.target openibd.service',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `ExecStart=${QOS_SCRIPT_PATH}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
