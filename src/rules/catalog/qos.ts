/** QoS and lossless-fabric rules (R25–R29): trust, PFC, DCBX and their persistence on the RoCE ports. */
import type { RuleRecord } from './schema.js';

export const QOS_RULES: readonly RuleRecord[] = [
  {
    id: 'R25',
    family: 'qos',
    title: 'DCB commands only on physical mlx5 PFs',
    severity: 'blocker',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      '`mlnx_qos -i <if>` or `dcb … dev <if>` targets a bond, VLAN, bridge or veth:\n' +
      '- statically: defined under bonds, vlans or bridges, or named `bond*`, `*.<vid>`, `br*` or ' +
      '`veth*`;\n' +
      '- live: no `/sys/class/net/<if>/device`, or a driver other than mlx5_core.',
    why:
      'Trust and PFC are state of the physical port. On anything else mlnx_qos prints `Priority trust ' +
      'state is not supported on your system` and exits 1, aborting `set -e` scripts.',
    fix: 'Delete; configure the PFs only.',
  },
  {
    id: 'R26',
    family: 'qos',
    title: 'Same PFC and trust on both ends, one lossless priority',
    severity: 'high',
    graded: true,
    scope: ['pair'],
    status: 'implemented',
    detect:
      '- the cable ends differ in trust, PFC vector or dscp2prio[RoCE DSCP] → `high`;\n' +
      '- PFC is on all 8 priorities → `high`;\n' +
      '- any lossless priority besides the RoCE prio (R08) → `medium`.',
    why:
      'Back to back, each NIC pauses the peer NIC directly, so a one-sided setting protects one ' +
      'direction only. PFC on every priority turns TCP lossless too: head-of-line blocking, storms.',
    fix:
      'The same trust (dscp), PFC vector (prio 3 only) and dscp2prio on both ends of every cable, from ' +
      'one persisted QoS script (R27).',
  },
  {
    id: 'R27',
    family: 'qos',
    title: 'QoS persistence',
    severity: 'high',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'host: trust or PFC reads back wrong after a reboot, driver reload or unit restart.\n' +
      'cfg: a script applies QoS with nothing to re-apply it.',
    why: 'The settings are runtime driver state: a reboot or driver reload loses them, and RoCE turns lossy.',
    fix: 'A `roce-qos.service` (oneshot, After=network-online.target) on both hosts.',
  },
  {
    id: 'R28',
    family: 'qos',
    title: 'DCBX owner',
    severity: 'medium',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect: 'mlnx_qos does not show `DCBX mode: OS controlled`, or lldpad runs.',
    why: 'DCBX negotiation (the firmware agent or lldpad) can overwrite the trust and PFC settings.',
    fix: '`mlnx_qos -i <pf> -d os`; disable lldpad.',
  },
  {
    id: 'R29',
    family: 'qos',
    title: 'Counters after a load test',
    severity: 'medium',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect:
      'Between `ethtool -S` before and after an RDMA test, any of these grew:\n' +
      '- pause on a priority other than the RoCE prio, or `*_global_pause`;\n' +
      '- `rx_discards_phy`, `rx_out_of_buffer`, `rx_prio<n>_discards`;\n' +
      '- `tx_pause_storm_*`.\n' +
      'Pause on the RoCE prio may grow. D12 is the one-snapshot form.',
    why:
      'Under load a lossless class shows pause on its own priority and nothing else: drops, storms or ' +
      'pause elsewhere mean the PFC setup does not protect the RoCE traffic (D11, D12).',
    fix:
      'Make PFC, trust and dscp2prio equal at both ends of every cable (R26), then repeat the test and ' +
      'compare the counters again.',
  },
];
