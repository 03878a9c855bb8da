/** Output rules on the RDMA / NIC / host-software kinds: raised where the sample warrants, silent elsewhere. */
import { describe, expect, it } from 'vitest';
import { lineAt, run, sample } from './rdma-helpers.js';
import { loadFixture } from '../parse/fixtures.js';

const rules = (fs: Array<{ rule: string }>): string[] => fs.map((f) => f.rule);

describe('D08 RDMA port not active', () => {
  it('ibstat: each Down/Disabled port, named, with its State line', () => {
    const { findings, text } = sample('ibstat', 'ibstat__h100-cx7-ib-400g-cx6dx-eth-ports-down.txt');
    expect(rules(findings)).toEqual(['D08', 'D08', 'D08']);
    expect(findings.map((f) => f.evidence)).toEqual([
      'mlx5_2 port 1 (Ethernet): State: Down, Physical state: Disabled',
      'mlx5_7 port 1 (Ethernet): State: Down, Physical state: Disabled',
      'mlx5_8 port 1 (Ethernet): State: Down, Physical state: Disabled',
    ]);
    expect(findings[0]!.severity).toBe('high');
    expect(lineAt(text, findings[0]!.line)).toBe('State: Down');
    expect(findings[0]!.fix).toContain('admin-down');
    expect(findings[0]!.fix).toContain('mlx5_2');
  });
  it('ibstat: Polling names the carrier cause', () => {
    const { findings } = sample('ibstat', 'ibstat__h100-cx7-roce-port-physstate-polling.txt');
    expect(findings.map((f) => f.evidence)).toEqual([
      'mlx5_11 port 1 (Ethernet): State: Down, Physical state: Polling',
      'mlx5_5 port 1 (Ethernet): State: Down, Physical state: Disabled',
    ]);
    expect(findings[0]!.fix).toContain('no carrier');
  });
  it('ibstat: the netdev is named in the fix when the text maps it', () => {
    const text = `${loadFixture('corpus/ibstat__h100-cx7-roce-two-ports-disabled.txt')}\nmlx5_5 port 1 ==> ens5np0 (Down)\n`;
    const d = run('ibstat', text).findings.find((f) => f.evidence.startsWith('mlx5_5'))!;
    expect(d.fix).toContain('ip link set dev ens5np0 up');
  });
  it('ibstat: all-active samples raise nothing', () => {
    for (const f of [
      'ibstat__h100-cx7-roce-400g-plus-cx6dx-eth.txt',
      'ibstat__a100-vm-mt4126-vf-mixed-eth-ib.txt',
      'ibstat__h100-cx7-ib-plus-bluefield3-mlx5_bond_0.txt',
      'ibstat__a100-azure-vm-mt4124-ibpanic-error.txt',
    ]) {
      expect(sample('ibstat', f).findings, f).toEqual([]);
    }
  });
  it('ibstatus: 1: DOWN / 2: Polling', () => {
    const { findings, text } = sample(
      'ibstatus',
      'ibstatus__cx3-mlx4-fdr10-port1-active-port2-down-polling-raw-tabs.txt',
    );
    expect(findings).toHaveLength(1);
    expect(findings[0]!.evidence).toBe('mlx4_0 port 2 (InfiniBand): state: 1: DOWN, phys state: 2: Polling');
    expect(lineAt(text, findings[0]!.line)).toMatch(/^state:\s+1: DOWN$/);
    expect(sample('ibstatus', 'ibstatus__a100-azure-vm-hdr-200.txt').findings).toEqual([]);
  });
  it('rdma link: DOWN/DISABLED ports with their netdev in the fix', () => {
    const { findings, text } = sample('rdma-link', 'rdma-link__gb10-cx7-inbox-rocep-names-2up-2down.txt');
    expect(findings.map((f) => f.evidence.split(':')[0])).toEqual([
      'rocep1s0f1 port 1 (Ethernet)',
      'roceP2p1s0f1 port 1 (Ethernet)',
    ]);
    expect(findings[0]!.fix).toContain('ip link set dev enp1s0f1np1 up');
    expect(lineAt(text, findings[0]!.line)).toContain('link rocep1s0f1/1 state DOWN physical_state DISABLED');
    expect(sample('rdma-link', 'rdma-link__ib-ports-no-netdev-trailing-space-high-index.txt').findings).toEqual([]);
  });
  it('ibv_devinfo: PORT_DOWN; the active excerpt raises nothing', () => {
    const text = [
      'hca_id:\tmlx5_1',
      '\ttransport:\t\t\tInfiniBand (0)',
      '\t\tport:\t1',
      '\t\t\tstate:\t\t\tPORT_DOWN (1)',
      '\t\t\tlink_layer:\t\tEthernet',
      '\t\t\tphys_state:\t\tDISABLED (3)',
    ].join('\n');
    const { findings } = run('ibv_devinfo', text);
    expect(rules(findings)).toEqual(['D08']);
    expect(findings[0]!.evidence).toBe('mlx5_1 port 1 (Ethernet): state: PORT_DOWN (1), phys_state: DISABLED (3)');
    expect(
      sample('ibv_devinfo', 'ibv_devinfo-v__mofed4-exp-verbs-roce-10g-1x-gid-no-type-EXCERPT.txt').findings,
    ).toEqual([]);
  });
});

