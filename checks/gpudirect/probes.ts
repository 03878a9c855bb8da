/** The gpudirect stage's read-only probes (docs/STAGES.md §3.8). Scripts are constants. */
import type { ProbeDef } from '../../src/engine/types.js';
import { PCIE_SCRIPT } from '../inventory/probes.js';

/** Where modules are persisted: systemd-modules-load reads modules-load.d and Debian's /etc/modules. */
export const MODULES_LOAD_SCRIPT = `for f in /etc/modules-load.d/*.conf /etc/modules; do
  [ -f "$f" ] || continue
  echo "### file $f"
  cat "$f"
done
true
`;

/** NCCL_DMABUF_ENABLE=0 anywhere NCCL reads its configuration turns the DMA-BUF path off. */
export const DMABUF_ENV_SCRIPT = `for f in /etc/nccl.conf "$HOME/.nccl.conf" /etc/environment; do
  [ -f "$f" ] && grep -H 'NCCL_DMABUF_ENABLE' "$f"
done
true
`;

/** Peer-memory load failures and the IOMMU domain type, from the kernel log (root: dmesg_restrict). */
export const DMESG_SCRIPT = `dmesg | grep -iE 'peermem|ib_register_peer_memory_client|Default domain type'
true
`;

export const PEERMEM_CONF = '/etc/modules-load.d/nvidia-peermem.conf';
export const ACS_SCRIPT_PATH = '/usr/local/sbin/l20-acs-off';
export const ACS_UNIT = 'l20-acs-off.service';
export const ACS_UNIT_PATH = `/etc/systemd/system/${ACS_UNIT}`;
export const IOMMU_GRUB_FILE = '/etc/default/grub.d/90-l20-iommu.cfg';

export const gpudirectProbes: readonly ProbeDef[] = [
  { id: 'kernel', command: { argv: ['uname', '-r'] } },
  { id: 'nvidia-version', command: { argv: ['cat', '/proc/driver/nvidia/version'] } },
  // /proc/modules, not lsmod: Debian keeps lsmod in /usr/sbin, off an ordinary login's PATH.
  { id: 'modules', command: { argv: ['cat', '/proc/modules'] } },
  { id: 'modules-load', command: { script: MODULES_LOAD_SCRIPT } },
  // Absent on the inbox stack (no MLNX_OFED): its absence is an answer, not a missing tool.
  { id: 'ofed-info', command: { argv: ['ofed_info', '-s'] }, tools: [] },
  { id: 'dmabuf-env', command: { script: DMABUF_ENV_SCRIPT } },
  { id: 'cmdline', command: { argv: ['cat', '/proc/cmdline'] } },
  { id: 'dmesg', command: { script: DMESG_SCRIPT }, sudo: true, tools: ['dmesg'] },
  { id: 'pcie', command: { script: PCIE_SCRIPT }, sudo: true, tools: ['lspci'] },
  // nvidia-smi comes with the driver: without it the answer is "no driver loaded".
  { id: 'topo', command: { argv: ['nvidia-smi', 'topo', '-m'] }, tools: [] },
  { id: 'p2p', command: { argv: ['nvidia-smi', 'topo', '-p2p', 'r'] }, tools: [] },
  { id: 'rdma-link', command: { argv: ['rdma', 'link', 'show'] } },
  { id: 'acs-unit', command: { argv: ['systemctl', 'is-enabled', ACS_UNIT] } },
];
