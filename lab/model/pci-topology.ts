/**
 * The PCI tree of an 8 × L20 server: per socket two Broadcom PEX880xx (Gen4) switches behind
 * Sapphire Rapids root ports, two GPUs per switch, ConnectX-4 Lx NIC 1 under the first switch of
 * socket 0 and NIC 2 under the first switch of socket 1, and an Intel I210 management NIC behind
 * a PCH root port. Bus numbers follow a real SPR layout (root buses 0x15/0x37/0x95/0xb7, root
 * ports at xx:01.0 as Intel 352a), so the GPUs land on 18/19/3a/3b/98/99/ba/bb and the NICs on
 * 1a and 9a, as docs/STAGES.md §4.1 requires.
 */
import type { AcsFlags, PciBar, PciFunction } from './types.js';
import type { Rng } from '../util/prng.js';

export const VENDOR = { intel: 0x8086, nvidia: 0x10de, mellanox: 0x15b3, broadcom: 0x1000, aspeed: 0x1a03 } as const;

const NO_ACS: AcsFlags = {
  srcValid: false,
  transBlk: false,
  reqRedir: false,
  cmpltRedir: false,
  upstreamFwd: false,
  egressCtrl: false,
  directTrans: false,
};
/** What PEX880xx downstream ports and SPR root ports can do (all but egress control/direct translated). */
const SWITCH_ACS_CAP: AcsFlags = {
  srcValid: true,
  transBlk: true,
  reqRedir: true,
  cmpltRedir: true,
  upstreamFwd: true,
  egressCtrl: false,
  directTrans: false,
};
const RP_ACS_CAP: AcsFlags = { ...SWITCH_ACS_CAP, egressCtrl: false, directTrans: false };

export function noAcs(): AcsFlags {
  return { ...NO_ACS };
}

const hex2 = (n: number): string => n.toString(16).padStart(2, '0');
export const bdfOf = (bus: number, dev: number, fn: number): string => `0000:${hex2(bus)}:${hex2(dev)}.${fn}`;

interface SwitchPlan {
  rootBus: number;
  numa: number;
  gpus: number;
  /** NIC slot number when a ConnectX-4 Lx hangs off this switch. */
  nicSlot?: number;
}

/** Switch layout: [socket 0: A (GPUs 0,1 + NIC 1), B (GPUs 2,3)], [socket 1: C (GPUs 4,5 + NIC 2), D (GPUs 6,7)]. */
const SWITCHES: SwitchPlan[] = [
  { rootBus: 0x15, numa: 0, gpus: 2, nicSlot: 1 },
  { rootBus: 0x37, numa: 0, gpus: 2 },
  { rootBus: 0x95, numa: 1, gpus: 2, nicSlot: 2 },
  { rootBus: 0xb7, numa: 1, gpus: 2 },
];

function bar(index: number, kind: PciBar['kind'], prefetchable: boolean, address: bigint, size: bigint): PciBar {
  return { index, kind, prefetchable, address, size };
}