describe('D19 no RoCE v2 GID with IPv4 on an active port', () => {
  const devinfo = (gids: string[]): string =>
    [
      'hca_id:\tmlx5_0',
      '\ttransport:\t\t\tInfiniBand (0)',
      '\t\tport:\t1',
      '\t\t\tstate:\t\t\tPORT_ACTIVE (4)',
      '\t\t\tlink_layer:\t\tEthernet',
      ...gids.map((g, i) => `\t\t\tGID[  ${i}]:\t\t${g}`),
    ].join('\n');
  it('ibv_devinfo -v: only link-local GIDs → D19', () => {
    const { findings } = run(
      'ibv_devinfo',
      devinfo(['fe80::ba59:9fff:fe3b:353c, RoCE v1', 'fe80::ba59:9fff:fe3b:353c, RoCE v2']),
    );
    expect(rules(findings)).toEqual(['D19']);
    expect(findings[0]!.severity).toBe('high');
    expect(findings[0]!.evidence).toContain('mlx5_0 port 1');
  });
  it('ibv_devinfo -v: an IPv4 GID typed v1 only still fires; v2 with IPv4 does not', () => {
    expect(rules(run('ibv_devinfo', devinfo(['fe80::1, RoCE v1', '::ffff:10.0.0.1, RoCE v1'])).findings)).toEqual([
      'D19',
    ]);
    expect(run('ibv_devinfo', devinfo(['fe80::1, RoCE v1', '::ffff:10.0.0.1, RoCE v2'])).findings).toEqual([]);
  });
  it('show_gids alone does not show port state: no finding', () => {
    expect(sample('show_gids', 'show_gids__cx4-eth-plus-ib-port-no-ipv4.txt').findings).toEqual([]);
    expect(sample('show_gids', 'show_gids__tabs-raw-huawei-hrn3-bond-plus-mlx5_bond_0-no-ipv4.txt').findings).toEqual(
      [],
    );
  });
  it('show_gids with the port state in the same text: active port without v2 IPv4 fires, down ports are skipped', () => {
    const gids = loadFixture('corpus/show_gids__gb10-cx7-rocep-names-masked.txt');
    const links = loadFixture('corpus/rdma-link__gb10-cx7-inbox-rocep-names-2up-2down.txt');
    expect(run('show_gids', `${gids}\n${links}`).findings).toEqual([]);
    const up = links.replace(
      'rocep1s0f1/1 state DOWN physical_state DISABLED',
      'rocep1s0f1/1 state ACTIVE physical_state LINK_UP',
    );
    const { findings } = run('show_gids', `${gids}\n${up}`);
    expect(rules(findings)).toEqual(['D19']);
    expect(findings[0]!.evidence).toMatch(/^rocep1s0f1 port 1 \(enp1s0f1np1\)/);
    expect(findings[0]!.fix).toContain('enp1s0f1np1');
  });
});

