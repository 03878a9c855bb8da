import { describe, expect, it } from 'vitest';
import { mergeIpJson, parseIpJson, parseIpRoute } from '../../src/parse/ip-json.js';
import { ansiWrap, CUTS, loadFixture, toCrlf, truncateAt, withPrompt } from './fixtures.js';

const NETPLAN = 'corpus/ip-d-j-addr__netplan-test-fixture-laptop-wg-sit-tun.txt';
const TEXT_LINK = 'corpus/ip-d-link__bond0-balance-xor-down-mail-wrapped.txt';

// `ip -j -d link show` (iproute2 5.15, jammy) on a node in design B: ens1f0/ens1f1 enslaved to bond0
// (802.3ad), the bond MAC on both members, their own MAC in perm_hwaddr.
const LINK_BOND = JSON.stringify([
  {
    ifindex: 1,
    ifname: 'lo',
    flags: ['LOOPBACK', 'UP', 'LOWER_UP'],
    mtu: 65536,
    qdisc: 'noqueue',
    operstate: 'UNKNOWN',
    linkmode: 'DEFAULT',
    group: 'default',
    txqlen: 1000,
    link_type: 'loopback',
    address: '00:00:00:00:00:00',
    broadcast: '00:00:00:00:00:00',
    promiscuity: 0,
    min_mtu: 0,
    max_mtu: 0,
    inet6_addr_gen_mode: 'eui64',
    num_tx_queues: 1,
    num_rx_queues: 1,
    gso_max_size: 65536,
    gso_max_segs: 65535,
  },
  {
    ifindex: 2,
    ifname: 'eno1',
    flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
    mtu: 1500,
    qdisc: 'mq',
    operstate: 'UP',
    linkmode: 'DEFAULT',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: '3c:ec:ef:10:20:30',
    broadcast: 'ff:ff:ff:ff:ff:ff',
    promiscuity: 0,
    min_mtu: 68,
    max_mtu: 9702,
    inet6_addr_gen_mode: 'eui64',
    num_tx_queues: 64,
    num_rx_queues: 64,
    gso_max_size: 65536,
    gso_max_segs: 65535,
    parentbus: 'pci',
    parentdev: '0000:03:00.0',
    altnames: ['enp3s0f0'],
  },
  {
    ifindex: 4,
    ifname: 'ens1f0',
    flags: ['BROADCAST', 'MULTICAST', 'SLAVE', 'UP', 'LOWER_UP'],
    mtu: 9000,
    qdisc: 'mq',
    master: 'bond0',
    operstate: 'UP',
    linkmode: 'DEFAULT',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: '0c:42:a1:5e:11:a0',
    broadcast: 'ff:ff:ff:ff:ff:ff',
    promiscuity: 0,
    min_mtu: 68,
    max_mtu: 9978,
    linkinfo: {
      info_slave_kind: 'bond',
      info_slave_data: {
        state: 'ACTIVE',
        mii_status: 'UP',
        link_failure_count: 0,
        perm_hwaddr: '0c:42:a1:5e:11:a0',
        queue_id: 0,
        ad_aggregator_id: 1,
        ad_actor_oper_port_state: 61,
        ad_partner_oper_port_state: 61,
      },
    },
    inet6_addr_gen_mode: 'none',
    num_tx_queues: 96,
    num_rx_queues: 24,
    gso_max_size: 65536,
    gso_max_segs: 65535,
    parentbus: 'pci',
    parentdev: '0000:1a:00.0',
    altnames: ['enp26s0f0np0'],
  },
  {
    ifindex: 5,
    ifname: 'ens1f1',
    flags: ['BROADCAST', 'MULTICAST', 'SLAVE', 'UP', 'LOWER_UP'],
    mtu: 9000,
    qdisc: 'mq',
    master: 'bond0',
    operstate: 'UP',
    linkmode: 'DEFAULT',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: '0c:42:a1:5e:11:a0',
    broadcast: 'ff:ff:ff:ff:ff:ff',
    promiscuity: 0,
    min_mtu: 68,
    max_mtu: 9978,
    linkinfo: {
      info_slave_kind: 'bond',
      info_slave_data: {
        state: 'ACTIVE',
        mii_status: 'UP',
        link_failure_count: 0,
        perm_hwaddr: '0C:42:A1:5E:11:A1',
        queue_id: 0,
        ad_aggregator_id: 1,
      },
    },
    inet6_addr_gen_mode: 'none',
    num_tx_queues: 96,
    num_rx_queues: 24,
    gso_max_size: 65536,
    gso_max_segs: 65535,
    parentbus: 'pci',
    parentdev: '0000:1a:00.1',
  },
  {
    ifindex: 8,
    ifname: 'bond0',
    flags: ['BROADCAST', 'MULTICAST', 'MASTER', 'UP', 'LOWER_UP'],
    mtu: 9000,
    qdisc: 'noqueue',
    operstate: 'UP',
    linkmode: 'DEFAULT',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: '0c:42:a1:5e:11:a0',
    broadcast: 'ff:ff:ff:ff:ff:ff',
    promiscuity: 0,
    min_mtu: 68,
    max_mtu: 65535,
    linkinfo: {
      info_kind: 'bond',
      info_data: {
        mode: '802.3ad',
        miimon: 100,
        updelay: 0,
        downdelay: 0,
        peer_notify_delay: 0,
        use_carrier: 1,
        arp_interval: 0,
        arp_validate: null,
        arp_all_targets: 'any',
        primary_reselect: 'always',
        fail_over_mac: 'none',
        xmit_hash_policy: 'layer3+4',
        resend_igmp: 1,
        num_peer_notif: 1,
        all_slaves_active: 0,
        min_links: 0,
        lp_interval: 1,
        packets_per_slave: 1,
        ad_lacp_rate: 'fast',
        ad_select: 'stable',
        tlb_dynamic_lb: 1,
      },
    },
    inet6_addr_gen_mode: 'eui64',
    num_tx_queues: 16,
    num_rx_queues: 16,
    gso_max_size: 65536,
    gso_max_segs: 65535,
  },
]);

