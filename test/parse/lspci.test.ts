import { describe, expect, it } from 'vitest';
import { groupBySlot, parseLspci } from '../../src/parse/lspci.js';
import {
  ansiWrap,
  CUTS,
  loadFixture,
  spacesToTabs,
  tabsToSpaces,
  toCrlf,
  truncateAt,
  withPrompt,
  withTrailingSpaces,
} from './fixtures.js';

const AZURE = 'corpus/lspci-nn__grep-mellanox-azure-a100-cx6-vf-cx4lx-vf.txt';
const OFFBUS = 'corpus/lspci-vv__cx6-fallen-off-bus-rev-ff-unknown-header-7f.txt';
const CX7_VVV = 'corpus/lspci-vvv__cx7-mcx75310aas-neat-400g-ndr-vpd.txt';
const GB10 = 'corpus/lspci__grep-mellanox-gb10-cx7-dualport.txt';
const GB200 = 'corpus/lspci__grep-mellanox-gb200-cx7-bridges-bluefield3.txt';
const H100 = 'corpus/lspci__grep-mellanox-h100-cx7-cx6dx.txt';
const OFED_N = 'corpus/ofed_info-n__mofed-5.0-2.1.8-centos7-cx5.txt';
const OFED_CX3 = 'corpus/ofed_info-s__mofed-4.0-2.0.0.1-cx3-plus-lspci-network-controller.txt';
const SRIOV = 'corpus/ibdev2netdev__cx6-ib-sriov-vfs-ibpXsYvZ-partial.txt';

// `lspci -D -nn -d 10de:` and `-d 15b3:` as the lab models a l20 node (formats per pciutils 3.7, jammy).
const L20_NN = `0000:18:00.0 3D controller [0302]: NVIDIA Corporation AD102GL [L20] [10de:26ba] (rev a1)
0000:19:00.0 3D controller [0302]: NVIDIA Corporation AD102GL [L20] [10de:26ba] (rev a1)
0000:1a:00.0 Ethernet controller [0200]: Mellanox Technologies MT27710 Family [ConnectX-4 Lx] [15b3:1015]
0000:1a:00.1 Ethernet controller [0200]: Mellanox Technologies MT27710 Family [ConnectX-4 Lx] [15b3:1015]
0000:9a:00.0 Ethernet controller [0200]: Mellanox Technologies MT27710 Family [ConnectX-4 Lx] [15b3:1015]
0000:9a:00.1 Ethernet controller [0200]: Mellanox Technologies MT27710 Family [ConnectX-4 Lx] [15b3:1015]
0000:00:17.0 SATA controller [0106]: Intel Corporation Device [8086:1bf2] (rev 11) (prog-if 01 [AHCI 1.0])
`;

// A switch downstream port and a GPU below it, `lspci -vv` with tabs as printed by pciutils.
const VV_BRIDGE_GPU = [
  '0000:17:02.0 PCI bridge [0604]: Broadcom / LSI PEX890xx PCIe Gen 5 Switch [1000:c030] (rev b0) (prog-if 00 [Normal decode])',
  '\tControl: I/O+ Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+',
  '\tBus: primary=17, secondary=18, subordinate=18, sec-latency=0',
  '\tPhysical Slot: 2',
  '\tCapabilities: [68] Express (v2) Downstream Port (Slot+), MSI 00',
  '\t\tLnkCap:\tPort #2, Speed 32GT/s, Width x16, ASPM not supported',
  '\t\t\tClockPM- Surprise+ LLActRep+ BwNot+ ASPMOptComp+',
  '\t\tLnkSta:\tSpeed 16GT/s (downgraded), Width x16 (ok)',
  '\t\t\tTrErr- Train- SlotClk+ DLActive+ BWMgmt+ ABWMgmt-',
  '\tCapabilities: [f24 v1] Access Control Services',
  '\t\tACSCap:\tSrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl+ DirectTrans+',
  '\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-',
  '\tKernel driver in use: pcieport',
  '',
  '0000:18:00.0 3D controller [0302]: NVIDIA Corporation AD102GL [L20] [10de:26ba] (rev a1)',
  '\tSubsystem: NVIDIA Corporation Device [10de:1957]',
  '\tPhysical Slot: 2',
  '\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx+',
  '\tNUMA node: 0',
  '\tCapabilities: [78] Express (v2) Legacy Endpoint, MSI 00',
  '\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported',
  '\t\tLnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)',
  '\tKernel driver in use: nvidia',
  '\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia',
  '',
].join('\n');

