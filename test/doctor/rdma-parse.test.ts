/** Facts (docs/DOCTOR.md contract field names) of every real sample of the RDMA / NIC / host-software kinds. */
import { describe, expect, it } from 'vitest';
import { sample } from './rdma-helpers.js';

describe('ibstat', () => {
  it('RoCE CX-7 + CX-6 Dx, all active: 12 ports, rate and link layer per port', () => {
    const { facts } = sample('ibstat', 'ibstat__h100-cx7-roce-400g-plus-cx6dx-eth.txt');
    expect(facts.ports).toHaveLength(12);
    expect(facts.ports[0]).toEqual({
      device: 'mlx5_0',
      port: 1,
      state: 'Active',
      physState: 'LinkUp',
      rateGbps: 400,
      baseLid: 0,
      lmc: 0,
      smLid: 0,
      capabilityMask: '0x00010000',
      portGuid: '0xa288c2fffee3142a',
      linkLayer: 'Ethernet',
    });
    expect(facts.ports[1]).toMatchObject({ device: 'mlx5_1', rateGbps: 100, portGuid: '0x0000000000000000' });
    expect(facts.ports.every((p: any) => p.state === 'Active' && p.linkLayer === 'Ethernet')).toBe(true);
    expect(facts.cas[0]).toMatchObject({ device: 'mlx5_0', caType: 'MT4129', numPorts: 1, firmware: '28.39.1002' });
  });

  it('IB CX-7 with Down/Disabled Ethernet ports: states as printed', () => {
    const { facts } = sample('ibstat', 'ibstat__h100-cx7-ib-400g-cx6dx-eth-ports-down.txt');
    const down = facts.ports.filter((p: any) => p.state !== 'Active');
    expect(down.map((p: any) => [p.device, p.state, p.physState, p.rateGbps, p.linkLayer])).toEqual([
      ['mlx5_2', 'Down', 'Disabled', 40, 'Ethernet'],
      ['mlx5_7', 'Down', 'Disabled', 40, 'Ethernet'],
      ['mlx5_8', 'Down', 'Disabled', 40, 'Ethernet'],
    ]);
    expect(facts.ports.find((p: any) => p.device === 'mlx5_0')).toMatchObject({
      linkLayer: 'InfiniBand',
      baseLid: 75,
      smLid: 334,
      rateGbps: 400,
    });
  });

  it('RoCE two ports disabled, and the Polling variant', () => {
    const a = sample('ibstat', 'ibstat__h100-cx7-roce-two-ports-disabled.txt').facts;
    expect(a.ports.filter((p: any) => p.state === 'Down').map((p: any) => `${p.device}:${p.physState}`)).toEqual([
      'mlx5_11:Disabled',
      'mlx5_5:Disabled',
    ]);
    const b = sample('ibstat', 'ibstat__h100-cx7-roce-port-physstate-polling.txt').facts;
    expect(b.ports.filter((p: any) => p.state === 'Down').map((p: any) => `${p.device}:${p.physState}`)).toEqual([
      'mlx5_11:Polling',
      'mlx5_5:Disabled',
    ]);
  });

  it('VF host with mixed Ethernet and IB CAs (MT4126)', () => {
    const { facts } = sample('ibstat', 'ibstat__a100-vm-mt4126-vf-mixed-eth-ib.txt');
    expect(facts.cas).toHaveLength(9);
    expect(facts.ports.filter((p: any) => p.linkLayer === 'Ethernet').map((p: any) => p.device)).toEqual(['mlx5_0']);
    expect(facts.ports.filter((p: any) => p.linkLayer === 'InfiniBand')).toHaveLength(8);
    expect(facts.cas.every((c: any) => c.caType === 'MT4126')).toBe(true);
  });

  it('RoCE LAG CA mlx5_bond_0 (BlueField-3) among IB CAs', () => {
    const { facts } = sample('ibstat', 'ibstat__h100-cx7-ib-plus-bluefield3-mlx5_bond_0.txt');
    expect(facts.cas.map((c: any) => c.device)).toEqual([
      'mlx5_0',
      'mlx5_1',
      'mlx5_4',
      'mlx5_5',
      'mlx5_6',
      'mlx5_7',
      'mlx5_8',
      'mlx5_9',
      'mlx5_bond_0',
    ]);
    expect(facts.ports.at(-1)).toMatchObject({
      device: 'mlx5_bond_0',
      port: 1,
      state: 'Active',
      physState: 'LinkUp',
      rateGbps: 200,
      linkLayer: 'Ethernet',
    });
    expect(facts.cas.at(-1)).toMatchObject({ caType: 'MT41692', firmware: '32.38.3056' });
  });

  it('ibpanic after 8 CAs: the CAs and the error are kept', () => {
    const { facts } = sample('ibstat', 'ibstat__a100-azure-vm-mt4124-ibpanic-error.txt');
    expect(facts.ports).toHaveLength(8);
    expect(facts.ports.every((p: any) => p.rateGbps === 200 && p.linkLayer === 'InfiniBand')).toBe(true);
    expect(facts.errors).toEqual([
      "ibpanic: [1400444] main: stat of IB device 'mlx5_8' failed: No such file or directory",
    ]);
  });
});

describe('ibstatus', () => {
  it('HDR VFs: state/phys without the number, rate in Gb/s', () => {
    const { facts } = sample('ibstatus', 'ibstatus__a100-azure-vm-hdr-200.txt');
    expect(facts.ports).toHaveLength(9);
    expect(facts.ports[0]).toMatchObject({
      device: 'mlx5_0',
      port: 1,
      state: 'ACTIVE',
      physState: 'LinkUp',
      linkLayer: 'InfiniBand',
      rateGbps: 200,
      baseLid: 0x33bf,
      smLid: 1,
    });
    expect(facts.ports[8]).toMatchObject({ device: 'mlx5_8', state: 'ACTIVE', linkLayer: 'Ethernet', rateGbps: 40 });
  });

  it('ConnectX-3 dual port, raw tabs: port 2 DOWN/Polling', () => {
    const { facts } = sample('ibstatus', 'ibstatus__cx3-mlx4-fdr10-port1-active-port2-down-polling-raw-tabs.txt');
    expect(facts.ports.map((p: any) => [p.device, p.port, p.state, p.physState, p.rateGbps, p.linkLayer])).toEqual([
      ['mlx4_0', 1, 'ACTIVE', 'LinkUp', 40, 'InfiniBand'],
      ['mlx4_0', 2, 'DOWN', 'Polling', 10, 'InfiniBand'],
    ]);
  });
});

