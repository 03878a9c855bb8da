/**
 * Scenario parts for the nic-stack stage (docs/STAGES.md §4.4).
 *
 * `ready`: what nic-stack.install-inbox leaves once a reboot followed — Ubuntu's rdma-core family
 * installed (the recorded dpkg database, ready/) and the RDMA devices renamed `rocep…` by its udev rule.
 * `tutorial`: the recipe's MLNX_OFED, as the nearest real build (23.10-1.1.9.0; the recipe's
 * 23.10-1.1.8.0 was never published) installed with mlnxofedinstall and loaded: OFED's own rdma-core
 * keeps the kernel's `mlx5_N` names, and ofed_info, ibdev2netdev and mlnx_qos exist.
 */
import type { Cluster } from '../model/cluster.js';
import { MLNX_OFED_23_10_PACKAGES, OPENIBD_SCRIPT, nameRdmaDevices, putPackages } from '../model/nic-stack.js';

export function ready(cluster: Cluster): void {
  for (const m of cluster.machines) nameRdmaDevices(m);
}

/** What MLNX_OFED's uninstaller removes (a reduced /usr/sbin/ofed_uninstall.sh). */
const OFED_UNINSTALL = `#!/bin/bash
# ofed_uninstall.sh: remove the MLNX_OFED packages (the l20-setup lab's reduced version)
if [ "$1" != --force ]; then echo "This program will uninstall all MLNX_OFED packages on your machine."; echo "Do you want to continue?[y/N]:"; read -r a; [ "$a" = y ] || exit 1; fi
env DEBIAN_FRONTEND=noninteractive apt-get remove --purge -y ${MLNX_OFED_23_10_PACKAGES.map(([n]) => n).join(' ')}
`;

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    putPackages(m, MLNX_OFED_23_10_PACKAGES);
    m.ofed = { flavor: 'mlnx_ofed', version: '23.10-1.1.9.0', loaded: true };
    m.files ??= new Map();
    m.files.set('/etc/init.d/openibd', { content: OPENIBD_SCRIPT, mode: 0o755 });
    m.files.set('/usr/sbin/ofed_uninstall.sh', { content: OFED_UNINSTALL, mode: 0o755 });
    nameRdmaDevices(m);
  }
}