describe('parseLspci: device lines', () => {
  it('reads -D -nn lines with ids, revision and prog-if', () => {
    const { devices } = parseLspci(L20_NN);
    expect(devices).toHaveLength(7);
    expect(devices[0]).toEqual({
      bdf: '0000:18:00.0',
      class: '3D controller',
      classId: '0302',
      vendorId: '10de',
      deviceId: '26ba',
      description: 'NVIDIA Corporation AD102GL [L20]',
      vendor: 'NVIDIA Corporation',
      deviceName: 'AD102GL [L20]',
      revision: 'a1',
    });
    expect(devices[2]).toMatchObject({
      bdf: '0000:1a:00.0',
      vendorId: '15b3',
      deviceId: '1015',
      deviceName: 'MT27710 Family [ConnectX-4 Lx]',
    });
    expect(devices[2]?.revision).toBeUndefined();
    expect(devices[6]).toMatchObject({
      class: 'SATA controller',
      classId: '0106',
      revision: '11',
      progIf: '01',
      deviceName: 'Device',
    });
    const slots = groupBySlot(devices.filter((d) => d.vendorId === '15b3'));
    expect(Object.keys(slots)).toEqual(['0000:1a:00', '0000:9a:00']);
    expect(slots['0000:1a:00']?.map((d) => d.bdf)).toEqual(['0000:1a:00.0', '0000:1a:00.1']);
  });

  it('reads the Azure -nn grep: 8 CX-6 VFs in domains 0101..0108 and a CX-4 Lx VF', () => {
    const { devices } = parseLspci(loadFixture(AZURE));
    expect(devices).toHaveLength(9);
    expect(devices.map((d) => d.bdf.slice(0, 4))).toEqual([
      '0101',
      '0102',
      '0103',
      '0104',
      '0105',
      '0106',
      '0107',
      '0108',
      'c941',
    ]);
    expect(devices[0]).toMatchObject({
      class: 'Infiniband controller',
      classId: '0207',
      vendorId: '15b3',
      deviceId: '101c',
    });
    expect(devices[8]).toMatchObject({
      bdf: 'c941:00:02.0',
      class: 'Ethernet controller',
      deviceId: '1016',
      revision: '80',
      description: 'Mellanox Technologies MT27710 Family [ConnectX-4 Lx Virtual Function]',
    });
    expect(devices[8]?.offBus).toBeUndefined();
  });

  it('normalises addresses without domain (plain lspci) to 0000:', () => {
    const { devices } = parseLspci(loadFixture(H100));
    expect(devices).toHaveLength(12);
    expect(devices[0]).toMatchObject({
      bdf: '0000:1a:00.0',
      class: 'Ethernet controller',
      deviceName: 'MT2910 Family [ConnectX-7]',
    });
    expect(devices.filter((d) => d.description.includes('ConnectX-6 Dx')).map((d) => d.bdf)).toEqual([
      '0000:1b:00.0',
      '0000:1b:00.1',
      '0000:9d:00.0',
      '0000:9d:00.1',
    ]);
    expect(devices[0]?.vendorId).toBeUndefined();
  });

  it('reads grepped output after a prompt line (GB10, domains 0000 and 0002)', () => {
    const { devices } = parseLspci(loadFixture(GB10));
    expect(devices.map((d) => d.bdf)).toEqual(['0000:01:00.0', '0000:01:00.1', '0002:01:00.0', '0002:01:00.1']);
  });

  it('reads GB200: bridges, Infiniband controllers, BlueField-3 functions with (rev 01)', () => {
    const { devices } = parseLspci(loadFixture(GB200));
    expect(devices).toHaveLength(50);
    expect(devices.filter((d) => d.class === 'PCI bridge')).toHaveLength(40);
    expect(devices.filter((d) => d.class === 'Infiniband controller').map((d) => d.bdf)).toEqual([
      '0000:03:00.0',
      '0002:03:00.0',
      '0010:03:00.0',
      '0012:03:00.0',
    ]);
    const dma = devices.find((d) => d.bdf === '0006:03:00.2');
    expect(dma).toMatchObject({
      class: 'DMA controller',
      revision: '01',
      deviceName: 'MT43244 BlueField-3 SoC Management Interface',
    });
  });

  it('finds lspci lines among other commands in a pasted session', () => {
    expect(parseLspci(loadFixture(OFED_N)).devices.map((d) => d.bdf)).toEqual(['0000:b3:00.0', '0000:b3:00.1']);
    const cx3 = parseLspci(loadFixture(OFED_CX3)).devices;
    expect(cx3).toEqual([
      expect.objectContaining({
        bdf: '0000:01:00.0',
        class: 'Network controller',
        deviceName: 'MT27500 Family [ConnectX-3]',
      }),
    ]);
    const sriov = parseLspci(loadFixture(SRIOV)).devices;
    expect(sriov).toHaveLength(8);
    expect(sriov.filter((d) => d.description.endsWith('Virtual Function]'))).toHaveLength(5);
  });
});