describe('ibv_devices', () => {
  it('raw tabs: 4 devices with node GUIDs', () => {
    expect(sample('ibv_devices', 'ibv_devices__cx4lx-4dev-raw-tabs.txt').facts.devices).toEqual([
      { device: 'mlx5_0', guid: '0c42a103004029a0' },
      { device: 'mlx5_1', guid: '0c42a103004029a1' },
      { device: 'mlx5_2', guid: '0c42a10300753272' },
      { device: 'mlx5_3', guid: '0c42a10300753273' },
    ]);
  });
  it('rocep names, re-indented', () => {
    const { facts } = sample('ibv_devices', 'ibv_devices__proxmox-rocep-names-indented-by-poster.txt');
    expect(facts.devices.map((d: any) => d.device)).toEqual([
      'rocep18s0f0',
      'rocep18s0f1',
      'rocep55s0f0',
      'rocep55s0f1',
    ]);
    expect(facts.devices[3].guid).toBe('5eba2cfffe62b4f8');
  });
});

describe('ibv_devinfo', () => {
  it('-l lists the HCAs (mlx5 and irdma)', () => {
    expect(sample('ibv_devinfo', 'ibv_devinfo-l__mixed-mlx5-irdma.txt').facts.hcas).toEqual([
      'mlx5_0',
      'mlx5_1',
      'irdma0',
      'irdma1',
    ]);
  });
  it('MOFED 4.x -v excerpt: port without device, active_mtu 1024, untyped GIDs with IPv4', () => {
    const { facts } = sample('ibv_devinfo', 'ibv_devinfo-v__mofed4-exp-verbs-roce-10g-1x-gid-no-type-EXCERPT.txt');
    expect(facts.ports).toEqual([
      expect.objectContaining({
        port: 1,
        state: 'PORT_ACTIVE',
        linkLayer: 'Ethernet',
        activeMtu: 1024,
        maxMtu: 4096,
        physState: 'LINK_UP',
      }),
    ]);
    expect(facts.ports[0].device).toBeUndefined();
    expect(facts.gids).toHaveLength(4);
    expect(facts.gids[2]).toEqual({
      port: 1,
      index: 2,
      gid: '0000:0000:0000:0000:0000:ffff:c0a8:f238',
      ipv4: '192.168.242.56',
    });
    expect(facts.gids.every((g: any) => g.version === undefined)).toBe(true);
  });
  it('-vv after `ofed_info: command not found`: device fields of a cut output', () => {
    const { facts } = sample(
      'ibv_devinfo',
      'ofed_info-s__command-not-found-plus-ibv_devinfo-vv-rdma-core17-raw-tabs-TRUNCATED.txt',
    );
    expect(facts.devices).toEqual([
      expect.objectContaining({
        device: 'mlx5_0',
        transport: 'InfiniBand (0)',
        fwVer: '12.20.1820',
        vendorPartId: 4115,
        boardId: 'DEL2180110032',
        physPortCnt: 1,
      }),
    ]);
    expect(facts.ports).toEqual([]);
  });
  it('rdma-core ≥ v29 typed GIDs', () => {
    const text = [
      'hca_id:\tmlx5_0',
      '\ttransport:\t\t\tInfiniBand (0)',
      '\tfw_ver:\t\t\t\t14.32.1010',
      '\tvendor_part_id:\t\t\t4117',
      '\tphys_port_cnt:\t\t\t1',
      '\t\tport:\t1',
      '\t\t\tstate:\t\t\tPORT_ACTIVE (4)',
      '\t\t\tmax_mtu:\t\t4096 (5)',
      '\t\t\tactive_mtu:\t\t4096 (5)',
      '\t\t\tlink_layer:\t\tEthernet',
      '\t\t\tGID[  0]:\t\tfe80::ba59:9fff:fe3b:353c, RoCE v1',
      '\t\t\tGID[  1]:\t\tfe80::ba59:9fff:fe3b:353c, RoCE v2',
      '\t\t\tGID[  2]:\t\t::ffff:10.0.1.11, RoCE v1',
      '\t\t\tGID[  3]:\t\t::ffff:10.0.1.11, RoCE v2',
    ].join('\n');
    const { facts } = run('ibv_devinfo', text);
    expect(facts.ports).toEqual([
      {
        device: 'mlx5_0',
        port: 1,
        state: 'PORT_ACTIVE',
        stateCode: 4,
        linkLayer: 'Ethernet',
        activeMtu: 4096,
        maxMtu: 4096,
      },
    ]);
    expect(facts.gids[3]).toEqual({
      device: 'mlx5_0',
      port: 1,
      index: 3,
      gid: '::ffff:10.0.1.11',
      version: 'v2',
      ipv4: '10.0.1.11',
    });
  });
});

import { run } from './rdma-helpers.js';

describe('show_gids', () => {
  it('raw tabs, 3 devices, IPv4 v1/v2 pairs', () => {
    const { facts } = sample('show_gids', 'show_gids__tabs-raw-3dev-roce-ipv4-eth0x-names.txt');
    expect(facts.nGidsFound).toBe(12);
    expect(facts.gids).toHaveLength(12);
    expect(facts.gids[3]).toEqual({
      device: 'mlx5_0',
      port: 1,
      index: 3,
      gid: '0000:0000:0000:0000:0000:ffff:0a6e:0021',
      ipv4: '10.110.0.33',
      version: 'v2',
      netdev: 'eth05',
    });
    expect(facts.gids[0]).toEqual({
      device: 'mlx5_0',
      port: 1,
      index: 0,
      gid: 'fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54',
      version: 'v1',
      netdev: 'eth05',
    });
  });
  it('Huawei hrn3 (v2 only) + mlx5_bond_0 without IPv4', () => {
    const { facts } = sample('show_gids', 'show_gids__tabs-raw-huawei-hrn3-bond-plus-mlx5_bond_0-no-ipv4.txt');
    expect(facts.gids.map((g: any) => `${g.device}/${g.index} ${g.version} ${g.ipv4 ?? '-'} ${g.netdev}`)).toEqual([
      'hrn3_bond_0/0 v2 - bond0',
      'hrn3_bond_0/1 v2 27.105.180.3 bond0',
      'mlx5_bond_0/0 v1 - bond1',
      'mlx5_bond_0/1 v2 - bond1',
    ]);
  });
  it('expanded spaces; last row without IPv4 and netdev', () => {
    const { facts } = sample('show_gids', 'show_gids__cx5-roce-ipv4-v1v2-second-dev-no-netdev.txt');
    expect(facts.nGidsFound).toBe(5);
    expect(facts.gids[4]).toEqual({
      device: 'mlx5_1',
      port: 1,
      index: 0,
      gid: 'fe80:0000:0000:0000:9440:c9ff:ff8c:a09d',
      version: 'v1',
    });
    expect(facts.gids[3]).toMatchObject({ ipv4: '192.168.6.132', version: 'v2', netdev: 'mce0' });
  });
  it('no IPv4 GIDs at all; IB port row without DEV', () => {
    const { facts } = sample('show_gids', 'show_gids__cx4-eth-plus-ib-port-no-ipv4.txt');
    expect(facts.gids.filter((g: any) => g.ipv4)).toEqual([]);
    expect(facts.gids.map((g: any) => g.netdev ?? null)).toEqual(['ens11f0', 'ens11f0', null]);
  });
  it('long rocep names and masked GIDs', () => {
    const { facts } = sample('show_gids', 'show_gids__gb10-cx7-rocep-names-masked.txt');
    expect(facts.gids).toHaveLength(12);
    expect(
      facts.gids
        .filter((g: any) => g.version === 'v2' && g.ipv4)
        .map((g: any) => `${g.device} ${g.index} ${g.ipv4} ${g.netdev}`),
    ).toEqual(['rocep1s0f0 3 192.168.100.10 enp1s0f0np0', 'roceP2p1s0f0 3 192.168.100.14 enP2p1s0f0np0']);
  });
});

