/**
 * Stage 5, `qos` (docs/STAGES.md §3.5): DSCP trust and PFC on priority 3 on every ConnectX PF (never on
 * bonds), equal at both ends of every cable, owned by the OS, and re-applied at boot by a oneshot
 * unit — the settings are runtime driver state that a reboot or driver reload drops.
 */
import type { StageDef, StepCommand, StepDef } from '../../src/engine/types.js';
import { collectQos, type QosFacts } from './facts.js';
import { pfNetdevs, qosChecks } from './checks.js';
import { QOS_SCRIPT_PATH, QOS_UNIT, QOS_UNIT_PATH, qosProbes } from './probes.js';
import { qosScript, qosUnit } from './script.js';

/**
 * Rollback after the files were restored: a previous QoS unit is re-run (its settings come back);
 * without one the PFs return to the driver defaults. PF names arrive as arguments.
 */
export const QOS_ROLLBACK_SCRIPT = `systemctl daemon-reload
if [ -x ${QOS_SCRIPT_PATH} ] && systemctl is-enabled --quiet ${QOS_UNIT}; then
  systemctl restart ${QOS_UNIT}
  exit
fi
systemctl disable ${QOS_UNIT} 2>/dev/null
for i in "$@"; do
  if command -v mlnx_qos >/dev/null; then mlnx_qos -i "$i" --trust pcp --pfc 0,0,0,0,0,0,0,0 >/dev/null
  else dcb app flush dev "$i" dscp-prio; dcb pfc set dev "$i" prio-pfc all:off; fi
done
`;

const GUARDS = ['qos.trust', 'qos.dscp2prio', 'qos.pfc', 'qos.dcbx', 'qos.persistence'] as const;

const persist: StepDef<QosFacts> = {
  id: 'qos.persist',
  title: 'DSCP trust + PFC on the PFs, persisted by l20-roce-qos.service',
  danger: 'disruptive',
  guards: [...GUARDS],
  order: 'reverse',
  plan: (ctx) => {
    const pfs = pfNetdevs(ctx.facts);
    if (pfs.length === 0) return null;
    const failing = ctx.results.filter(
      (r) =>
        r.host === ctx.host &&
        (GUARDS as readonly string[]).includes(r.id) &&
        r.status !== 'pass' &&
        r.status !== 'skip',
    );
    // A running lldpad is for the operator to stop; re-applying the unit would not change that.
    if (ctx.facts.persistence.lldpadActive && failing.every((r) => r.id === 'qos.dcbx')) return null;
    const { priority, dscp, trust } = ctx.config.qos;
    const commands: StepCommand[] = [
      { command: { argv: ['systemctl', 'daemon-reload'] } },
      { command: { argv: ['systemctl', 'enable', QOS_UNIT] } },
      { command: { argv: ['systemctl', 'restart', QOS_UNIT] } },
    ];
    return {
      summary: `${trust} trust${trust === 'dscp' ? ` (DSCP ${dscp} → priority ${priority})` : ''} and PFC on priority ${priority} on ${pfs.join(' ')}, re-applied at every boot by ${QOS_UNIT} (RDMA stalls briefly)`,
      files: [
        { path: QOS_SCRIPT_PATH, content: qosScript(pfs, ctx.config.qos), mode: 0o755 },
        { path: QOS_UNIT_PATH, content: qosUnit(ctx.config.qos), mode: 0o644 },
      ],
      commands,
      rollback: [{ command: { script: QOS_ROLLBACK_SCRIPT, args: pfs } }],
    };
  },
};

export const qosStage: StageDef<QosFacts> = {
  id: 'qos',
  title: 'DSCP trust and PFC on priority 3, both ends',
  purpose:
    "RoCE needs a lossless class: NCCL_IB_TC=106 marks DSCP 26, which maps to priority 3, which must have PFC on every physical port at both ends of every cable. The tutorial's per-port mlnx_qos commands are right but vanish at reboot, and its bond0 lines fail (a bond has no DCB). The stage writes a script and a oneshot unit that re-apply the settings at boot.",
  probes: qosProbes,
  collect: collectQos,
  checks: qosChecks,
  steps: [persist],
};