describe('parseLspci: verbose blocks', () => {
  it('marks the fallen-off-bus device from (rev ff) and Unknown header type 7f', () => {
    const { devices } = parseLspci(loadFixture(OFFBUS));
    // `lspci | grep` lists both functions, then `lspci -s 01:00.0 -vv` lists 01:00.0 again.
    expect(devices.map((d) => d.bdf)).toEqual(['0000:01:00.0', '0000:01:00.1', '0000:01:00.0']);
    expect(devices[0]?.offBus).toBeUndefined();
    expect(devices[2]).toMatchObject({
      revision: 'ff',
      progIf: 'ff',
      offBus: true,
      driver: 'mlx5_core',
      modules: ['mlx5_core'],
    });
    expect(devices[2]?.lnkSta).toBeUndefined();
  });

  it('reads the CX-7 -vvv block: NUMA node, link, subsystem, endpoint type', () => {
    const { devices } = parseLspci(loadFixture(CX7_VVV));
    expect(devices).toHaveLength(1);
    const d = devices[0];
    expect(d).toMatchObject({
      bdf: '0000:1a:00.0',
      numaNode: 0,
      pcieType: 'Endpoint',
      lnkCap: { speedGTs: 32, width: 16 },
      lnkSta: { speedGTs: 32, width: 16, speedDowngraded: false, widthDowngraded: false },
      downgraded: false,
      subsystem: { name: 'Mellanox Technologies MT2910 Family [ConnectX-7]' },
    });
    // The ARI capability's `ACS-` is not the ACS capability.
    expect(d?.acsCtl).toBeUndefined();
  });

  it('reads ACS flags, link downgrade, bridge buses and subsystem ids', () => {
    const { devices } = parseLspci(VV_BRIDGE_GPU);
    expect(devices).toHaveLength(2);
    const [bridge, gpu] = devices;
    expect(bridge).toMatchObject({
      bdf: '0000:17:02.0',
      pcieType: 'Downstream Port',
      secondaryBus: '18',
      subordinateBus: '18',
      physicalSlot: '2',
      lnkCap: { speedGTs: 32, width: 16 },
      lnkSta: { speedGTs: 16, width: 16, speedDowngraded: true, widthDowngraded: false },
      downgraded: true,
      driver: 'pcieport',
    });
    expect(bridge?.acsCtl).toEqual({
      SrcValid: true,
      TransBlk: false,
      ReqRedir: true,
      CmpltRedir: true,
      UpstreamFwd: true,
      EgressCtrl: false,
      DirectTrans: false,
    });
    expect(bridge?.acsCap?.DirectTrans).toBe(true);
    expect(gpu).toMatchObject({
      subsystem: { name: 'NVIDIA Corporation Device', vendorId: '10de', deviceId: '1957' },
      numaNode: 0,
      pcieType: 'Legacy Endpoint',
      downgraded: false,
      driver: 'nvidia',
      modules: ['nvidiafb', 'nouveau', 'nvidia_drm', 'nvidia'],
    });
  });

  it('computes downgraded from older pciutils output without (ok)/(downgraded)', () => {
    const text = [
      '3b:00.0 3D controller: NVIDIA Corporation Device 26ba (rev a1)',
      '\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported',
      '\t\tLnkSta:\tSpeed 2.5GT/s, Width x8, TrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-',
    ].join('\n');
    const d = parseLspci(text).devices[0];
    expect(d).toMatchObject({ lnkSta: { speedGTs: 2.5, width: 8 }, downgraded: true });
  });

  it('joins an ACS flag list wrapped onto the next line', () => {
    const text = [
      '00:03.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Device 1483',
      '\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+',
      'EgressCtrl- DirectTrans-',
    ].join('\n');
    expect(parseLspci(text).devices[0]?.acsCtl).toMatchObject({
      UpstreamFwd: true,
      EgressCtrl: false,
      DirectTrans: false,
    });
  });

  it('does not read a width from a LnkSta line cut after `x1`', () => {
    const text =
      '0000:18:00.0 3D controller: NVIDIA Corporation AD102GL [L20] (rev a1)\n\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n\t\tLnkSta:\tSpeed 16GT/s (ok), Width x1';
    const d = parseLspci(text).devices[0];
    expect(d?.lnkSta).toEqual({ speedGTs: 16, speedDowngraded: false });
    expect(d?.downgraded).toBe(false);
  });

  it('notes capabilities hidden from a non-root lspci', () => {
    const text =
      '0000:18:00.0 3D controller: NVIDIA Corporation AD102GL [L20] (rev a1)\n\tCapabilities: <access denied>\n';
    expect(parseLspci(text).devices[0]).toMatchObject({ capabilitiesDenied: true });
  });
});