describe('ibdev2netdev', () => {
  it('plain: device, port, netdev, up', () => {
    expect(sample('ibdev2netdev', 'ibdev2netdev__gb10-cx7-rocep-names-up-down.txt').facts.links).toEqual([
      { device: 'rocep1s0f0', port: 1, netdev: 'enp1s0f0np0', up: true },
      { device: 'rocep1s0f1', port: 1, netdev: 'enp1s0f1np1', up: false },
      { device: 'roceP2p1s0f0', port: 1, netdev: 'enP2p1s0f0np0', up: true },
      { device: 'roceP2p1s0f1', port: 1, netdev: 'enP2p1s0f1np1', up: false },
    ]);
  });
  it('8 devices incl. IPoIB ib0', () => {
    const { facts } = sample('ibdev2netdev', 'ibdev2netdev__8dev-mixed-roce-and-ib0.txt');
    expect(facts.links).toHaveLength(8);
    expect(facts.links.filter((l: any) => l.up).map((l: any) => l.netdev)).toEqual([
      'ens6',
      'ens14f0',
      'ib0',
      'ens6f2',
    ]);
  });
  it('RoCE LAG devices on bond masters', () => {
    expect(
      sample('ibdev2netdev', 'ibdev2netdev__huawei-hrn3_bond_0-plus-mlx5_bond_0-on-bonds.txt').facts.links,
    ).toEqual([
      { device: 'hrn3_bond_0', port: 1, netdev: 'bond0', up: true },
      { device: 'mlx5_bond_0', port: 1, netdev: 'bond1', up: true },
    ]);
  });
  it('partial SR-IOV listing followed by lspci', () => {
    const { facts } = sample('ibdev2netdev', 'ibdev2netdev__cx6-ib-sriov-vfs-ibpXsYvZ-partial.txt');
    expect(facts.links).toHaveLength(16);
    expect(facts.links[0]).toEqual({ device: 'mlx5_19', port: 1, netdev: 'ibp75s0v7', up: false });
    expect(facts.links.find((l: any) => l.device === 'mlx5_4')).toEqual({
      device: 'mlx5_4',
      port: 1,
      netdev: 'enp97s0f0',
      up: true,
    });
  });
  it('column -t with comments appended', () => {
    const { facts } = sample('ibdev2netdev', 'ibdev2netdev__h100-cx7-ib-cx6-eth-column-t-annotated.txt');
    expect(facts.links).toHaveLength(12);
    expect(facts.links[1]).toEqual({ device: 'mlx5_1', port: 1, netdev: 'enp27s0f0np0', up: true });
    expect(facts.links[0]).toEqual({ device: 'mlx5_0', port: 1, netdev: 'ibp26s0', up: false });
  });
  it('-v: BDF, part, PSID, description, fw, port state; plain + -v merged per port', () => {
    const { facts } = sample('ibdev2netdev', 'ibdev2netdev-v__cx4-sriov-vfs-MT4116-NA-DOWN-padded.txt');
    expect(facts.links).toHaveLength(6);
    expect(facts.links[0]).toEqual({
      device: 'mlx5_0',
      port: 1,
      netdev: 'enp2s0f0',
      up: true,
      portState: 'ACTIVE',
      bdf: '0000:02:00.0',
      partType: 'MT4115',
      psid: 'MT1523X04353',
      description: 'CX456A - ConnectX-4 QSFP',
      fw: '12.23.1020',
    });
    expect(facts.links[2]).toEqual({
      device: 'mlx5_2',
      port: 1,
      netdev: 'enp2s0f2',
      up: false,
      portState: 'DOWN',
      bdf: '0000:02:00.5',
      partType: 'MT4116',
      fw: '12.23.1020',
    });
  });
  it('-v with a long padded description (BlueField-3), ofed_info line above', () => {
    const { facts } = sample(
      'ibdev2netdev',
      'ibdev2netdev-v__bluefield3-supernic-ib-and-eth-long-padded-desc-plus-ofed_info.txt',
    );
    expect(facts.links.map((l: any) => [l.device, l.netdev, l.up, l.portState, l.partType, l.fw])).toEqual([
      ['mlx5_0', 'ibs2f0', true, 'ACTIVE', 'MT41692', '32.42.1000'],
      ['mlx5_1', 'ens8f0np0', true, 'ACTIVE', 'MT41692', '32.42.1000'],
    ]);
    expect(facts.links[0].description).toMatch(/^BlueField-3 E-series SuperNIC 400GbE\/NDR .*Tall Bracket$/);
  });
  it('-v cut after the port state: the last link keeps what it has', () => {
    const { facts } = sample('ibdev2netdev', 'ibdev2netdev-v__cx6-vpi-hdr-p5p1-names-TRUNCATED.txt');
    expect(facts.links.map((l: any) => l.netdev ?? null)).toEqual(['p5p1', 'p4p1', 'p2p1', null]);
    expect(facts.links[3]).toMatchObject({
      device: 'mlx5_3',
      port: 1,
      portState: 'ACTIVE',
      psid: 'MCX653105A-HDAT',
      fw: '20.28.1002',
    });
    expect(facts.links[3].up).toBeUndefined();
  });
});

