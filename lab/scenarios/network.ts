/**
 * Scenario parts for the network stage (docs/STAGES.md §4.4).
 *
 * `ready`: the running state network.apply, network.mgmt-routes and network.firewall leave for
 * design A — cable k's subnet 192.168.10k.0/24 on both ends (host i = .i), MTU 9000, links up. The
 * files (60-l20-fabric.yaml, the management file with a default route, ufw's) are the recorded ones
 * (ready/), which also give the loaded firewall.
 * `tutorial`: the recipe's /etc/netplan/02-bond-roce.yaml (0644, as an editor leaves it) applied —
 * a 4-port balance-xor bond0 on 192.168.100.i/24 (lacp-rate dropped by networkd, no RoCE LAG),
 * the installer's management file with gateway4, the firewall off.
 * `networkManager`: management rendered by NetworkManager, as on Ubuntu desktop and cloud images.
 */
import { parseDocument } from 'yaml';
import type { Cluster } from '../model/cluster.js';
import type { Machine, NetDev } from '../model/types.js';
import { mgmtNetplan } from '../fs/rootfs.js';
import { createBond, enslave, registerCluster } from '../tools/bonding.js';
import { addAddress, clearFlaps, setLinkUp } from '../tools/netdev-ops.js';

function fabricPorts(m: Machine): NetDev[] {
  return m.netdevs.filter((d) => d.driver === 'mlx5_core').sort((a, b) => (a.pci ?? '').localeCompare(b.pci ?? ''));
}

/** Cable k (1-based) of a port: the position of node 1's end among node 1's ports. */
function cableIndex(cluster: Cluster, m: Machine, port: string): number | undefined {
  const first = cluster.machines[0];
  if (!first) return undefined;
  const end = m === first ? { host: m.hostname, ifname: port } : cluster.peer(m.hostname, port);
  if (!end || end.host !== first.hostname) return undefined;
  const i = fabricPorts(first).findIndex((d) => d.name === end.ifname);
  return i < 0 ? undefined : i + 1;
}

function setFile(m: Machine, path: string, content: string, mode: number): void {
  (m.files ??= new Map()).set(path, { content, mode });
}

export function ready(cluster: Cluster): void {
  registerCluster(cluster);
  for (const m of cluster.machines) {
    for (const d of fabricPorts(m)) {
      const k = cableIndex(cluster, m, d.name);
      if (k === undefined) continue;
      d.mtu = 9000;
      setLinkUp(m, d);
      addAddress(m, d, { family: 'inet', local: `192.168.${100 + k}.${m.index}`, prefixlen: 24 });
    }
    clearFlaps(m);
    m.revision++;
  }
}

/** The tutorial's 02-bond-roce.yaml, its address set for host i as the comment asks. */
export function tutorialBondFile(i: number): string {
  return `# /etc/netplan/02-bond-roce.yaml
network:
  version: 2
  ethernets:
    ens1f0: { mtu: 9000 }
    ens1f1: { mtu: 9000 }
    ens2f0: { mtu: 9000 }
    ens2f1: { mtu: 9000 }
  bonds:
    bond0:
      interfaces: [ens1f0, ens1f1, ens2f0, ens2f1]
      parameters:
        mode: balance-xor
        mii-monitor-interval: 100
        transmit-hash-policy: layer3+4
        lacp-rate: fast
      mtu: 9000
      addresses: [192.168.100.${i}/24] # 另一台用192.168.100.2
`;
}

export function tutorial(cluster: Cluster): void {
  registerCluster(cluster);
  for (const m of cluster.machines) {
    const ports = fabricPorts(m);
    // networkd passes lacp-rate only in 802.3ad: the kernel keeps slow (R18).
    const bond = createBond(m, 'bond0', { mode: 'balance-xor', miimon: 100, xmitHashPolicy: 'layer3+4' });
    bond.mtu = 9000;
    for (const d of ports) {
      d.mtu = 9000;
      enslave(m, bond, d);
    }
    setLinkUp(m, bond);
    addAddress(m, bond, { family: 'inet', local: `192.168.100.${m.index}`, prefixlen: 24 });
    setFile(m, '/etc/netplan/02-bond-roce.yaml', tutorialBondFile(m.index), 0o644);
    clearFlaps(m);
    m.revision++;
  }
}

/** `mtu-mismatch`: node 2 `ens1f1` MTU 1500 (active_mtu 1024). */
export function mtuMismatch(cluster: Cluster): void {
  const d = cluster.machines[1]?.netdevs.find((x) => x.name === 'ens1f1');
  if (d) d.mtu = 1500;
}

/** `link-down`: cable 4 (`ens2f1 ↔ ens2f1`) unplugged. */
export function linkDown(cluster: Cluster): void {
  for (const c of cluster.cables) if (c.a.ifname === 'ens2f1' && c.b.ifname === 'ens2f1') c.plugged = false;
}

/** Ubuntu desktop's /etc/netplan/01-network-manager-all.yaml, as the installer writes it. */
export const NETWORK_MANAGER_ALL = '/etc/netplan/01-network-manager-all.yaml';
export const NETWORK_MANAGER_ALL_TEXT =
  '# Let NetworkManager manage all devices on this system\nnetwork:\n  version: 2\n  renderer: NetworkManager\n';

/**
 * `networkmanager`: NetworkManager runs and renders management: 01-network-manager-all.yaml's top-level
 * `renderer: NetworkManager`, and the management file (whatever the scenario before left) without its
 * own top-level renderer. Everything else stays as the scenario before it left it.
 */
export function networkManager(cluster: Cluster): void {
  for (const m of cluster.machines) {
    const path = '/etc/netplan/01-netcfg.yaml';
    const doc = parseDocument(m.files?.get(path)?.content ?? mgmtNetplan(m));
    doc.deleteIn(['network', 'renderer']);
    setFile(m, path, doc.toString({ indentSeq: false, lineWidth: 0 }), 0o600);
    setFile(m, NETWORK_MANAGER_ALL, NETWORK_MANAGER_ALL_TEXT, 0o600);
    m.networkManager = true;
    (m.renderedBy ??= new Map()).set(m.mgmt.ifname, 'NetworkManager');
    m.revision++;
  }
}