describe('D11 lossless QoS', () => {
  it('PFC on prio 5 while DSCP 26 maps to prio 3', () => {
    const { findings, text } = sample('mlnx_qos', 'mlnx_qos__cx7-dscp-pfc5-ets-strict-default-priority.txt');
    expect(rules(findings)).toEqual(['D11']);
    expect(findings[0]!.severity).toBe('medium');
    expect(findings[0]!.evidence).toContain('DSCP 26 → prio 3');
    expect(findings[0]!.evidence).toContain('enabled 0 0 0 0 0 1 0 0');
    expect(lineAt(text, findings[0]!.line)).toMatch(/^enabled\s+0\s+0\s+0\s+0\s+0\s+1/);
    expect(findings[0]!.fix).toContain('--trust dscp --pfc 0,0,0,1,0,0,0,0');
  });
  it('trust pcp', () => {
    const { findings } = sample('mlnx_qos', 'mlnx_qos__pcp-trust-pfc3-vendor-tsa.txt');
    expect(rules(findings)).toEqual(['D11']);
    expect(findings[0]!.evidence).toContain('Priority trust state: pcp');
    expect(findings[0]!.fix).toContain('mlnx_qos -i ens14f0 --trust dscp');
  });
  it('PFC off on all priorities', () => {
    const { findings } = sample('mlnx_qos', 'mlnx_qos__very-old-mofed-pfc-only-skprio-tos-lines.txt');
    expect(rules(findings)).toEqual(['D11']);
    expect(findings[0]!.evidence).toContain('enabled 0 0 0 0 0 0 0 0');
    expect(findings[0]!.fix).toContain('mlnx_qos -i eth35');
  });
  it('trust dscp + PFC on prio 3 (DSCP 26 → 3): nothing', () => {
    expect(sample('mlnx_qos', 'mlnx_qos__dscp-default-map-pfc3-vendor-tsa.txt').findings).toEqual([]);
  });
});