describe('rdma link', () => {
  it('ACTIVE/LINK_UP and DOWN/DISABLED with netdevs', () => {
    const { facts } = sample('rdma-link', 'rdma-link__gb10-cx7-inbox-rocep-names-2up-2down.txt');
    expect(facts.ports.map((p: any) => `${p.device}/${p.port} ${p.state} ${p.physState} ${p.netdev}`)).toEqual([
      'rocep1s0f0/1 ACTIVE LINK_UP enp1s0f0np0',
      'rocep1s0f1/1 DOWN DISABLED enp1s0f1np1',
      'roceP2p1s0f0/1 ACTIVE LINK_UP enP2p1s0f0np0',
      'roceP2p1s0f1/1 DOWN DISABLED enP2p1s0f1np1',
    ]);
  });
  it('IB ports without netdev', () => {
    const { facts } = sample('rdma-link', 'rdma-link__ib-ports-no-netdev-trailing-space-high-index.txt');
    expect(facts.ports).toHaveLength(8);
    expect(facts.ports.every((p: any) => p.state === 'ACTIVE')).toBe(true);
  });
});

describe('mlnx_qos (all format generations)', () => {
  it('2021–2024 format: trust dscp, PFC on prio 5, custom dscp rows, default priority line', () => {
    const { facts } = sample('mlnx_qos', 'mlnx_qos__cx7-dscp-pfc5-ets-strict-default-priority.txt');
    expect(facts).toMatchObject({
      trust: 'dscp',
      dcbx: 'os',
      pfc: [0, 0, 0, 0, 0, 1, 0, 0],
      cableLen: 30,
      maxBufferSize: 4151520,
    });
    expect(facts.dscp2prio['26']).toBe(3);
    expect(facts.dscp2prio['40']).toBe(5);
    expect(facts.dscp2prio['48']).toBe(6);
    expect(Object.keys(facts.dscp2prio)).toHaveLength(64);
    expect(facts.receiveBufferBytes).toEqual([19872, 220896, 0, 0, 0, 0, 0, 0]);
    expect(facts.tcs[2]).toEqual({ tc: 2, ratelimit: 'unlimited', tsa: 'ets', bwPct: 80, priorities: [2] });
    expect(facts.tcs[4]).toEqual({ tc: 4, ratelimit: 'unlimited', tsa: 'strict', priorities: [4] });
  });
  it('buffer-era format: default dscp map, PFC prio 3, tc 0 holds prio 1', () => {
    const { facts } = sample('mlnx_qos', 'mlnx_qos__dscp-default-map-pfc3-vendor-tsa.txt');
    expect(facts).toMatchObject({
      netdev: 'ens14f0',
      trust: 'dscp',
      dcbx: 'os',
      pfc: [0, 0, 0, 1, 0, 0, 0, 0],
      pfcBuffer: [0, 2, 5, 7, 1, 2, 3, 6],
      cableLen: 7,
    });
    expect(facts.dscp2prio).toMatchObject({ '0': 0, '26': 3, '46': 5, '63': 7 });
    expect(facts.tcs.slice(0, 2)).toEqual([
      { tc: 0, ratelimit: 'unlimited', tsa: 'vendor', priorities: [1] },
      { tc: 1, ratelimit: 'unlimited', tsa: 'vendor', priorities: [0] },
    ]);
  });
  it('trust pcp: no dscp2prio section', () => {
    const { facts } = sample('mlnx_qos', 'mlnx_qos__pcp-trust-pfc3-vendor-tsa.txt');
    expect(facts).toMatchObject({ trust: 'pcp', pfc: [0, 0, 0, 1, 0, 0, 0, 0], dcbx: 'os' });
    expect(facts.dscp2prio).toBeUndefined();
  });
  it('2017 format: PFC rows and tc blocks only (skprio lines ignored)', () => {
    const { facts } = sample('mlnx_qos', 'mlnx_qos__very-old-mofed-pfc-only-skprio-tos-lines.txt');
    expect(facts.pfc).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(facts.netdev).toBe('eth35');
    expect(facts.trust).toBeUndefined();
    expect(facts.dcbx).toBeUndefined();
    expect(facts.tcs).toHaveLength(8);
    expect(facts.tcs[1]).toEqual({ tc: 1, ratelimit: 'unlimited', tsa: 'vendor', priorities: [0] });
  });
  it('2017-09 format without buffer lines, firmware DCBX, wrapped dscp rows', () => {
    const text = [
      'DCBX mode: Firmware controlled',
      'Priority trust state: dscp',
      'dscp2prio mapping:',
      '\tprio:0 dscp:07,06,05,04,03,02,01,00,',
      '\tprio:3 dscp:31,30,29,28,27,26,25,24,',
      '\tprio:3 dscp:23,',
      'Cable len: 7',
      'PFC configuration:',
      '\tpriority    0   1   2   3   4   5   6   7',
      '\tenabled     0   0   0   1   0   0   0   0   ',
      '',
      'tc: 0 ratelimit: unlimited, tsa: vendor',
      '\t priority:  1',
    ].join('\n');
    const { facts } = run('mlnx_qos', text);
    expect(facts).toMatchObject({ dcbx: 'firmware', trust: 'dscp', pfc: [0, 0, 0, 1, 0, 0, 0, 0], cableLen: 7 });
    expect(facts.dscp2prio).toMatchObject({ '23': 3, '26': 3, '0': 0 });
  });
});

