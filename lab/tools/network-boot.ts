/**
 * What a reboot does to the network (docs/STAGES.md §4.3 "reboot … drops runtime state (… non-netplan
 * addresses …)"): at shutdown every bond disappears (the RoCE LAG with it), links go down with
 * their addresses, routes, neighbours and MTUs, and the firewall is unloaded; at boot systemd-networkd
 * brings up what the netplan files describe and ufw.service loads its rules when ENABLED=yes. A
 * configuration netplan rejects leaves the links down — management included.
 */
import type { Machine } from '../model/types.js';
import { registerBootHook } from '../system/boot.js';
import { deleteBond, isBond } from './bonding.js';
import { notifyManagement } from './mgmt-path.js';
import { clearFlaps, flushAddresses } from './netdev-ops.js';
import { applyFromFiles } from './netplan.js';
import { loadFirewall } from './ufw.js';

/** The network as the kernel has it before any configuration runs. */
export function networkShutdown(m: Machine): void {
  for (const b of m.netdevs.filter(isBond)) deleteBond(m, b);
  for (const d of m.netdevs) {
    if (d.linkType === 'loopback') continue;
    flushAddresses(m, d);
    d.adminUp = false;
    if (d.driver === 'mlx5_core' || d.driver === 'igb') d.mtu = 1500;
  }
  m.routes = [];
  m.renderedBy?.clear(); // both backends start from nothing at boot
  m.neighbors = [];
  m.firewall = { active: false, allowIn: [] };
  clearFlaps(m);
  m.revision++;
}

registerBootHook('shutdown', 'network', ({ machine }) => networkShutdown(machine));

registerBootHook('network', 'netplan', async ({ machine, system, cluster }) => {
  if (!cluster) return;
  // systemd-networkd and ufw.service read their files as root.
  const rootFs = system.shell.fsAs(0);
  await applyFromFiles(machine, cluster, rootFs);
  await loadFirewall(machine, rootFs);
  clearFlaps(machine);
  notifyManagement(machine);
});
