/** The nic-stack stage's read-only probes (docs/STAGES.md §3.3). Names are discovered; scripts are constants. */
import type { ProbeDef } from '../../src/engine/types.js';
import { FABRIC_PROBES } from '../common/fabric.js';
import { DPKG_FORMAT } from '../os/probes.js';

/** The inbox RoCE userspace (Ubuntu's rdma-core family); MLNX_OFED and DOCA ship packages of the same names. */
export const INBOX_PACKAGES = ['rdma-core', 'ibverbs-utils', 'rdmacm-utils', 'infiniband-diags', 'perftest'] as const;
/** Packages that exist only with an out-of-tree stack (versions compared across hosts). */
export const OFED_PACKAGES = [
  'mlnx-ofed-kernel-utils',
  'mlnx-ofed-kernel-dkms',
  'ofed-scripts',
  'mlnx-tools',
  'doca-ofed',
  'mlnx-ofed-all',
] as const;

/** `ethtool -i` of every ConnectX function's netdev (sections the inventory collector reads). */
export const ETHTOOL_I_SCRIPT = `for b in $(lspci -D -d 15b3: | cut -d' ' -f1); do
  for n in /sys/bus/pci/devices/$b/net/*; do
    i=\${n##*/}
    echo "### ethtool-i $i"; ethtool -i "$i"
  done
done
`;

/** Only what names the PFs and their RDMA devices: no neighbour pings (this stage does not need the cabling). */
const FABRIC_NAMES = new Set([
  'lspci-nics',
  'ip-link',
  'ip-addr',
  'sysfs-net',
  'ssh-connection',
  'route-default',
  'rdma-link',
]);

export const nicStackProbes: readonly ProbeDef[] = [
  ...FABRIC_PROBES.filter((p) => FABRIC_NAMES.has(p.id)),
  { id: 'kernel', command: { argv: ['uname', '-r'] } },
  // Absent on the inbox stack (no MLNX_OFED): its absence is an answer, not a missing tool.
  { id: 'ofed-info', command: { argv: ['ofed_info', '-s'] }, tools: [] },
  { id: 'ethtool', command: { script: ETHTOOL_I_SCRIPT }, tools: ['lspci', 'ethtool'] },
  { id: 'modinfo', command: { argv: ['modinfo', '-F', 'version', 'mlx5_core'] } },
  { id: 'packages', command: { argv: ['dpkg-query', '-W', DPKG_FORMAT, ...INBOX_PACKAGES, ...OFED_PACKAGES] } },
  { id: 'ibv-devices', command: { argv: ['ibv_devices'] } },
  { id: 'ibv-devinfo', command: { argv: ['ibv_devinfo'] } },
];