describe('parseLspci: variations', () => {
  const samples = [AZURE, OFFBUS, CX7_VVV, GB200];
  it.each(samples)('%s: CRLF, ANSI, tabs/spaces, prompt, trailing spaces keep the facts', (name) => {
    const text = loadFixture(name);
    const base = parseLspci(text);
    for (const variant of [toCrlf(text), ansiWrap(text), withPrompt(text, 'lspci -vv'), withTrailingSpaces(text)]) {
      expect(parseLspci(variant)).toEqual(base);
    }
    const respaced = parseLspci(tabsToSpaces(text));
    expect(respaced.devices.map((d) => [d.bdf, d.lnkSta, d.numaNode, d.offBus])).toEqual(
      base.devices.map((d) => [d.bdf, d.lnkSta, d.numaNode, d.offBus]),
    );
    expect(parseLspci(spacesToTabs(text)).devices.map((d) => d.bdf)).toEqual(base.devices.map((d) => d.bdf));
  });

  it.each(samples)('%s: truncation never throws and keeps complete devices', (name) => {
    const text = loadFixture(name);
    const base = parseLspci(text).devices;
    for (const f of CUTS) {
      const cut = parseLspci(truncateAt(text, f)).devices;
      expect(cut.length).toBeLessThanOrEqual(base.length);
      // Every device except possibly the last (cut) one is identical in address.
      cut.slice(0, -1).forEach((d, i) => expect(d.bdf).toBe(base[i]?.bdf));
    }
  });

  it('never throws on junk', () => {
    for (const junk of [
      '',
      '\n\n',
      'garbage',
      '0000:zz:00.0 foo',
      '1a:00.0',
      '1a:00.0 Ethernet controller',
      '\u0000\u001b[2J',
    ]) {
      expect(() => parseLspci(junk)).not.toThrow();
    }
    expect(parseLspci('1a:00.0 Ethernet controller').devices).toEqual([]);
    // @ts-expect-error: callers may pass anything at runtime
    expect(parseLspci(undefined)).toEqual({ devices: [] });
  });
});
