/**
 * What `netplan apply` (networkd backend) does to the machine, from the merged configuration
 * (docs/STAGES.md §4.3 "netplan apply"):
 *
 * - bonds are created or updated (the mode only while they have no members; lacp_rate only in
 *   802.3ad), their members enslaved (bond MAC on the members, ≈2 s carrier flap), RoCE LAG formed
 *   when the membership allows it (bonding.ts);
 * - every described device is brought up with exactly its addresses (networkd drops foreign
 *   ones), its MTU (a bond passes its MTU to its members) and its static routes (`gateway4`,
 *   `routes:`); IPv6 link-local comes with the link (the kernel's, or networkd's where addrgenmode is none);
 * - each definition is configured by its renderer (netplan-config.ts): networkd always runs; a
 *   NetworkManager one is left unconfigured where NetworkManager does not run (Machine.networkManager).
 *   A device handed from one backend to the other loses its addresses and routes first (the old
 *   backend deconfigures it) before the new one configures it;
 * - nothing is deleted: a virtual device no file describes stays with its members and addresses
 *   (netplan-apply(8) KNOWN ISSUES, R23), and its members are left alone; devices no longer
 *   described keep what they had (networkd stops managing them).
 *
 * The GID tables follow from the addresses and memberships (the RDMA model reads them).
 */
import type { Cluster } from '../model/cluster.js';
import type { Machine, NetDev, Route } from '../model/types.js';
import { createBond, enslave, isBond, registerCluster, release, setBondMtu, updateBondParams } from './bonding.js';
import type { NetplanConfig } from './netplan-config.js';
import { netdev, networkdLinkLocal, setAddresses, setLinkUp, setMtu } from './netdev-ops.js';

/** What an apply changed, for `--debug` style notes and tests. */
export interface ApplySummary {
  createdBonds: string[];
  enslaved: string[];
  configured: string[];
  /** Members of bonds no file describes (left as they are). */
  stale: string[];
  /** Devices whose renderer changed (deconfigured by the old backend first). */
  handedOver: string[];
}

function staticRoutes(
  dev: NetDev,
  gateway4: string | undefined,
  routes: ReadonlyArray<{ to: string; via: string }>,
): Route[] {
  const out: Route[] = [];
  if (gateway4) out.push({ dst: 'default', gateway: gateway4, dev: dev.name, protocol: 'static' });
  for (const r of routes) {
    const dst = r.to === '0.0.0.0/0' || r.to === 'default' ? 'default' : r.to;
    if (dst === 'default' && gateway4) continue;
    out.push({ dst, gateway: r.via, dev: dev.name, protocol: 'static' });
  }
  return out;
}

export function applyNetplan(m: Machine, cluster: Cluster, cfg: NetplanConfig): ApplySummary {
  registerCluster(cluster);
  const summary: ApplySummary = { createdBonds: [], enslaved: [], configured: [], stale: [], handedOver: [] };
  const described = new Set(cfg.netdefs.map((n) => n.name));
  // Bonds first, so members can be enslaved to them.
  for (const nd of cfg.netdefs.filter((n) => n.type === 'bond' && n.bond)) {
    let bond = netdev(m, nd.name);
    if (!bond) {
      bond = createBond(m, nd.name, nd.bond!);
      summary.createdBonds.push(nd.name);
    } else if (isBond(bond)) updateBondParams(m, bond, nd.bond!);
    if (!isBond(bond)) continue;
    if (nd.mtu !== undefined) setBondMtu(m, bond, nd.mtu);
    for (const name of nd.interfaces) {
      const port = netdev(m, name);
      if (!port || port.master === nd.name) continue;
      if (port.adminUp) port.adminUp = false; // networkd takes a link down to enslave it
      enslave(m, bond, port);
      summary.enslaved.push(name);
    }
    // Members this bond's definition no longer lists are released.
    for (const s of [...bond.bond.slaves]) {
      if (nd.interfaces.includes(s)) continue;
      const port = netdev(m, s);
      if (port) release(m, bond.name, port);
    }
  }
  const renderedBy = (m.renderedBy ??= new Map());
  for (const nd of cfg.netdefs) {
    const dev = netdev(m, nd.name);
    if (!dev) continue;
    const was = renderedBy.get(nd.name);
    if (was !== undefined && was !== nd.renderer) {
      setAddresses(m, dev, []);
      m.routes = m.routes.filter((r) => r.dev !== dev.name);
      renderedBy.delete(nd.name);
      summary.handedOver.push(nd.name);
    }
    if (nd.renderer === 'NetworkManager' && !m.networkManager) continue; // no NetworkManager: nothing renders it
    renderedBy.set(nd.name, nd.renderer);
    if (dev.master && !described.has(dev.master)) {
      // Enslaved to a bond no file describes: networkd leaves the membership (and the bond) alone.
      summary.stale.push(nd.name);
      continue;
    }
    setLinkUp(m, dev);
    if (dev.master) {
      summary.configured.push(nd.name);
      continue; // members carry no addresses; their MTU follows the bond
    }
    if (nd.mtu !== undefined && !isBond(dev)) setMtu(m, dev, nd.mtu);
    setAddresses(m, dev, nd.addresses);
    networkdLinkLocal(m, dev);
    const want = staticRoutes(dev, nd.gateway4, nd.routes);
    m.routes = [...m.routes.filter((r) => !(r.dev === dev.name && r.protocol === 'static')), ...want];
    summary.configured.push(nd.name);
  }
  m.revision++;
  return summary;
}
