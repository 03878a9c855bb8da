/**
 * How the bonding driver's state reads (bonding.ts holds it): `/proc/net/bonding/<bond>` (bond_procfs.c
 * of 5.15, checked against the corpus samples `proc-net-bonding__balance-xor-*` and
 * `…802.3ad-ubuntu-6.8-root-churn…`), and the bond parts of `ip -d link` — MASTER/SLAVE flags and
 * `linkinfo` (iproute2 5.15 iplink_bond.c / iplink_bond_slave.c: source-derived, checked against
 * `ip-d-link__bond0-balance-xor-down-mail-wrapped.txt`). LACP partners are the ports at the other end
 * of each cable when they are members of an 802.3ad bond there.
 */
import type { BondInfo, Machine, NetDev } from '../model/types.js';
import { dir, file, type VDir } from '../fs/vfs.js';
import { BOND_MODES, XMIT_HASH, clusterOf, isBond } from './bonding.js';
import { netdev } from './netdev-ops.js';

// ---- LACP (802.3ad) ----

/** 802.3ad port key: duplex bit | speed class << 1 (AD_LINK_SPEED_25000MBPS = 10). */
const KEY_25G = (10 << 1) | 1;

interface LacpPort {
  slave: string;
  aggregator: number;
  partnerMac: string;
  partnerKey: number;
  partnerPort: number;
  partnerState: number;
  actorState: number;
}

function lacpPorts(m: Machine, bond: NetDev & { bond: BondInfo }): LacpPort[] {
  const cluster = clusterOf(m);
  // Aggregator ids are global: one per 802.3ad member, numbered in bond creation order.
  const lacpBonds = m.netdevs.filter((d): d is NetDev & { bond: BondInfo } => isBond(d) && d.bond.mode === '802.3ad');
  let base = 0;
  for (const b of lacpBonds) {
    if (b === bond) break;
    base += b.bond.slaves.length;
  }
  const fast = bond.bond.lacpRate === 'fast';
  const ports = bond.bond.slaves.map((s, i): LacpPort => {
    const end = cluster?.peer(m.hostname, s);
    const pm = end ? cluster?.machine(end.host) : undefined;
    const pd = pm && end ? netdev(pm, end.ifname) : undefined;
    const pb = pm && pd?.master ? netdev(pm, pd.master) : undefined;
    const partnered = m.carrier(s) && isBond(pb) && pb.bond.mode === '802.3ad';
    const own = base + i + 1;
    if (!partnered || !isBond(pb)) {
      return {
        slave: s,
        aggregator: own,
        partnerMac: '00:00:00:00:00:00',
        partnerKey: 1,
        partnerPort: 1,
        partnerState: 1,
        actorState: fast ? 71 : 69,
      };
    }
    return {
      slave: s,
      aggregator: own,
      partnerMac: pb.mac,
      partnerKey: KEY_25G,
      partnerPort: pb.bond.slaves.indexOf(pd!.name) + 1,
      partnerState: pb.bond.lacpRate === 'fast' ? 63 : 61,
      actorState: fast ? 63 : 61,
    };
  });
  // Ports with the same partner system join the aggregator of the first of them.
  for (const p of ports) {
    if (p.partnerMac === '00:00:00:00:00:00') continue;
    const first = ports.find((q) => q.partnerMac === p.partnerMac);
    if (first) p.aggregator = first.aggregator;
  }
  return ports;
}

function activeAggregator(m: Machine, ports: LacpPort[]): { id: number; members: LacpPort[] } | undefined {
  const up = ports.filter((p) => m.carrier(p.slave));
  if (up.length === 0) return undefined;
  const groups = new Map<number, LacpPort[]>();
  for (const p of up) groups.set(p.aggregator, [...(groups.get(p.aggregator) ?? []), p]);
  const best = [...groups.entries()].sort((a, b) => {
    const pa = a[1][0]!.partnerMac !== '00:00:00:00:00:00' ? 1 : 0;
    const pb = b[1][0]!.partnerMac !== '00:00:00:00:00:00' ? 1 : 0;
    return pb - pa || b[1].length - a[1].length || a[0] - b[0];
  })[0]!;
  return { id: best[0], members: best[1] };
}

// ---- /proc/net/bonding/<bond> ----