// `ip -j addr show` for the same host (no -d): kernel order of addresses, link-local last for v6.
const ADDR = JSON.stringify([
  {
    ifindex: 2,
    ifname: 'eno1',
    flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
    mtu: 1500,
    qdisc: 'mq',
    operstate: 'UP',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: '3c:ec:ef:10:20:30',
    broadcast: 'ff:ff:ff:ff:ff:ff',
    addr_info: [
      {
        family: 'inet',
        local: '10.0.0.100',
        prefixlen: 24,
        broadcast: '10.0.0.255',
        scope: 'global',
        label: 'eno1',
        valid_life_time: 4294967295,
        preferred_life_time: 4294967295,
      },
      {
        family: 'inet6',
        local: 'fe80::3eec:efff:fe10:2030',
        prefixlen: 64,
        scope: 'link',
        valid_life_time: 4294967295,
        preferred_life_time: 4294967295,
      },
    ],
  },
  {
    ifindex: 8,
    ifname: 'bond0',
    flags: ['BROADCAST', 'MULTICAST', 'MASTER', 'UP', 'LOWER_UP'],
    mtu: 9000,
    qdisc: 'noqueue',
    operstate: 'UP',
    group: 'default',
    txqlen: 1000,
    link_type: 'ether',
    address: '0c:42:a1:5e:11:a0',
    broadcast: 'ff:ff:ff:ff:ff:ff',
    addr_info: [
      {
        family: 'inet',
        local: '192.168.10.1',
        prefixlen: 24,
        broadcast: '192.168.10.255',
        scope: 'global',
        label: 'bond0',
        valid_life_time: 4294967295,
        preferred_life_time: 4294967295,
      },
      {
        family: 'inet6',
        local: 'fe80::e42:a1ff:fe5e:11a0',
        prefixlen: 64,
        scope: 'link',
        tentative: true,
        valid_life_time: 4294967295,
        preferred_life_time: 4294967295,
      },
    ],
  },
]);

