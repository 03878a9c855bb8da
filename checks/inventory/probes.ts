/**
 * The inventory stage's read-only probes (docs/STAGES.md §3.1). Each is one command whose output one
 * parser reads. Scripts are constants (no config value is ever spliced in); names are discovered.
 */
import type { ProbeDef } from '../../src/engine/types.js';
import { INVENTORY_GPU_FIELDS } from '../../src/parse/nvidia-smi-query-gpu.js';

/** Every GPU and NIC function and every bridge above them: `lspci -vv` plus the sysfs NUMA node. */
export const PCIE_SCRIPT = `devs=$( { lspci -D -d 10de:; lspci -D -d 15b3:; } | cut -d' ' -f1)
all=
for d in $devs; do
  echo "pci_path $d $(readlink -f "/sys/bus/pci/devices/$d")"
  for seg in $(readlink -f "/sys/bus/pci/devices/$d" | tr / ' '); do
    case $seg in ????:??:??.?) all="$all $seg";; esac
  done
done
for b in $(printf '%s\\n' $all | sort -u); do
  lspci -D -vv -s "$b"
  echo "numa_node $b $(cat /sys/bus/pci/devices/$b/numa_node)"
done
`;

export const SYSFS_NET_SCRIPT = `for i in /sys/class/net/*; do echo "$i $(readlink -f $i/device)"; done
`;

export const ETHTOOL_SCRIPT = `for b in $(lspci -D -d 15b3: | cut -d' ' -f1); do
  for n in /sys/bus/pci/devices/$b/net/*; do
    i=\${n##*/}
    echo "### ethtool $i"; ethtool "$i"
    echo "### ethtool-i $i"; ethtool -i "$i"
  done
done
`;

/** IPv6 all-nodes ping per fabric port that is up, then the neighbour table: peer MACs per port. */
export const NEIGHBOUR_SCRIPT = `for b in $(lspci -D -d 15b3: | cut -d' ' -f1); do
  for n in /sys/bus/pci/devices/$b/net/*; do
    i=\${n##*/}
    [ "$(cat /sys/class/net/$i/operstate 2>/dev/null)" = up ] || { echo "### neigh $i down"; continue; }
    ping -6 -c 2 -W 1 -I "$i" ff02::1 >/dev/null 2>&1
    echo "### neigh $i"; ip -6 -j neigh show dev "$i"
  done
done
`;

export const SSH_CONNECTION_SCRIPT = 'echo "$SSH_CONNECTION"\n';

/** Packages whose versions later stages compare across hosts. */
export const STACK_PACKAGES = [
  'rdma-core',
  'ibverbs-providers',
  'perftest',
  'infiniband-diags',
  'mlnx-ofed-kernel-dkms',
  'doca-ofed',
  'nvidia-driver-580-open',
  'nvidia-driver-570-open',
  'nvidia-driver-535',
  'cuda-toolkit',
  'libnccl2',
  'lldpd',
];

export const inventoryProbes: readonly ProbeDef[] = [
  { id: 'os-release', command: { argv: ['cat', '/etc/os-release'] } },
  { id: 'kernel', command: { argv: ['uname', '-r'] } },
  { id: 'lscpu', command: { argv: ['lscpu', '-J'] } },
  { id: 'meminfo', command: { argv: ['cat', '/proc/meminfo'] } },
  { id: 'lspci-nics', command: { argv: ['lspci', '-D', '-nn', '-d', '15b3:'] } },
  { id: 'lspci-gpus', command: { argv: ['lspci', '-D', '-nn', '-d', '10de:'] } },
  { id: 'pcie', command: { script: PCIE_SCRIPT }, sudo: true, tools: ['lspci'] },
  { id: 'ip-link', command: { argv: ['ip', '-j', '-d', 'link', 'show'] } },
  { id: 'ip-addr', command: { argv: ['ip', '-j', 'addr', 'show'] } },
  { id: 'sysfs-net', command: { script: SYSFS_NET_SCRIPT } },
  // The same machine listed under two names would pass every pair check against itself.
  { id: 'machine-id', command: { argv: ['cat', '/etc/machine-id'] } },
  { id: 'ssh-connection', command: { script: SSH_CONNECTION_SCRIPT } },
  { id: 'route-default', command: { argv: ['ip', '-j', 'route', 'show', 'default'] } },
  { id: 'rdma-link', command: { argv: ['rdma', 'link', 'show'] } },
  { id: 'ethtool', command: { script: ETHTOOL_SCRIPT }, tools: ['lspci', 'ethtool'] },
  { id: 'topo', command: { argv: ['nvidia-smi', 'topo', '-m'] }, tools: [] }, // without a driver: PCI paths
  // Absent on the inbox stack (no MLNX_OFED): its absence is an answer, not a missing tool.
  { id: 'ofed-info', command: { argv: ['ofed_info', '-s'] }, tools: [] },
  {
    id: 'dpkg',
    command: { argv: ['dpkg-query', '-W', '-f=${db:Status-Abbrev} ${Package} ${Version}\\n', ...STACK_PACKAGES] },
  },
  { id: 'nvidia-version', command: { argv: ['cat', '/proc/driver/nvidia/version'] } },
  {
    id: 'gpu-query',
    tools: [],
    command: { argv: ['nvidia-smi', `--query-gpu=${INVENTORY_GPU_FIELDS.join(',')}`, '--format=csv,noheader,nounits'] },
  },
  // lldpd's control socket is root:_lldpd 0660: an ordinary login user cannot read it.
  { id: 'lldp', command: { argv: ['lldpcli', '-f', 'json', 'show', 'neighbors'] }, sudo: true },
  { id: 'neighbours', command: { script: NEIGHBOUR_SCRIPT }, tools: ['lspci', 'ip'] },
];