export function renderProcBonding(m: Machine, bond: NetDev & { bond: BondInfo }, root: boolean): string {
  const info = bond.bond;
  const mode = BOND_MODES[info.mode] ?? BOND_MODES['balance-rr']!;
  const carrier = m.carrier(bond.name);
  let s = `Ethernet Channel Bonding Driver: v${m.os.kernelRelease}\n\n`;
  s += `Bonding Mode: ${mode.proc}\n`;
  if (mode.usesHash) s += `Transmit Hash Policy: ${info.xmitHashPolicy} (${XMIT_HASH[info.xmitHashPolicy] ?? 0})\n`;
  if (mode.usesPrimary) {
    const active = info.slaves.find((x) => m.carrier(x));
    s += `Primary Slave: None\nCurrently Active Slave: ${active ?? 'None'}\n`;
  }
  s += `MII Status: ${carrier ? 'up' : 'down'}\n`;
  s += `MII Polling Interval (ms): ${info.miimon}\n`;
  s += `Up Delay (ms): ${info.updelay}\nDown Delay (ms): ${info.downdelay}\nPeer Notification Delay (ms): 0\n`;
  const ports = info.mode === '802.3ad' ? lacpPorts(m, bond) : [];
  if (info.mode === '802.3ad') {
    s += `\n802.3ad info\nLACP active: on\nLACP rate: ${info.lacpRate}\nMin links: 0\nAggregator selection policy (ad_select): stable\n`;
    if (root) {
      s += `System priority: 65535\nSystem MAC address: ${bond.mac}\n`;
      const agg = activeAggregator(m, ports);
      if (!agg) s += `bond ${bond.name} has no active aggregator\n`;
      else {
        const p0 = agg.members[0]!;
        s +=
          `Active Aggregator Info:\n\tAggregator ID: ${agg.id}\n\tNumber of ports: ${agg.members.length}\n\tActor Key: ${KEY_25G}\n` +
          `\tPartner Key: ${p0.partnerKey}\n\tPartner Mac Address: ${p0.partnerMac}\n`;
      }
    }
  }
  info.slaves.forEach((name, i) => {
    const d = netdev(m, name);
    const up = m.carrier(name);
    s += `\nSlave Interface: ${name}\nMII Status: ${up ? 'up' : 'down'}\n`;
    s += up ? `Speed: ${d?.linkSpeedMbps ?? 25000} Mbps\nDuplex: full\n` : 'Speed: Unknown\nDuplex: Unknown\n';
    s += `Link Failure Count: 0\nPermanent HW addr: ${d?.permMac ?? d?.mac ?? ''}\nSlave queue ID: 0\n`;
    const p = ports[i];
    if (p) {
      s += `Aggregator ID: ${p.aggregator}\nActor Churn State: none\nPartner Churn State: none\nActor Churned Count: 0\nPartner Churned Count: 0\n`;
      if (root) {
        s +=
          `details actor lacp pdu:\n    system priority: 65535\n    system mac address: ${bond.mac}\n    port key: ${KEY_25G}\n` +
          `    port priority: 255\n    port number: ${i + 1}\n    port state: ${p.actorState}\n`;
        s +=
          `details partner lacp pdu:\n    system priority: 65535\n    system mac address: ${p.partnerMac}\n    oper key: ${p.partnerKey}\n` +
          `    port priority: 255\n    port number: ${p.partnerPort}\n    port state: ${p.partnerState}\n`;
      }
    }
  });
  return s;
}

/** `/proc/net/bonding`: one file per bond; `root` decides whether the 802.3ad details show. */
export function procNetBonding(m: Machine, root: () => boolean): VDir {
  return dir(() =>
    Object.fromEntries(m.netdevs.filter(isBond).map((b) => [b.name, file(() => renderProcBonding(m, b, root()))])),
  );
}

// ---- ip -d link: flags, master and linkinfo ----

/** MASTER / SLAVE, placed where iproute2's flag order puts them (after MULTICAST). */
export function bondFlag(d: NetDev): string | undefined {
  if (isBond(d)) return 'MASTER';
  if (d.master) return 'SLAVE';
  return undefined;
}

const LACP_STATE_BITS = [
  'active',
  'short_timeout',
  'aggregating',
  'in_sync',
  'collecting',
  'distributing',
  'defaulted',
  'expired',
];
const stateStr = (n: number): string[] => LACP_STATE_BITS.filter((_, i) => (n >> i) & 1);