describe('bonding', () => {
  it('802.3ad, one slave down, no LACP partner (root details)', () => {
    const { facts } = sample('bonding', 'proc-net-bonding__802.3ad-one-slave-down-no-lacp-partner-rhel7.txt');
    expect(facts).toMatchObject({ mode: '802.3ad', hashPolicy: 'layer3+4', miimonMs: 100, lacpRate: 'fast' });
    expect(facts.activeAggregator).toEqual({
      id: 2,
      ports: 1,
      actorKey: 9,
      partnerKey: 1,
      partnerMac: '00:00:00:00:00:00',
    });
    expect(facts.slaves.map((s: any) => [s.name, s.mii, s.speedMbps ?? null, s.aggregatorId])).toEqual([
      ['enp1s0f0', 'down', null, 1],
      ['enp1s0f1', 'up', 1000, 2],
    ]);
  });
  it('no active aggregator, Aggregator ID N/A omitted', () => {
    const { facts } = sample('bonding', 'proc-net-bonding__802.3ad-no-active-aggregator-agg-id-na.txt');
    expect(facts).toMatchObject({
      name: 'bond0',
      mode: '802.3ad',
      noActiveAggregator: true,
      lacpRate: 'fast',
      hashPolicy: 'layer2',
    });
    expect(facts.slaves.map((s: any) => s.aggregatorId)).toEqual([undefined, undefined]);
  });
  it('non-root 802.3ad read (no aggregator info), 200G BlueField slaves', () => {
    const { facts } = sample('bonding', 'proc-net-bonding__802.3ad-bluefield3-200g-p0-p1-no-agg-info.txt');
    expect(facts.activeAggregator).toBeUndefined();
    expect(facts.slaves).toEqual([
      expect.objectContaining({ name: 'p0', mii: 'up', speedMbps: 200000, aggregatorId: 1 }),
      expect.objectContaining({ name: 'p1', mii: 'up', speedMbps: 200000, aggregatorId: 1 }),
    ]);
    const wsl = sample('bonding', 'proc-net-bonding__802.3ad-wsl2-6.6-nonroot-no-agg-info.txt').facts;
    expect(wsl).toMatchObject({ mode: '802.3ad', hashPolicy: 'layer2', lacpRate: 'fast' });
    expect(wsl.slaves.map((s: any) => `${s.name} ${s.speedMbps}`)).toEqual(['eth1 10000', 'eth2 10000']);
  });
  it('churned root fixture and monitoring churn state', () => {
    const a = sample('bonding', 'proc-net-bonding__802.3ad-root-details-one-slave-down-churned.txt').facts;
    expect(a.slaves.map((s: any) => `${s.name} ${s.mii} ${s.actorChurnState}/${s.partnerChurnState}`)).toEqual([
      'enp0s9 up none/churned',
      'enp0s8 down churned/churned',
    ]);
    expect(a).toMatchObject({ upDelayMs: 2000, downDelayMs: 1000, lacpRate: 'slow' });
    const b = sample('bonding', 'proc-net-bonding__802.3ad-ubuntu-6.8-root-churn-monitoring-containerlab.txt').facts;
    expect(b.activeAggregator).toMatchObject({ id: 1, ports: 2, partnerMac: '02:fc:ce:91:32:14' });
    expect(b.hashPolicy).toBe('layer2+3');
  });
  it('active-backup (primary None, ARP monitor), balance-rr, balance-xor', () => {
    expect(sample('bonding', 'proc-net-bonding__active-backup-10g-primary-none-v3.7.1.txt').facts).toMatchObject({
      mode: 'active-backup',
      activeSlave: 'enp17s0f0',
      miimonMs: 100,
      slaves: [
        expect.objectContaining({ name: 'enp17s0f0', speedMbps: 10000 }),
        expect.objectContaining({ name: 'enp17s0f1', speedMbps: 10000 }),
      ],
    });
    expect(
      sample('bonding', 'proc-net-bonding__active-backup-10g-primary-none-v3.7.1.txt').facts.primarySlave,
    ).toBeUndefined();
    expect(
      sample('bonding', 'proc-net-bonding__active-backup-arp-monitor-primary-reselect-flapping.txt').facts,
    ).toMatchObject({
      mode: 'active-backup',
      miimonMs: 0,
      arpIntervalMs: 1000,
      arpTargets: ['10.152.1.1'],
      primarySlave: 'em3',
    });
    expect(sample('bonding', 'proc-net-bonding__active-backup-ubuntu22-hyperv-miimon0.txt').facts).toMatchObject({
      mode: 'active-backup',
      miimonMs: 0,
    });
    const rr = sample('bonding', 'proc-net-bonding__balance-rr-debian12-6.1-virtualbox.txt').facts;
    expect(rr.mode).toBe('balance-rr');
    expect(rr.hashPolicy).toBeUndefined();
    expect(rr.slaves.map((s: any) => s.name)).toEqual(['enp0s8', 'enp0s3']);
    expect(sample('bonding', 'proc-net-bonding__balance-xor-cumulus-doc-odd-blank-lines.txt').facts).toMatchObject({
      mode: 'balance-xor',
      hashPolicy: 'layer3+4',
      slaves: [expect.objectContaining({ name: 'swp1', mii: 'up', speedMbps: 1000 })],
    });
    expect(sample('bonding', 'proc-net-bonding__balance-xor-layer2+3-2slaves-up-v3.7.1.txt').facts).toMatchObject({
      mode: 'balance-xor',
      hashPolicy: 'layer2+3',
    });
  });
});

describe('ethtool -S', () => {
  it('full 751-counter dump without header or indent', () => {
    const { facts } = sample('ethtool-S', 'ethtool-S__cx4lx-ubuntu1804-inbox-full-751-counters-NO-INDENT.txt');
    expect(Object.keys(facts.counters)).toHaveLength(751);
    expect(facts.counters).toMatchObject({
      rx_packets: 845320277,
      rx_bytes: 2195783498134,
      rx_out_of_buffer: 0,
      rx_discards_phy: 0,
      tx_global_pause: 0,
    });
  });
  it('truncated head with header: the cut last line is dropped', () => {
    const { facts } = sample('ethtool-S', 'ethtool-S__cx4lx-ubuntu1804-inbox-head-TRUNCATED.txt');
    expect(facts.header).toBe(true);
    expect(Object.keys(facts.counters)).toHaveLength(23);
    expect(Object.keys(facts.counters).at(-1)).toBe('tx_queue_stopped');
    expect(facts.counters.tx_queue_stopped).toBe(0);
  });
  it('grepped output with the command line', () => {
    const { facts } = sample('ethtool-S', 'ethtool-S__grep-rdma-vport-counters-roce-bond-member.txt');
    expect(facts.netdev).toBe('eth01');
    expect(facts.counters).toEqual({
      rx_vport_rdma_unicast_packets: 439107945,
      rx_vport_rdma_unicast_bytes: 343918719286,
      tx_vport_rdma_unicast_packets: 321535216,
      tx_vport_rdma_unicast_bytes: 147370719852,
      rx_vport_rdma_multicast_packets: 0,
      rx_vport_rdma_multicast_bytes: 0,
      tx_vport_rdma_multicast_packets: 0,
      tx_vport_rdma_multicast_bytes: 0,
    });
  });
});

