/**
 * `bare`: the packages of the tools the probes use are not installed — as `dpkg --remove
 * --force-depends` leaves a host (conffiles kept as `rc`, nothing else touched). A tool exists exactly
 * while one of its packages is installed (tools/index.ts), so bash answers `bash: lspci: command not
 * found` (127), sudo `sudo: lspci: command not found` (1), `command -v` fails and the absolute path
 * (/usr/bin/lspci) does not exist. Composes after any other scenario (`fresh+bare`, `ready+bare`).
 */
import { removeInModel } from '../apt/model-install.js';
import type { Cluster } from '../model/cluster.js';

/** The packages taken away, with the probe commands they carry. */
export const BARE_PACKAGES: ReadonlyArray<{ name: RegExp; commands: readonly string[] }> = [
  { name: /^pciutils$/, commands: ['lspci', 'setpci'] },
  { name: /^iproute2$/, commands: ['ip', 'rdma', 'ss', 'dcb'] },
  { name: /^ethtool$/, commands: ['ethtool'] },
  // systemd-sysv depends on systemd (its reboot and shutdown are links to systemctl).
  { name: /^systemd(-sysv)?$/, commands: ['systemctl', 'journalctl', 'systemd-run', 'reboot', 'shutdown'] },
  { name: /^nvidia-utils-\d+(-server)?$/, commands: ['nvidia-smi'] },
];

export function bare(cluster: Cluster): void {
  for (const m of cluster.machines) {
    for (const name of [...m.packages.keys()]) {
      if (BARE_PACKAGES.some((p) => p.name.test(name))) removeInModel(m, name);
    }
  }
}
