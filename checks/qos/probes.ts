/**
 * The qos stage's read-only probes (docs/STAGES.md §3.5). PF names are discovered inside the scripts (the
 * netdevs of every ConnectX function), never passed in; the scripts are constants.
 */
import type { ProbeDef } from '../../src/engine/types.js';
import { FABRIC_PROBES } from '../common/fabric.js';

export const QOS_UNIT = 'l20-roce-qos.service';
export const QOS_SCRIPT_PATH = '/usr/local/sbin/l20-roce-qos';
export const QOS_UNIT_PATH = `/etc/systemd/system/${QOS_UNIT}`;

/**
 * Each PF's DCB state, with mlnx_qos where an OFED installed it, else iproute2's dcb (the inbox
 * stack's tool). Section headers `### <kind> <netdev>` keep every tool's raw output apart.
 */
export const QOS_STATE_SCRIPT = `if command -v mlnx_qos >/dev/null 2>&1; then tool=mlnx_qos; else tool=dcb; fi
echo "### tool $tool"
for b in $(lspci -D -d 15b3: | cut -d' ' -f1); do
  for n in /sys/bus/pci/devices/$b/net/*; do
    i=\${n##*/}
    if [ "$tool" = mlnx_qos ]; then
      echo "### mlnx_qos $i"; mlnx_qos -i "$i" 2>&1; echo "### exit $i $?"
    else
      echo "### dcb-app $i"; dcb -N app show dev "$i" dscp-prio 2>&1; echo "### exit $i $?"
      echo "### dcb-pfc $i"; dcb pfc show dev "$i" 2>&1
      echo "### dcb-dcbx $i"; dcb dcbx show dev "$i" 2>&1
    fi
  done
done
`;

/** The QoS unit's state, the installed script and unit, and whether lldpad (a DCBX agent) runs. */
export const QOS_PERSISTENCE_SCRIPT = `echo "### is-enabled"; systemctl is-enabled ${QOS_UNIT} 2>&1
echo "### show"; systemctl show -p ActiveState,SubState,Result ${QOS_UNIT} 2>&1
echo "### script"; cat ${QOS_SCRIPT_PATH} 2>&1
echo "### unit"; cat ${QOS_UNIT_PATH} 2>&1
echo "### lldpad"; systemctl is-active lldpad.service 2>&1
`;

/**
 * Scripts on the host that run DCB commands (operator scripts, units, rc.local): each is linted for
 * DCB on bonds, VLANs and bridges (R25). R25 is a blocker for a script that runs, so each one is
 * followed by its mode and by the files that run things unattended (units, rc.local, crontabs,
 * if-up.d, networkd-dispatcher) naming it — `### runby <file>` — which tells a boot- or
 * cron-time script from one an operator typed once and left in a home directory. Read as root
 * (/root, the user crontabs).
 */
export const QOS_SCRIPTS_SCRIPT = `for f in /usr/local/sbin/* /usr/local/bin/* /etc/rc.local /etc/systemd/system/*.service /etc/network/if-up.d/* /etc/networkd-dispatcher/*/* /root/*.sh /home/*/*.sh; do
  [ -f "$f" ] || continue
  grep -qE '(^|[^[:alnum:]_-])(mlnx_qos|dcb)([[:space:]]|$)' "$f" 2>/dev/null || continue
  echo "### file $f"
  cat "$f"
  echo
  echo "### mode $(stat -c %a "$f")"
  for c in /etc/rc.local /etc/systemd/system/*.service /etc/crontab /etc/cron.d/* /var/spool/cron/crontabs/* /etc/network/if-up.d/* /etc/networkd-dispatcher/*/*; do
    if [ -f "$c" ] && [ "$c" != "$f" ] && grep -qF -- "\${f##*/}" "$c" 2>/dev/null; then echo "### runby $c"; fi
  done
done
exit 0
`;

export const qosProbes: readonly ProbeDef[] = [
  ...FABRIC_PROBES,
  // mlnx_qos runs only where `command -v` found it; dcb (iproute2) is the fallback every PF is read with.
  { id: 'qos', command: { script: QOS_STATE_SCRIPT }, sudo: true, tools: ['lspci', 'dcb'] },
  { id: 'persistence', command: { script: QOS_PERSISTENCE_SCRIPT }, tools: ['systemctl'] },
  { id: 'scripts', command: { script: QOS_SCRIPTS_SCRIPT }, sudo: true },
  { id: 'nccl-conf', command: { argv: ['cat', '/etc/nccl.conf'] } },
];