describe('parseIpJson', () => {
  it('reads the netplan ip -d -j addr fixture (lo, ethernet, wifi, wireguard, sit, tun)', () => {
    const { netdevs, error } = parseIpJson(loadFixture(NETPLAN));
    expect(error).toBeUndefined();
    expect(netdevs.map((n) => n.ifname)).toEqual(['lo', 'enp0s31f6', 'wlan0', 'wg0', 'wwan0', 'tun0', 'tun1']);
    const enp = netdevs[1];
    expect(enp).toMatchObject({
      ifindex: 2,
      mtu: 1500,
      operstate: 'UP',
      mac: '54:e1:ad:5f:24:b4',
      linkType: 'ether',
      parentbus: 'pci',
      parentdev: '0000:00:1f.6',
    });
    expect(enp?.addresses?.map((a) => a.local)).toEqual([
      '192.168.178.62',
      '2001:9e8:a19f:1c00:56e1:adff:fe5f:24b4',
      'fe80::56e1:adff:fe5f:24b4',
    ]);
    expect(enp?.addresses?.[0]).toEqual({
      family: 'inet',
      local: '192.168.178.62',
      prefixlen: 24,
      scope: 'global',
      label: 'enp0s31f6',
      dynamic: true,
    });
    expect(netdevs[3]).toMatchObject({
      ifname: 'wg0',
      linkKind: 'wireguard',
      addresses: [{ local: '10.10.0.2', prefixlen: 24 }],
    });
    expect(netdevs[3]?.mac).toBeUndefined();
    expect(netdevs[4]?.addresses).toEqual([]);
    // tun0's `address` is an IPv4 address (sit tunnel), not a MAC.
    expect(netdevs[5]).toMatchObject({ ifname: 'tun0', linkType: 'sit', linkKind: 'sit' });
    expect(netdevs[5]?.mac).toBeUndefined();
    // tun1 has no addr_info at all: addresses are absent, not empty.
    expect(netdevs[6]?.addresses).toBeUndefined();
  });

  it('reads bonds and their members from ip -j -d link', () => {
    const { netdevs } = parseIpJson(LINK_BOND);
    const byName = Object.fromEntries(netdevs.map((n) => [n.ifname, n]));
    expect(byName['bond0']).toMatchObject({
      linkKind: 'bond',
      bond: { mode: '802.3ad', miimon: 100, xmitHashPolicy: 'layer3+4', lacpRate: 'fast' },
      mtu: 9000,
    });
    expect(byName['ens1f0']).toMatchObject({
      master: 'bond0',
      linkKind: 'bond_slave',
      slaveKind: 'bond',
      slaveState: 'ACTIVE',
      slaveMiiStatus: 'UP',
      mac: '0c:42:a1:5e:11:a0',
      permMac: '0c:42:a1:5e:11:a0',
      altnames: ['enp26s0f0np0'],
      parentdev: '0000:1a:00.0',
    });
    // Both members show the bond's MAC; the second one's own MAC is only in perm_hwaddr.
    expect(byName['ens1f1']).toMatchObject({ mac: '0c:42:a1:5e:11:a0', permMac: '0c:42:a1:5e:11:a1' });
    expect(byName['eno1']?.addresses).toBeUndefined();
    expect(byName['eno1']?.linkKind).toBeUndefined();
  });

  it('merges link and addr outputs by name, keeping address order', () => {
    const merged = mergeIpJson(parseIpJson(LINK_BOND), parseIpJson(ADDR));
    const bond = merged.netdevs.find((n) => n.ifname === 'bond0');
    expect(bond?.linkKind).toBe('bond');
    expect(bond?.addresses).toEqual([
      { family: 'inet', local: '192.168.10.1', prefixlen: 24, scope: 'global', label: 'bond0' },
      { family: 'inet6', local: 'fe80::e42:a1ff:fe5e:11a0', prefixlen: 64, scope: 'link', tentative: true },
    ]);
    expect(merged.netdevs).toHaveLength(5);
  });

  it('returns an error instead of throwing for empty, [] and non-JSON output', () => {
    expect(parseIpJson('')).toEqual({ netdevs: [], error: 'empty output' });
    expect(parseIpJson('[]')).toEqual({ netdevs: [] });
    expect(parseIpJson('Device "ens9f0" does not exist.').error).toBeDefined();
    expect(parseIpJson('{"a":1}').error).toBe('expected a JSON array of interfaces');
    const text = parseIpJson(loadFixture(TEXT_LINK));
    expect(text.netdevs).toEqual([]);
    expect(text.error).toBeDefined();
  });

  it('survives CRLF, ANSI, pretty-printing and a prompt', () => {
    const base = parseIpJson(LINK_BOND);
    const pretty = JSON.stringify(JSON.parse(LINK_BOND), null, 4);
    for (const v of [
      toCrlf(pretty),
      ansiWrap(pretty),
      withPrompt(LINK_BOND, 'ip -j -d link show'),
      `${LINK_BOND}\nuser@l20-n1:~$ `,
    ]) {
      expect(parseIpJson(v).netdevs).toEqual(base.netdevs);
    }
  });

  it('keeps the complete interfaces of a truncated output', () => {
    const full = parseIpJson(loadFixture(NETPLAN)).netdevs;
    for (const cut of CUTS) {
      const f = parseIpJson(truncateAt(loadFixture(NETPLAN), cut));
      expect(f.netdevs.length).toBeLessThanOrEqual(full.length);
      f.netdevs.forEach((n, i) => expect(n).toEqual(full[i]));
      if (f.netdevs.length > 0) expect(f.partial).toBe(true);
    }
    expect(parseIpJson(truncateAt(loadFixture(NETPLAN), 0.75)).netdevs.length).toBeGreaterThanOrEqual(3);
  });
});

describe('parseIpRoute', () => {
  it('reads the default route', () => {
    const text = '[{"dst":"default","gateway":"10.0.0.1","dev":"eno1","protocol":"static","flags":[]}]\n';
    expect(parseIpRoute(text)).toEqual({
      routes: [{ dst: 'default', gateway: '10.0.0.1', dev: 'eno1', protocol: 'static' }],
      gateway: '10.0.0.1',
      dev: 'eno1',
    });
  });

  it('takes the first of several defaults (DHCP metric order)', () => {
    const text = JSON.stringify([
      {
        dst: 'default',
        gateway: '10.0.0.1',
        dev: 'eno1',
        protocol: 'dhcp',
        prefsrc: '10.0.0.100',
        metric: 100,
        flags: [],
      },
      { dst: 'default', gateway: '192.168.10.254', dev: 'bond0', protocol: 'static', metric: 200, flags: [] },
    ]);
    const f = parseIpRoute(withPrompt(text, 'ip -j route show default'));
    expect(f).toMatchObject({ gateway: '10.0.0.1', dev: 'eno1' });
    expect(f.routes[0]).toMatchObject({ metric: 100, prefsrc: '10.0.0.100' });
  });

  it('reports no default route and bad input without throwing', () => {
    expect(parseIpRoute('[]')).toEqual({ routes: [] });
    expect(parseIpRoute('')).toEqual({ routes: [], error: 'empty output' });
    expect(parseIpRoute('[{"dst":"default","gat').error).toBeDefined();
  });
});