describe('perftest (Gb/s whatever the unit)', () => {
  it('ib_write_bw --report_gbits, newest format', () => {
    const { facts } = sample('perftest', 'ib_write_bw__cx7-ndr-ib-client-392g-cqe-poll-dynamic-raw-tabs.txt');
    expect(facts).toMatchObject({
      test: 'ib_write_bw',
      side: 'client',
      device: 'mlx5_0',
      linkType: 'IB',
      mtu: 4096,
      unit: 'Gb/sec',
    });
    expect(facts.gidIndex).toBeUndefined();
    expect(facts.results).toEqual([
      { bytes: 65536, iterations: 5000, bwPeakGbps: 392.38, bwAvgGbps: 392.34, msgRateMpps: 0.748336 },
    ]);
    expect(facts.errors).toBeUndefined();
  });
  it('ib_read_bw with a CPU-frequency warning between header and row', () => {
    const { facts } = sample('perftest', 'ib_read_bw__cx7-ndr-ib-client-328g-outstand-reads-raw-tabs.txt');
    expect(facts).toMatchObject({ test: 'ib_read_bw', side: 'client', linkType: 'IB' });
    expect(facts.results).toEqual([
      { bytes: 65536, iterations: 1000, bwPeakGbps: 328.64, bwAvgGbps: 328.61, msgRateMpps: 0.626777 },
    ]);
  });
  it('ib_send_bw in MiB/sec → Gb/s (2^20 B/s)', () => {
    const { facts } = sample('perftest', 'ib_send_bw__cx7-ndr-ib-client-newest-perftest-MiB-units-raw-tabs.txt');
    expect(facts.unit).toBe('MiB/sec');
    const r = facts.results[0];
    expect(r.bytes).toBe(65536);
    expect(r.bwAvgGbps).toBeCloseTo((46557.03 * 1048576 * 8) / 1e9, 4);
    expect(r.bwPeakGbps).toBeCloseTo((46567.34 * 1048576 * 8) / 1e9, 4);
    expect(r.bwAvgGbps).toBeCloseTo(390.55, 1);
  });
  it('MB/sec is 10^6 B/s', () => {
    const text = [
      '                    RDMA_Write BW Test',
      ' Link type       : Ethernet',
      ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]',
      ' 65536      5000             2940.10            2938.52\t\t     0.047016',
      '',
    ].join('\n');
    const r = run('perftest', text).facts.results[0];
    expect(r.bwAvgGbps).toBeCloseTo(23.50816, 5);
    expect(r.bwPeakGbps).toBeCloseTo(23.5208, 4);
  });
  it('RoCE client with duration, CPU_Util column, GID lines', () => {
    const { facts } = sample('perftest', 'ib_write_bw__gb10-cx7-roce-client-duration-cpu-util-masked.txt');
    expect(facts).toMatchObject({
      side: 'client',
      device: 'roceP2p1s0f0',
      linkType: 'Ethernet',
      gidIndex: 3,
      mtu: 1024,
      localIpv4: '192.168.100.15',
      remoteIpv4: '192.168.100.10',
    });
    expect(facts.results).toEqual([
      { bytes: 65536, iterations: 1059332, bwPeakGbps: 0, bwAvgGbps: 92.57, msgRateMpps: 0.176557, cpuUtilPct: 5.07 },
    ]);
  });
  it('post-list test with tabs in the row', () => {
    const { facts } = sample('perftest', 'ib_write_bw__roce-postlist-8B-raw-tabs-in-row.txt');
    expect(facts).toMatchObject({
      test: 'ib_write_bw',
      device: 'ib0',
      linkType: 'Ethernet',
      gidIndex: 2,
      postList: 128,
    });
    expect(facts.results).toEqual([
      { bytes: 8, iterations: 224958464, bwPeakGbps: 0, bwAvgGbps: 0.48, msgRateMpps: 7.498617 },
    ]);
  });
  it('server side cut in the result row: what remains', () => {
    const { facts } = sample('perftest', 'ib_write_bw__roce-server-duration-raw-tabs-TRUNCATED.txt');
    expect(facts).toMatchObject({ side: 'server', unit: 'MB/sec', gidIndex: 3, linkType: 'Ethernet' });
    expect(facts.results).toEqual([{ bytes: 65536, iterations: 664644 }]);
  });
  it('latency tests: typical and average µs', () => {
    const a = sample('perftest', 'ib_send_lat__cx7-ndr-ib-client-newest-perftest-raw-tabs.txt').facts;
    expect(a).toMatchObject({ test: 'ib_send_lat', side: 'client', metric: 'lat' });
    expect(a.results).toEqual([
      {
        bytes: 2,
        iterations: 1000,
        tMinUs: 1.24,
        tMaxUs: 5.19,
        tTypicalUs: 1.27,
        tAvgUs: 1.27,
        tStdevUs: 0,
        p99Us: 1.37,
        p999Us: 5.19,
      },
    ]);
    const b = sample('perftest', 'ib_read_lat__roce-gid3-k8s-pod-percentiles.txt').facts;
    expect(b).toMatchObject({ test: 'ib_read_lat', linkType: 'Ethernet', gidIndex: 3 });
    expect(b.results[0]).toMatchObject({ bytes: 2, iterations: 1000, tTypicalUs: 4.83, tAvgUs: 4.82 });
  });
});

describe('lsmod', () => {
  it('grepped listings: modules with size and users', () => {
    const a = sample('lsmod', 'lsmod__grep-nvidia_peermem-mofed-ib_core-user.txt').facts;
    expect(a.modules[0]).toEqual({ name: 'nvidia_peermem', size: 16384, usedCount: 0, usedBy: [] });
    expect(a.modules[1].usedBy).toContain('nvidia_peermem');
    const b = sample('lsmod', 'lsmod__grep-nvid-ubuntu-6.8-inbox-peermem-via-ib_uverbs.txt').facts;
    expect(b.grep).toEqual({ pattern: 'nvid' });
    expect(b.modules.map((m: any) => m.name)).toEqual([
      'nvidia_uvm',
      'nvidia_peermem',
      'ib_uverbs',
      'nvidia_drm',
      'nvidia_modeset',
      'nvidia',
      'video',
    ]);
    const c = sample('lsmod', 'lsmod__grep-nvidia-gpu-operator-doc-nvidia_fs-peermem.txt').facts;
    expect(c.modules.map((m: any) => m.name)).toContain('nvidia_fs');
    expect(c.grep).toEqual({ pattern: 'nvidia' });
    const d = sample('lsmod', 'lsmod-grep-nvidia__h100-peermem-gdrdrv.txt').facts;
    expect(d.modules).toHaveLength(8);
    expect(d.modules.find((m: any) => m.name === 'nvidia')).toEqual({
      name: 'nvidia',
      size: 56598528,
      usedCount: 147,
      usedBy: ['nvidia_uvm', 'nvidia_peermem', 'gdrdrv', 'nvidia_modeset'],
    });
  });
});

