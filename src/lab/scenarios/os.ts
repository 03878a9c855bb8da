/**
 * Scenario parts for the os stage (STAGES.md §4.4).
 *
 * `ready`: what os.install-base and os.holds leave — the base packages with the
 * dependencies apt pulls (chrony having replaced systemd-timesyncd, so the clock is synchronized),
 * the kernel metapackages held (the gpu-driver part holds its own packages); the memlock limits file
 * is among the recorded files (ready/). `tutorial`: the recipe's `apt install` line as far as this stage is concerned — ntp
 * (which replaces systemd-timesyncd), ifenslave (pulling ifupdown), ibutils, net-tools, htop, tmux;
 * its RDMA packages belong to the nic-stack part (MLNX_OFED replaces them). No memlock file, nothing held.
 */
import { BASE_PACKAGES, KERNEL_HOLDS } from '../../../checks/os/probes.js';
import { aptInstallInModel } from '../apt/model-install.js';
import type { Cluster } from '../model/cluster.js';

export function ready(cluster: Cluster): void {
  for (const m of cluster.machines) {
    aptInstallInModel(m, [...BASE_PACKAGES]);
    for (const name of KERNEL_HOLDS) {
      const p = m.packages.get(name);
      if (p) p.status = `h${p.status.slice(1)}`;
    }
    m.revision++;
  }
}

/** The tutorial's `sudo apt install -y …` minus the RDMA packages (see the nic-stack part). */
const TUTORIAL_PACKAGES = ['ibutils', 'iputils-ping', 'net-tools', 'ethtool', 'ifenslave', 'ntp', 'htop', 'tmux'];

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    aptInstallInModel(m, TUTORIAL_PACKAGES);
    m.revision++;
  }
}
