/**
 * Scenario parts for the os stage (docs/STAGES.md §4.4).
 *
 * `ready`: what os.install-base, os.memlock and os.holds leave — the base packages with the
 * dependencies apt pulls (chrony having replaced systemd-timesyncd, so the clock is synchronized),
 * the memlock limits file, the kernel metapackages held — is the recorded dpkg database and files
 * (ready/): nothing for this part to set.
 * `tutorial`: the recipe's `apt install` line as far as this stage is concerned — ntp (which replaces
 * systemd-timesyncd), ifenslave (pulling ifupdown), ibutils, net-tools, htop, tmux;
 * its RDMA packages belong to the nic-stack part (MLNX_OFED replaces them). No memlock file, nothing held.
 */
import { aptInstallInModel } from '../apt/model-install.js';
import type { Cluster } from '../model/cluster.js';

export function ready(_cluster: Cluster): void {
  // Nothing beyond the recorded packages and files.
}

/** The tutorial's `sudo apt install -y …` minus the RDMA packages (see the nic-stack part). */
const TUTORIAL_PACKAGES = ['ibutils', 'iputils-ping', 'net-tools', 'ethtool', 'ifenslave', 'ntp', 'htop', 'tmux'];

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    aptInstallInModel(m, TUTORIAL_PACKAGES);
    m.revision++;
  }
}