/** `linkinfo` of `ip -j -d link` for a bond or a bond member; undefined for other devices. */
export function bondLinkinfo(m: Machine, d: NetDev): Record<string, unknown> | undefined {
  if (isBond(d)) {
    const info = d.bond;
    const data: Record<string, unknown> = { mode: info.mode };
    if (BOND_MODES[info.mode]?.usesPrimary) {
      const active = info.slaves.find((x) => m.carrier(x));
      if (active) data.active_slave = active;
    }
    Object.assign(data, {
      miimon: info.miimon,
      updelay: info.updelay,
      downdelay: info.downdelay,
      peer_notify_delay: 0,
      use_carrier: 1,
      arp_interval: 0,
      arp_validate: 'none',
      arp_all_targets: 'any',
      primary_reselect: 'always',
      fail_over_mac: 'none',
      xmit_hash_policy: info.xmitHashPolicy,
      resend_igmp: 1,
      num_peer_notif: 1,
      all_slaves_active: 0,
      min_links: 0,
      lp_interval: 1,
      packets_per_slave: 1,
      ad_lacp_active: 'on',
      ad_lacp_rate: info.lacpRate,
      ad_select: 'stable',
    });
    if (info.mode === '802.3ad') {
      const agg = activeAggregator(m, lacpPorts(m, d));
      if (agg) {
        const p0 = agg.members[0]!;
        data.ad_info = {
          aggregator: agg.id,
          num_ports: agg.members.length,
          actor_key: KEY_25G,
          partner_key: p0.partnerKey,
          partner_mac: p0.partnerMac,
        };
      }
      Object.assign(data, { ad_actor_sys_prio: 65535, ad_user_port_key: 0, ad_actor_system: '00:00:00:00:00:00' });
    }
    data.tlb_dynamic_lb = 1;
    return { info_kind: 'bond', info_data: data };
  }
  const bond = d.master ? netdev(m, d.master) : undefined;
  if (!isBond(bond)) return undefined;
  const up = m.carrier(d.name);
  const backup = BOND_MODES[bond.bond.mode]?.usesPrimary && bond.bond.slaves.find((x) => m.carrier(x)) !== d.name;
  const data: Record<string, unknown> = {
    state: backup ? 'BACKUP' : 'ACTIVE',
    mii_status: up ? 'UP' : 'DOWN',
    link_failure_count: 0,
    perm_hwaddr: d.permMac ?? d.mac,
    queue_id: 0,
  };
  if (bond.bond.mode === '802.3ad') {
    const p = lacpPorts(m, bond).find((x) => x.slave === d.name);
    if (p) {
      Object.assign(data, {
        ad_aggregator_id: p.aggregator,
        ad_actor_oper_port_state: p.actorState,
        ad_actor_oper_port_state_str: stateStr(p.actorState),
        ad_partner_oper_port_state: p.partnerState,
        ad_partner_oper_port_state_str: stateStr(p.partnerState),
      });
    }
  }
  return { info_slave_kind: 'bond', info_slave_data: data };
}

/** The text line(s) `ip -d link` prints for the same data (one line, as iproute2 prints it). */
export function bondLinkinfoText(m: Machine, d: NetDev): string | undefined {
  const li = bondLinkinfo(m, d);
  if (!li) return undefined;
  if (li.info_kind === 'bond') {
    const x = li.info_data as Record<string, unknown>;
    let s = `bond mode ${String(x.mode)} `;
    if (x.active_slave) s += `active_slave ${String(x.active_slave)} `;
    s +=
      `miimon ${String(x.miimon)} updelay ${String(x.updelay)} downdelay ${String(x.downdelay)} peer_notify_delay 0 use_carrier 1 arp_interval 0 ` +
      `arp_validate none arp_all_targets any primary_reselect always fail_over_mac none xmit_hash_policy ${String(x.xmit_hash_policy)} ` +
      `resend_igmp 1 num_grat_arp 1 all_slaves_active 0 min_links 0 lp_interval 1 packets_per_slave 1 lacp_active on lacp_rate ${String(x.ad_lacp_rate)} ad_select stable `;
    const ad = x.ad_info as Record<string, unknown> | undefined;
    if (ad)
      s += `ad_aggregator ${String(ad.aggregator)} ad_num_ports ${String(ad.num_ports)} ad_actor_key ${String(ad.actor_key)} ad_partner_key ${String(ad.partner_key)} ad_partner_mac ${String(ad.partner_mac)} `;
    if (x.ad_actor_sys_prio !== undefined)
      s += 'ad_actor_sys_prio 65535 ad_user_port_key 0 ad_actor_system 00:00:00:00:00:00 ';
    return `${s}tlb_dynamic_lb 1 `;
  }
  const x = li.info_slave_data as Record<string, unknown>;
  let s = `bond_slave state ${String(x.state)} mii_status ${String(x.mii_status)} link_failure_count 0 perm_hwaddr ${String(x.perm_hwaddr)} queue_id 0 `;
  if (x.ad_aggregator_id !== undefined) {
    s +=
      `ad_aggregator_id ${String(x.ad_aggregator_id)} ad_actor_oper_port_state ${String(x.ad_actor_oper_port_state)} ` +
      `ad_actor_oper_port_state_str <${(x.ad_actor_oper_port_state_str as string[]).join(',')}> ` +
      `ad_partner_oper_port_state ${String(x.ad_partner_oper_port_state)} ad_partner_oper_port_state_str <${(x.ad_partner_oper_port_state_str as string[]).join(',')}> `;
  }
  return s;
}
