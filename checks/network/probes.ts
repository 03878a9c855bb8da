/**
 * The network stage's read-only probes (docs/STAGES.md §3.4). The fabric discovery every stage repeats
 * (FABRIC_PROBES) plus what only this stage reads: the netplan files with their modes, the merged
 * view netplan itself computes, the bonding driver's state and the firewall. (LLDP, as root, is part
 * of the shared fabric probes.)
 * Scripts are constants; nothing from the configuration is spliced into them.
 */
import type { ProbeDef } from '../../src/engine/types.js';
import { FABRIC_PROBES } from '../common/fabric.js';

/** The file network.write owns. */
export const FABRIC_FILE = '/etc/netplan/60-l20-fabric.yaml';
/** Where network.write leaves the configuration as it was before its write, until network.apply confirms. */
export const PENDING_DIR = '/var/lib/l20-setup/netplan/pending';
export const NETPLAN_STATE = '/var/lib/l20-setup/netplan';
/** The same pre-write files unpacked: what management was rendered from before the write (read by the probe). */
export const PENDING_FILES = `${PENDING_DIR}/files`;
export const ROLLBACK_SCRIPT = '/usr/local/sbin/l20-netplan-rollback';

/**
 * Every /etc/netplan/*.yaml as `### file <path> <mode>` then its content; whether a pre-write snapshot
 * waits, and its files as `### pending-file <path> <mode>`.
 */
export const NETPLAN_FILES_SCRIPT = `for f in /etc/netplan/*.yaml; do
  [ -e "$f" ] || continue
  echo "### file $f $(stat -c %a "$f")"
  cat "$f"
  echo
done
if [ -f ${PENDING_DIR}/netplan.tar ]; then
  echo "### pending ${PENDING_DIR}/netplan.tar"
  for f in ${PENDING_FILES}/*.yaml; do
    [ -e "$f" ] || continue
    echo "### pending-file $f $(stat -c %a "$f")"
    cat "$f"
    echo
  done
fi
`;

/** /proc/net/bonding/<bond> for every bond, as `### bond <name>` sections. */
export const BONDING_SCRIPT = `for b in /proc/net/bonding/*; do
  [ -e "$b" ] || continue
  echo "### bond \${b##*/}"
  cat "$b"
done
`;

export const networkProbes: readonly ProbeDef[] = [
  ...FABRIC_PROBES,
  { id: 'netplan-files', command: { script: NETPLAN_FILES_SCRIPT }, sudo: true },
  { id: 'netplan-get', command: { argv: ['netplan', 'get'] }, sudo: true },
  { id: 'bonding', command: { script: BONDING_SCRIPT }, sudo: true },
  { id: 'ip-bond', command: { argv: ['ip', '-d', 'link', 'show', 'type', 'bond'] } },
  { id: 'ufw', command: { argv: ['ufw', 'status', 'verbose'] }, sudo: true },
];