describe('D10 bond degraded', () => {
  it('one slave down, no LACP partner, other aggregator, churned', () => {
    const { findings, text } = sample('bonding', 'proc-net-bonding__802.3ad-one-slave-down-no-lacp-partner-rhel7.txt');
    expect(findings.every((f) => f.rule === 'D10' && f.severity === 'high')).toBe(true);
    const titles = findings.map((f) => f.title);
    expect(titles).toContain('Bond degraded: slave enp1s0f0 is down');
    expect(titles).toContain('Bond degraded: no LACP partner (the peer does not speak LACP)');
    expect(titles).toContain('Bond degraded: slave enp1s0f0 is outside the active aggregator');
    expect(titles).toContain('Bond degraded: LACP churned (negotiation failed)');
    const down = findings.find((f) => f.title.includes('is down'))!;
    expect(down.evidence).toBe('Slave Interface: enp1s0f0 / MII Status: down');
    expect(lineAt(text, down.line)).toBe('MII Status: down');
  });
  it('no active aggregator', () => {
    const { findings } = sample('bonding', 'proc-net-bonding__802.3ad-no-active-aggregator-agg-id-na.txt');
    expect(findings.map((f) => f.evidence)).toEqual(['bond bond0 has no active aggregator']);
  });
  it('insights fixture: slave down + churned', () => {
    const titles = sample('bonding', 'proc-net-bonding__802.3ad-root-details-one-slave-down-churned.txt').findings.map(
      (f) => f.title,
    );
    expect(titles).toContain('Bond degraded: slave enp0s8 is down');
    expect(titles).toContain('Bond degraded: LACP churned (negotiation failed)');
  });
  it('healthy bonds raise nothing', () => {
    for (const f of [
      'proc-net-bonding__802.3ad-bluefield3-200g-p0-p1-no-agg-info.txt',
      'proc-net-bonding__802.3ad-ubuntu-6.8-root-churn-monitoring-containerlab.txt',
      'proc-net-bonding__802.3ad-wsl2-6.6-nonroot-no-agg-info.txt',
      'proc-net-bonding__active-backup-10g-primary-none-v3.7.1.txt',
      'proc-net-bonding__active-backup-arp-monitor-primary-reselect-flapping.txt',
      'proc-net-bonding__active-backup-ubuntu22-hyperv-miimon0.txt',
      'proc-net-bonding__balance-rr-debian12-6.1-virtualbox.txt',
      'proc-net-bonding__balance-xor-cumulus-doc-odd-blank-lines.txt',
      'proc-net-bonding__balance-xor-layer2+3-2slaves-up-v3.7.1.txt',
    ]) {
      expect(sample('bonding', f).findings, f).toEqual([]);
    }
  });
  it('a bond without slaves; unequal slave speeds', () => {
    const empty =
      'Ethernet Channel Bonding Driver: v5.15.0-70-generic\n\nBonding Mode: load balancing (xor)\nTransmit Hash Policy: layer3+4 (1)\nMII Status: down\nMII Polling Interval (ms): 100\nUp Delay (ms): 0\nDown Delay (ms): 0\nPeer Notification Delay (ms): 0\n';
    expect(run('bonding', empty).findings.map((f) => f.title)).toEqual(['Bond degraded: the bond has no slaves']);
    const mixed = `${empty.replace('MII Status: down', 'MII Status: up')}\nSlave Interface: ens1f0\nMII Status: up\nSpeed: 25000 Mbps\n\nSlave Interface: ens1f1\nMII Status: up\nSpeed: 10000 Mbps\n`;
    const f = run('bonding', mixed).findings;
    expect(f.map((x) => x.title)).toEqual(['Bond degraded: slaves run at unequal speeds']);
    expect(f[0]!.evidence).toBe('ens1f0: Speed: 25000 Mbps; ens1f1: Speed: 10000 Mbps');
  });
});

describe('D09 Ethernet link', () => {
  it('link down with reason and unknown speed', () => {
    const { findings, text } = sample('ethtool', 'ethtool__cx4-100g-qsfp28-forced-40g-unsupported-cable.txt');
    expect(rules(findings)).toEqual(['D09']);
    expect(findings[0]!.evidence).toBe(
      'ens16f1np1: Link detected: no (Cable issue, Unsupported cable); Speed: Unknown!',
    );
    expect(lineAt(text, findings[0]!.line)).toBe('Link detected: no (Cable issue, Unsupported cable)');
    expect(findings[0]!.fix).toContain('ethtool -m ens16f1np1');
  });
  it('25G port at 10G', () => {
    const { findings } = sample('ethtool', 'ethtool__cx4lx-25g-at-10g-centos-old-ethtool-fec-BaseR.txt');
    expect(findings[0]!.evidence).toBe('p4p2: Speed: 10000Mb/s < 25000Mb/s supported (25000baseCR/Full)');
  });
  it('25G at 25G: nothing', () => {
    expect(sample('ethtool', 'ethtool__intel-xxv710-25g-dac-autoneg-off.txt').findings).toEqual([]);
  });
});