describe('other host-software and NIC kinds', () => {
  it('show_counters: hw counters of mlx5_0 port 1', () => {
    const { facts } = sample('show_counters', 'show_counters__mlx5_0-roce-hw-counters-nonzero-errors.txt');
    expect(facts.device).toBe('mlx5_0');
    expect(facts.sections[0]).toMatchObject({ port: 1, set: 'hw' });
    expect(facts.counters).toMatchObject({
      out_of_buffer: 135,
      req_cqe_error: 22,
      resp_cqe_error: 1009,
      np_cnp_sent: 0,
      rp_cnp_handled: 0,
    });
  });
  it('sysfs-infiniband: port attributes and hw_counters', () => {
    const a = sample('sysfs-infiniband', 'sysfs-infiniband__grep-H-port-attrs-h100-cx7-ib-plus-bf3-bond.txt').facts;
    expect(a.ports).toHaveLength(9);
    expect(a.ports.at(-1)).toEqual({
      device: 'mlx5_bond_0',
      port: 1,
      linkLayer: 'Ethernet',
      physState: 'LinkUp',
      rateGbps: 200,
      rate: '200 Gb/sec (2X NDR)',
      stateCode: 4,
      state: 'ACTIVE',
    });
    expect(a.devices.at(-1)).toEqual({
      device: 'mlx5_bond_0',
      boardId: 'MT_0000000884',
      fwVer: '32.38.3056',
      hcaType: 'MT41692',
    });
    const b = sample('sysfs-infiniband', 'sysfs-infiniband__grep-H-hw_counters-bf3-bond-and-cx7-ib.txt').facts;
    expect(Object.keys(b.counters)).toEqual(['mlx5_bond_0/1', 'mlx5_0/1']);
    expect(b.counters['mlx5_bond_0/1']).toMatchObject({
      roce_adp_retrans: 3,
      rx_write_requests: 3809045607,
      out_of_buffer: 0,
    });
  });
  it('modinfo nv_peer_mem (two legacy builds)', () => {
    expect(sample('modinfo', 'modinfo__nv_peer_mem-legacy-1.0-8-ubuntu1804.txt').facts.modules).toEqual([
      expect.objectContaining({
        name: 'nv_peer_mem',
        version: '1.0-8',
        depends: ['ib_core'],
        kernel: '4.15.0-46-generic',
      }),
    ]);
    expect(
      sample('modinfo', 'modinfo__nv_peer_mem-legacy-1.0-9-rhel7-depends-ib_core-nvidia.txt').facts.modules,
    ).toEqual([
      expect.objectContaining({
        name: 'nv_peer_mem',
        version: '1.0-9',
        depends: ['ib_core', 'nvidia'],
        kernel: '3.10.0-1127.el7.x86_64',
      }),
    ]);
  });
  it('mst status -v and plain mst status', () => {
    const a = sample('mst-status', 'mst-status-v__h100-8x-cx7-ib-pciconf-net-ibp.txt').facts;
    expect(a).toMatchObject({ pciModuleLoaded: false, pciConfModuleLoaded: true });
    expect(a.devices).toHaveLength(6);
    expect(a.devices[5]).toEqual({
      type: 'ConnectX7(rev:0)',
      mst: '/dev/mst/mt4129_pciconf0',
      bdf: '0000:41:00.0',
      rdma: 'mlx5_0',
      net: 'ibp65s0',
      numa: 0,
    });
    const b = sample('mst-status', 'mst-status-v__roce-lag-mlx5_bond-net-bond-modules-not-loaded.txt').facts;
    expect(b.devices.map((d: any) => `${d.type} ${d.bdf} ${d.rdma} ${d.net}`)).toEqual([
      'ConnectX6DX(rev:0) 0000:17:00.1 mlx5_bond_1 bond1',
      'ConnectX4LX(rev:0) 0000:31:00.0 mlx5_bond_0 bond0',
      'ConnectX4LX(rev:0) 0000:31:00.1 mlx5_bond_0 bond0',
      'ConnectX6DX(rev:0) 0000:17:00.0 mlx5_bond_1 bond1',
    ]);
    expect(b.devices[0].mst).toBeUndefined();
    expect(sample('mst-status', 'mst-status__mft-4.22-pciconf-only-cx6-mt4123.txt').facts.devices).toEqual([
      { mst: '/dev/mst/mt4123_pciconf0', bdf: '0000:65:00.0', access: 'PCI configuration cycles access' },
    ]);
  });
  it('dkms status (old comma format) and the dkms 3 format', () => {
    expect(sample('dkms-status', 'dkms-status__nvidia-old-comma-format.txt').facts.modules).toEqual([
      { name: 'nvidia', version: '460.91.03', kernel: '5.11.0-36-generic', arch: 'x86_64', status: 'installed' },
    ]);
    expect(
      run('dkms-status', 'nvidia/535.183.01, 6.5.0-35-generic, x86_64: installed\nnv_peer_mem/1.3: added\n').facts
        .modules,
    ).toEqual([
      { name: 'nvidia', version: '535.183.01', kernel: '6.5.0-35-generic', arch: 'x86_64', status: 'installed' },
      { name: 'nv_peer_mem', version: '1.3', status: 'added' },
    ]);
  });
  it('cma_roce_mode: last printed mode, with the set in between', () => {
    const { facts } = sample('cma_roce_mode', 'cma_roce_mode__query-v1-set-v2-query-v2.txt');
    expect(facts).toMatchObject({ device: 'mlx5_0', port: 1, mode: 'v2' });
    expect(facts.history.map((h: any) => `${h.mode}${h.set ? ' (set)' : ''}`)).toEqual(['v1', 'v2 (set)', 'v2']);
  });
  it('ip -d link (mail-wrapped bond line), ip -s -s link, ip -d -j addr', () => {
    const a = sample('ip-link', 'ip-d-link__bond0-balance-xor-down-mail-wrapped.txt').facts;
    expect(a.netdevs[0]).toMatchObject({
      ifname: 'bond0',
      ifindex: 11,
      mtu: 1500,
      operstate: 'DOWN',
      linkKind: 'bond',
      bond: { mode: 'balance-xor', miimon: 0, xmitHashPolicy: 'vlan+mac', lacpRate: 'slow' },
    });
    const b = sample('ip-link', 'ip-s-s-link__cx7-ens4np0-altname.txt').facts;
    expect(b.netdevs[0]).toMatchObject({
      ifname: 'ens4np0',
      mtu: 1500,
      operstate: 'UP',
      altnames: ['enp230s0np0'],
      mac: 'd8:94:24:4a:af:a2',
    });
    expect(b.netdevs[0].stats).toMatchObject({
      rx_bytes: 113679554,
      rx_errors: 54,
      rx_crc: 0,
      tx_packets: 200165,
      tx_transns: 3,
    });
    const c = sample('ip-link', 'ip-d-j-addr__netplan-test-fixture-laptop-wg-sit-tun.txt').facts;
    expect(c.format).toBe('json');
    expect(c.netdevs.map((n: any) => n.ifname)).toEqual(['lo', 'enp0s31f6', 'wlan0', 'wg0', 'wwan0', 'tun0', 'tun1']);
    expect(c.netdevs[1].addresses[0]).toMatchObject({ family: 'inet', local: '192.168.178.62', prefixlen: 24 });
  });
  it('roce-validate bundle: ip -o addr, port state, link layer, rdma system, lsmod', () => {
    const { facts } = sample('roce-validate', 'roce-validate__ip-o-addr-sysfs-state-rdma-system-lsmod-peermem.txt');
    expect(facts).toMatchObject({
      portState: 'ACTIVE',
      portStateCode: 4,
      linkLayer: 'Ethernet',
      rdmaSystem: { netns: 'shared', copyOnFork: 'on' },
    });
    expect(facts.netdevs[0]).toMatchObject({
      ifname: 'rdma7',
      mtu: 4220,
      operstate: 'UP',
      addresses: [{ family: 'inet', local: '10.224.7.143', prefixlen: 12, scope: 'global' }],
    });
    expect(facts.modules.map((m: any) => m.name)).toEqual(['nvidia_peermem', 'ib_core', 'nvidia']);
  });
});