export function buildPciTree(r: Rng): PciFunction[] {
  const out: PciFunction[] = [];
  let irq = 32;
  const nextIrq = (): number => irq++;
  const serial = (): string => r.bytes(8).map(hex2).join('-');

  // Host bridges ("System peripheral: Intel Corporation Device 09a2") on every root bus used.
  for (const rb of [0x00, ...SWITCHES.map((s) => s.rootBus)]) {
    out.push({
      bdf: bdfOf(rb, 0, 0),
      kind: 'host-bridge',
      vendorId: VENDOR.intel,
      deviceId: 0x09a2,
      subVendorId: VENDOR.intel,
      subDeviceId: 0x0000,
      classCode: 0x088000,
      revision: 0x20,
      rootBus: `pci0000:${hex2(rb)}`,
      numaNode: rb >= 0x80 ? 1 : 0,
      modules: [],
      irq: 0,
      bars: [],
      profile: 'host-bridge',
    });
  }

  // Management: PCH root port 00:0f.0 -> I210 at 03:00.0 (eno1); BMC: 00:0d.0 -> AST1150 -> AST2600 VGA.
  out.push({
    bdf: bdfOf(0x00, 0x0d, 0),
    kind: 'root-port',
    vendorId: VENDOR.intel,
    deviceId: 0x1bbd,
    subVendorId: VENDOR.intel,
    subDeviceId: 0x0000,
    classCode: 0x060400,
    revision: 0x10,
    rootBus: 'pci0000:00',
    numaNode: 0,
    irq: nextIrq(),
    modules: [],
    driver: 'pcieport',
    link: { port: 5, capGen: 3, capWidth: 1, staGen: 2, staWidth: 1 },
    bars: [],
    profile: 'pch-rp',
    bridge: { secondary: 0x01, subordinate: 0x02, mem: [0x94000000, 0x950fffff] },
  });
  out.push({
    bdf: bdfOf(0x01, 0, 0),
    kind: 'bmc-bridge',
    parent: bdfOf(0x00, 0x0d, 0),
    vendorId: VENDOR.aspeed,
    deviceId: 0x1150,
    subVendorId: 0,
    subDeviceId: 0,
    classCode: 0x060400,
    revision: 0x06,
    rootBus: 'pci0000:00',
    numaNode: 0,
    irq: 0,
    modules: [],
    bars: [],
    profile: 'ast-bridge',
    link: { port: 0, capGen: 2, capWidth: 1, staGen: 2, staWidth: 1 },
    bridge: { secondary: 0x02, subordinate: 0x02, mem: [0x94000000, 0x950fffff] },
  });
  out.push({
    bdf: bdfOf(0x02, 0, 0),
    kind: 'bmc-vga',
    parent: bdfOf(0x01, 0, 0),
    vendorId: VENDOR.aspeed,
    deviceId: 0x2000,
    subVendorId: VENDOR.aspeed,
    subDeviceId: 0x2000,
    classCode: 0x030000,
    revision: 0x52,
    rootBus: 'pci0000:00',
    numaNode: 0,
    irq: 16,
    modules: ['ast'],
    driver: 'ast',
    profile: 'ast-vga',
    bars: [bar(0, 'mem32', false, 0x94000000n, 0x1000000n), bar(1, 'mem32', false, 0x95000000n, 0x40000n)],
  });
  out.push({
    bdf: bdfOf(0x00, 0x0f, 0),
    kind: 'root-port',
    vendorId: VENDOR.intel,
    deviceId: 0x1bbf,
    subVendorId: VENDOR.intel,
    subDeviceId: 0x0000,
    classCode: 0x060400,
    revision: 0x10,
    rootBus: 'pci0000:00',
    numaNode: 0,
    irq: nextIrq(),
    modules: [],
    driver: 'pcieport',
    link: { port: 7, capGen: 3, capWidth: 1, staGen: 2, staWidth: 1 },
    bars: [],
    profile: 'pch-rp',
    bridge: { secondary: 0x03, subordinate: 0x03, mem: [0x95200000, 0x953fffff] },
  });
  out.push({
    bdf: bdfOf(0x03, 0, 0),
    kind: 'mgmt-nic',
    parent: bdfOf(0x00, 0x0f, 0),
    vendorId: VENDOR.intel,
    deviceId: 0x1533,
    subVendorId: 0x15d9,
    subDeviceId: 0x1533,
    classCode: 0x020000,
    revision: 0x03,
    rootBus: 'pci0000:00',
    numaNode: 0,
    irq: 17,
    modules: ['igb'],
    driver: 'igb',
    profile: 'i210',
    link: { port: 0, capGen: 1, capWidth: 1, staGen: 1, staWidth: 1 },
    bars: [bar(0, 'mem32', false, 0x95200000n, 0x100000n), bar(3, 'mem32', false, 0x95300000n, 0x4000n)],
    serial: serial(),
  });

  SWITCHES.forEach((plan, s) => {
    const rb = plan.rootBus;
    const rootBus = `pci0000:${hex2(rb)}`;
    const rp = bdfOf(rb, 1, 0);
    const up = bdfOf(rb + 1, 0, 0);
    const downs = plan.gpus + (plan.nicSlot ? 1 : 0);
    const lastBus = rb + 2 + downs;
    const mem32 = 0xa0000000 + s * 0x04000000;
    const pref = 0x200000000000n + BigInt(s) * 0x10000000000n;
    const slotSize = 0x2000000000n; // 128G per downstream port
    const prefLimit = pref + BigInt(downs) * slotSize - 1n;
    out.push({
      bdf: rp,
      kind: 'root-port',
      vendorId: VENDOR.intel,
      deviceId: 0x352a,
      subVendorId: VENDOR.intel,
      subDeviceId: 0x0000,
      classCode: 0x060400,
      revision: 0x04,
      rootBus,
      numaNode: plan.numa,
      irq: nextIrq(),
      modules: [],
      driver: 'pcieport',
      profile: 'spr-rp',
      link: { port: 1, capGen: 4, capWidth: 16, staGen: 4, staWidth: 16 },
      bars: [],
      bridge: { secondary: rb + 1, subordinate: lastBus, mem: [mem32, mem32 + 0x03ffffff], pref: [pref, prefLimit] },
      acs: { cap: { ...RP_ACS_CAP }, ctl: noAcs() },
    });
    out.push({
      bdf: up,
      kind: 'switch-up',
      parent: rp,
      vendorId: VENDOR.broadcom,
      deviceId: 0xc010,
      subVendorId: VENDOR.broadcom,
      subDeviceId: 0xa064,
      classCode: 0x060400,
      revision: 0xb0,
      rootBus,
      numaNode: plan.numa,
      irq: 0,
      modules: [],
      driver: 'pcieport',
      profile: 'pex-up',
      link: { port: 0, capGen: 4, capWidth: 16, staGen: 4, staWidth: 16 },
      serial: serial(),
      bars: [bar(0, 'mem32', false, BigInt(mem32 + 0x03800000), 0x40000n)],
      bridge: { secondary: rb + 2, subordinate: lastBus, mem: [mem32, mem32 + 0x037fffff], pref: [pref, prefLimit] },
    });
    for (let d = 0; d < downs; d++) {
      const isNic = plan.nicSlot !== undefined && d === plan.gpus;
      const down = bdfOf(rb + 2, d, 0);
      const bus = rb + 3 + d;
      const slotPref = pref + BigInt(d) * slotSize;
      out.push({
        bdf: down,
        kind: 'switch-down',
        parent: up,
        vendorId: VENDOR.broadcom,
        deviceId: 0xc010,
        subVendorId: VENDOR.broadcom,
        subDeviceId: 0xa064,
        classCode: 0x060400,
        revision: 0xb0,
        rootBus,
        numaNode: plan.numa,
        irq: 0,
        modules: [],
        driver: 'pcieport',
        profile: 'pex-down',
        link: { port: 8 + d * 8, capGen: 4, capWidth: 16, staGen: isNic ? 3 : 4, staWidth: isNic ? 8 : 16 },
        hasSlot: isNic,
        bars: [],
        serial: serial(),
        bridge: {
          secondary: bus,
          subordinate: bus,
          mem: [mem32 + d * 0x01000000, mem32 + d * 0x01000000 + (isNic ? 0x001fffff : 0x00ffffff)],
          pref: [slotPref, slotPref + (isNic ? 0x3ffffffn : 0x1001ffffffn)],
        },
        acs: { cap: { ...SWITCH_ACS_CAP }, ctl: noAcs() },
      });
      if (isNic) {
        for (let fn = 0; fn < 2; fn++) {
          out.push({
            bdf: bdfOf(bus, 0, fn),
            kind: 'nic',
            parent: down,
            vendorId: VENDOR.mellanox,
            deviceId: 0x1015,
            subVendorId: VENDOR.mellanox,
            subDeviceId: 0x0003,
            classCode: 0x020000,
            revision: 0x00,
            rootBus,
            numaNode: plan.numa,
            irq: fn === 0 ? 16 : 17,
            modules: ['mlx5_core'],
            driver: 'mlx5_core',
            profile: 'cx4lx',
            slot: plan.nicSlot,
            link: { port: 0, capGen: 3, capWidth: 8, staGen: 3, staWidth: 8 },
            bars: [bar(0, 'mem64', true, slotPref + BigInt(fn) * 0x2000000n, 0x2000000n)],
            rom: { address: mem32 + d * 0x01000000 + fn * 0x00100000, size: 0x100000, disabled: true },
            acs: { cap: noAcs(), ctl: noAcs() },
          });
        }
      } else {
        out.push({
          bdf: bdfOf(bus, 0, 0),
          kind: 'gpu',
          parent: down,
          vendorId: VENDOR.nvidia,
          deviceId: 0x26ba,
          subVendorId: VENDOR.nvidia,
          subDeviceId: 0x1957,
          classCode: 0x030200,
          revision: 0xa1,
          rootBus,
          numaNode: plan.numa,
          irq: nextIrq(),
          modules: ['nvidiafb', 'nouveau'],
          driver: 'nouveau',
          profile: 'l20',
          link: { port: 0, capGen: 4, capWidth: 16, staGen: 4, staWidth: 16 },
          bars: [
            bar(0, 'mem32', false, BigInt(mem32 + d * 0x01000000), 0x1000000n),
            bar(1, 'mem64', true, slotPref, 0x1000000000n),
            bar(3, 'mem64', true, slotPref + 0x1000000000n, 0x2000000n),
          ],
        });
      }
    }
  });
  return out.sort((a, b) => a.bdf.localeCompare(b.bdf));
}

/** The chain of functions from the root bus down to `bdf` (inclusive), top first. */
export function pciPath(pci: readonly PciFunction[], bdf: string): PciFunction[] {
  const byBdf = new Map(pci.map((p) => [p.bdf, p]));
  const chain: PciFunction[] = [];
  let cur = byBdf.get(bdf);
  while (cur) {
    chain.unshift(cur);
    cur = cur.parent ? byBdf.get(cur.parent) : undefined;
  }
  return chain;
}

/** `/sys/devices/pci0000:15/0000:15:01.0/…/0000:18:00.0` */
export function sysfsDevicePath(pci: readonly PciFunction[], bdf: string): string {
  const chain = pciPath(pci, bdf);
  const first = chain[0];
  if (!first) throw new Error(`unknown PCI function ${bdf}`);
  return `/sys/devices/${first.rootBus}/${chain.map((p) => p.bdf).join('/')}`;
}