describe('D12 pause storm or drops', () => {
  it('show_counters out_of_buffer 135', () => {
    const { findings, text } = sample('show_counters', 'show_counters__mlx5_0-roce-hw-counters-nonzero-errors.txt');
    expect(rules(findings)).toEqual(['D12']);
    expect(findings[0]!.evidence).toBe('mlx5_0: out_of_buffer: 135 (one snapshot, no baseline: may be historical)');
    expect(lineAt(text, findings[0]!.line)).toBe('out_of_buffer: 135');
  });
  it('ethtool -S samples with zero drop counters raise nothing', () => {
    for (const f of [
      'ethtool-S__cx4lx-ubuntu1804-inbox-full-751-counters-NO-INDENT.txt',
      'ethtool-S__cx4lx-ubuntu1804-inbox-head-TRUNCATED.txt',
      'ethtool-S__grep-rdma-vport-counters-roce-bond-member.txt',
    ]) {
      expect(sample('ethtool-S', f).findings, f).toEqual([]);
    }
    expect(sample('sysfs-infiniband', 'sysfs-infiniband__grep-H-hw_counters-bf3-bond-and-cx7-ib.txt').findings).toEqual(
      [],
    );
  });
  it('ethtool -S: discards and a storm counter printed with a trailing space in its name', () => {
    const text =
      'NIC statistics:\n     rx_packets: 10\n     rx_discards_phy: 1234\n     rx_prio3_discards: 0\n     tx_pause_storm_warning_events : 2\n     tx_global_pause: 0\n';
    const { findings } = run('ethtool-S', text);
    expect(rules(findings)).toEqual(['D12']);
    expect(findings[0]!.evidence).toBe(
      'rx_discards_phy: 1234; tx_pause_storm_warning_events : 2 (one snapshot, no baseline: may be historical)',
    );
    expect(findings[0]!.line).toBe(3);
  });
});

describe('D14 nvidia-peermem', () => {
  it('samples with nvidia_peermem loaded raise nothing', () => {
    for (const f of [
      'lsmod__grep-nvidia_peermem-mofed-ib_core-user.txt',
      'lsmod__grep-nvid-ubuntu-6.8-inbox-peermem-via-ib_uverbs.txt',
      'lsmod__grep-nvidia-gpu-operator-doc-nvidia_fs-peermem.txt',
      'lsmod-grep-nvidia__h100-peermem-gdrdrv.txt',
    ]) {
      expect(sample('lsmod', f).findings, f).toEqual([]);
    }
  });
  it('a full lsmod or a grep for nvidia without peermem → info', () => {
    const full =
      'Module                  Size  Used by\nnvidia_uvm           1523712  0\nnvidia              56598528  147 nvidia_uvm,nvidia_modeset\nmlx5_ib               454656  0\n';
    expect(run('lsmod', full).findings).toEqual([expect.objectContaining({ rule: 'D14', severity: 'info' })]);
    const grep =
      '# lsmod | grep nvidia\nnvidia_uvm           1523712  0\nnvidia              56598528  147 nvidia_uvm,nvidia_modeset\n';
    expect(rules(run('lsmod', grep).findings)).toEqual(['D14']);
  });
  it('a grep for another pattern, or an unknown filter, proves nothing', () => {
    expect(
      run('lsmod', '# lsmod | grep mlx5\nmlx5_ib               454656  0\nmlx5_core            2031616  1 mlx5_ib\n')
        .findings,
    ).toEqual([]);
    expect(
      run(
        'lsmod',
        'nvidia_uvm           1523712  0\nnvidia              56598528  147 nvidia_uvm,nvidia_modeset\nnvidia_drm 73728 0\n',
      ).findings,
    ).toEqual([]);
  });
});