describe('existing parsers as kinds', () => {
  it('ethtool: speed, link, reason', () => {
    expect(sample('ethtool', 'ethtool__cx4-100g-qsfp28-forced-40g-unsupported-cable.txt').facts).toMatchObject({
      linkDetected: false,
      linkReason: 'Cable issue, Unsupported cable',
    });
    expect(
      sample('ethtool', 'ethtool__cx4-100g-qsfp28-forced-40g-unsupported-cable.txt').facts.speedMbps,
    ).toBeUndefined();
    expect(sample('ethtool', 'ethtool__cx4lx-25g-at-10g-centos-old-ethtool-fec-BaseR.txt').facts).toMatchObject({
      speedMbps: 10000,
      linkDetected: true,
      netdev: 'p4p2',
    });
    expect(sample('ethtool', 'ethtool__intel-xxv710-25g-dac-autoneg-off.txt').facts).toMatchObject({
      speedMbps: 25000,
      linkDetected: true,
    });
  });
  it('ethtool -i: driver, version, firmware, busInfo (every block kept)', () => {
    expect(sample('ethtool-i', 'ethtool-i__cx7-mofed-23.10.txt').facts).toMatchObject({
      driver: 'mlx5_core',
      version: '23.10-1.1.9',
      firmware: '28.39.3560 (MT_0000000838)',
      busInfo: '0000:e6:00.0',
    });
    expect(sample('ethtool-i', 'ethtool-i__cx4lx-ubuntu1804-inbox-5.0-0.txt').facts).toMatchObject({
      version: '5.0-0',
      firmware: '14.23.1020 (MT_2420110034)',
      busInfo: '0000:af:00.0',
    });
    const f = sample('ethtool-i', 'ethtool-i__cx4lx-mofed-5.0-2.1.8-two-fw-versions.txt').facts;
    expect(f).toMatchObject({ driver: 'mlx5_core', version: '5.0-2.1.8', busInfo: '0000:2f:00.0' });
    expect(f.interfaces.map((b: any) => b.firmwareVersion)).toEqual([
      '14.28.2006',
      '14.28.2006',
      '14.32.1010',
      '14.32.1010',
    ]);
  });
  it('ofed_info: version and flavor', () => {
    expect(sample('ofed_info', 'ofed_info-s__mofed-5.1-0.6.6.0-centos.txt').facts).toMatchObject({
      version: '5.1-0.6.6.0',
      flavor: 'MLNX_OFED',
    });
    expect(sample('ofed_info', 'ofed_info-s__mofed-5.4-3.6.8-three-part-build-ubuntu.txt').facts).toMatchObject({
      version: '5.4-3.6.8',
      flavor: 'MLNX_OFED',
    });
    expect(
      sample('ofed_info', 'ofed_info-s__mofed-4.0-2.0.0.1-cx3-plus-lspci-network-controller.txt').facts,
    ).toMatchObject({ version: '4.0-2.0.0.1', flavor: 'MLNX_OFED' });
    expect(sample('ofed_info', 'ofed_info-s-and-n__mofed-5.4-3.1.0.0.txt').facts).toMatchObject({
      version: '5.4-3.1.0.0',
      flavor: 'MLNX_OFED',
    });
    expect(sample('ofed_info', 'ofed_info-n__mofed-5.0-2.1.8-centos7-cx5.txt').facts.version).toBe('5.0-2.1.8');
    expect(sample('ofed_info', 'ofed_info__full-head-mofed-5.2-centos7-TRUNCATED.txt').facts).toMatchObject({
      version: '5.2-1.0.4.0',
      flavor: 'MLNX_OFED',
    });
    expect(
      sample('ofed_info', 'ofed_info-s__command-not-found-plus-ibv_devinfo-vv-rdma-core17-raw-tabs-TRUNCATED.txt')
        .facts,
    ).toEqual({ notInstalled: true });
    expect(
      sample('ofed_info', 'ibdev2netdev-v__bluefield3-supernic-ib-and-eth-long-padded-desc-plus-ofed_info.txt').facts,
    ).toMatchObject({ version: '24.07-0.6.1', flavor: 'DOCA' });
  });
  it('lspci: bdf, class, description', () => {
    const f = sample('lspci', 'lspci-nn__grep-mellanox-azure-a100-cx6-vf-cx4lx-vf.txt').facts;
    expect(f.devices.length).toBeGreaterThan(0);
    expect(f.devices[0]).toMatchObject({
      bdf: expect.stringMatching(/^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/),
      class: expect.any(String),
      description: expect.stringContaining('Mellanox'),
    });
    const off = sample('lspci', 'lspci-vv__cx6-fallen-off-bus-rev-ff-unknown-header-7f.txt').facts;
    expect(off.devices.some((d: any) => d.offBus)).toBe(true);
    for (const file of [
      'lspci__grep-mellanox-h100-cx7-cx6dx.txt',
      'lspci__grep-mellanox-gb200-cx7-bridges-bluefield3.txt',
      'lspci__grep-mellanox-gb10-cx7-dualport.txt',
      'lspci-vvv__cx7-mcx75310aas-neat-400g-ndr-vpd.txt',
    ]) {
      expect(sample('lspci', file).facts.devices.length, file).toBeGreaterThan(0);
    }
  });
});