describe('D25 NIC software stack', () => {
  it('ofed_info: non-LTS MLNX_OFED branches → medium', () => {
    for (const [f, rel] of [
      ['ofed_info-s__mofed-5.1-0.6.6.0-centos.txt', '5.1'],
      ['ofed_info-s__mofed-4.0-2.0.0.1-cx3-plus-lspci-network-controller.txt', '4.0'],
      ['ofed_info__full-head-mofed-5.2-centos7-TRUNCATED.txt', '5.2'],
      ['ofed_info-n__mofed-5.0-2.1.8-centos7-cx5.txt', '5.0'],
    ] as const) {
      const { findings } = sample('ofed_info', f);
      expect(
        findings.map((x) => [x.rule, x.severity]),
        f,
      ).toEqual([['D25', 'medium']]);
      expect(findings[0]!.evidence).toContain(`branch ${rel} is not LTS`);
    }
  });
  it('ofed_info: LTS 5.4, not installed → nothing', () => {
    expect(sample('ofed_info', 'ofed_info-s__mofed-5.4-3.6.8-three-part-build-ubuntu.txt').findings).toEqual([]);
    expect(sample('ofed_info', 'ofed_info-s-and-n__mofed-5.4-3.1.0.0.txt').findings).toEqual([]);
    expect(
      sample('ofed_info', 'ofed_info-s__command-not-found-plus-ibv_devinfo-vv-rdma-core17-raw-tabs-TRUNCATED.txt')
        .findings,
    ).toEqual([]);
  });
  it('the unpublished 23.10-1.1.8.0', () => {
    const { findings } = run('ofed_info', 'MLNX_OFED_LINUX-23.10-1.1.8.0:\n');
    expect(findings).toEqual([
      expect.objectContaining({
        rule: 'D25',
        severity: 'medium',
        title: 'NIC software stack: an MLNX_OFED version that was never published',
      }),
    ]);
    expect(run('ofed_info', 'MLNX_OFED_LINUX-23.10-1.1.9.0:\n').findings).toEqual([]);
  });
  it('ConnectX-4 with a stack newer than 24.10', () => {
    const text =
      'OFED-internal-25.01-0.6.0:\n03:00.0 Infiniband controller [0207]: Mellanox Technologies MT27700 Family [ConnectX-4] [15b3:1013]\n';
    expect(run('ofed_info', text).findings).toEqual([
      expect.objectContaining({ rule: 'D25', title: 'NIC software stack newer than this NIC supports' }),
    ]);
    expect(
      run('ofed_info', text.replace('[15b3:1013]', '[15b3:1015]').replace('[ConnectX-4]', '[ConnectX-4 Lx]')).findings,
    ).toEqual([]);
  });
  it('ethtool -i: OFED 5.0 (non-LTS) and ConnectX-4 Lx firmware below 14.32; inbox driver: firmware only', () => {
    const a = sample('ethtool-i', 'ethtool-i__cx4lx-mofed-5.0-2.1.8-two-fw-versions.txt').findings;
    expect(a.map((f) => [f.rule, f.severity])).toEqual([
      ['D25', 'medium'],
      ['D25', 'low'],
    ]);
    expect(a[1]!.evidence).toContain('firmware-version: 14.28.2006 (MT_2420110034)');
    const b = sample('ethtool-i', 'ethtool-i__cx4lx-ubuntu1804-inbox-5.0-0.txt').findings;
    expect(b.map((f) => [f.rule, f.severity])).toEqual([['D25', 'low']]);
    expect(sample('ethtool-i', 'ethtool-i__cx7-mofed-23.10.txt').findings).toEqual([]);
  });
});

describe('D20 on perftest output', () => {
  const ibstat =
    "CA 'mlx5_0'\n\tCA type: MT4117\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 25\n\t\tLink layer: Ethernet\n";
  const bw = (avg: string): string =>
    [
      '---------------------------------------------------------------------------------------',
      '                    RDMA_Write BW Test',
      ' Dual-port       : OFF\t\tDevice         : mlx5_0',
      ' Mtu             : 1024[B]',
      ' Link type       : Ethernet',
      ' GID index       : 3',
      ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]',
      ` 65536      5000             ${avg}             ${avg}\t\t     0.035000`,
      '---------------------------------------------------------------------------------------',
      '',
    ].join('\n');
  it('fires with the link speed from ibstat in the same text, MTU 1024 as a cause', () => {
    const { findings, text } = run('perftest', `${bw('18.50')}\n${ibstat}`);
    expect(rules(findings)).toEqual(['D20']);
    expect(findings[0]!.evidence).toContain('18.5 Gb/s < 20 Gb/s');
    expect(findings[0]!.evidence).toContain('R24');
    expect(findings[0]!.fix).toContain('ib_write_bw -d mlx5_0 -x 3');
    expect(lineAt(text, findings[0]!.line)).toMatch(/^65536\s+5000/);
  });
  it('marginal bandwidth, or no link speed in the text: nothing', () => {
    expect(run('perftest', `${bw('21.00')}\n${ibstat}`).findings).toEqual([]);
    expect(run('perftest', bw('5.00')).findings).toEqual([]);
    expect(sample('perftest', 'ib_write_bw__gb10-cx7-roce-client-duration-cpu-util-masked.txt').findings).toEqual([]);
  });
});

describe('kinds without output rules stay silent on their samples', () => {
  it.each([
    ['ibv_devices', 'ibv_devices__cx4lx-4dev-raw-tabs.txt'],
    ['ibdev2netdev', 'ibdev2netdev-v__cx4-sriov-vfs-MT4116-NA-DOWN-padded.txt'],
    ['modinfo', 'modinfo__nv_peer_mem-legacy-1.0-8-ubuntu1804.txt'],
    ['mst-status', 'mst-status-v__roce-lag-mlx5_bond-net-bond-modules-not-loaded.txt'],
    ['dkms-status', 'dkms-status__nvidia-old-comma-format.txt'],
    ['cma_roce_mode', 'cma_roce_mode__query-v1-set-v2-query-v2.txt'],
    ['ip-link', 'ip-d-link__bond0-balance-xor-down-mail-wrapped.txt'],
    ['roce-validate', 'roce-validate__ip-o-addr-sysfs-state-rdma-system-lsmod-peermem.txt'],
    ['sysfs-infiniband', 'sysfs-infiniband__grep-H-port-attrs-h100-cx7-ib-plus-bf3-bond.txt'],
    ['lspci', 'lspci-nn__grep-mellanox-azure-a100-cx6-vf-cx4lx-vf.txt'],
  ])('%s %s', (kind, file) => {
    const r = sample(kind, file);
    expect(r.findings).toEqual([]);
    expect(r.summary.length).toBeGreaterThan(0);
  });
});

describe('ibstat per-port form and ConnectX-4 Lx firmware', () => {
  it('`ibstat mlx5_1 1` prints `CA: ...` and unindented port fields', () => {
    const text =
      "CA: 'mlx5_1'\nPort 1:\nState: Down\nPhysical state: Disabled\nRate: 25\nBase lid: 0\nLMC: 0\nSM lid: 0\nCapability mask: 0x00010000\nPort GUID: 0x0000000000000000\nLink layer: Ethernet\n";
    const { facts, findings } = run('ibstat', text);
    expect(facts.ports).toEqual([
      expect.objectContaining({
        device: 'mlx5_1',
        port: 1,
        state: 'Down',
        physState: 'Disabled',
        rateGbps: 25,
        linkLayer: 'Ethernet',
      }),
    ]);
    expect(rules(findings)).toEqual(['D08']);
  });
  it('MT4117 below firmware 14.32 → D25 low', () => {
    const text =
      "CA 'mlx5_0'\n\tCA type: MT4117\n\tNumber of ports: 1\n\tFirmware version: 14.23.1020\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 25\n\t\tLink layer: Ethernet\n";
    const { findings, text: t } = run('ibstat', text);
    expect(findings.map((f) => [f.rule, f.severity])).toEqual([['D25', 'low']]);
    expect(lineAt(t, findings[0]!.line)).toBe('Firmware version: 14.23.1020');
    expect(run('ibstat', text.replace('14.23.1020', '14.32.1010')).findings).toEqual([]);
  });
});
