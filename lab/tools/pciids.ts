/**
 * The slice of pci.ids the lab's devices need, with libpci's name formatting
 * (lib/names.c format_name_pair): unknown devices print `Vendor Device 352a`, or with -nn
 * `Vendor Device [8086:352a]`. Intel SPR/PCH bridges stay unnamed as on the real SPR hosts seen
 * in linux-pci threads (`Intel Corporation Device 352a (rev 04)`); the L20 name follows the
 * spec (`AD102GL [L20]`, as in a real `lspci -vvs` of an L20).
 */
import type { PciFunction } from '../model/types.js';

const VENDORS: Record<number, string> = {
  0x8086: 'Intel Corporation',
  0x10de: 'NVIDIA Corporation',
  0x15b3: 'Mellanox Technologies',
  0x1000: 'Broadcom / LSI',
  0x1a03: 'ASPEED Technology, Inc.',
  0x15d9: 'Super Micro Computer Inc',
};

const DEVICES: Record<string, string> = {
  '10de:26ba': 'AD102GL [L20]',
  '15b3:1015': 'MT27710 Family [ConnectX-4 Lx]',
  '15b3:1016': 'MT27710 Family [ConnectX-4 Lx Virtual Function]',
  '1000:c010': 'PEX880xx PCIe Gen 4 Switch',
  '8086:1533': 'I210 Gigabit Network Connection',
  '1a03:1150': 'AST1150 PCI-to-PCI Bridge',
  '1a03:2000': 'ASPEED Graphics Family',
};

const SUBSYSTEMS: Record<string, string> = {
  '10de:26ba:10de:1957': 'AD102GL [L20]',
  '15b3:1015:15b3:0003': 'Stand-up ConnectX-4 Lx EN, 25GbE dual-port SFP28, PCIe3.0 x8, MCX4121A-ACAT',
  '1a03:2000:1a03:2000': 'ASPEED Graphics Family',
};

const CLASSES: Record<number, string> = {
  0x0200: 'Ethernet controller',
  0x0300: 'VGA compatible controller',
  0x0302: '3D controller',
  0x0604: 'PCI bridge',
  0x0880: 'System peripheral',
};

const PROGIFS: Record<string, string> = {
  '0604:00': 'Normal decode',
  '0300:00': 'VGA controller',
};

const h4 = (n: number): string => n.toString(16).padStart(4, '0');

function pair(v: string | undefined, d: string | undefined, num: string, mixed: boolean): string {
  if (mixed) {
    if (v && d) return `${v} ${d} [${num}]`;
    if (!v) return `Device [${num}]`;
    return `${v} Device [${num}]`;
  }
  if (v && d) return `${v} ${d}`;
  if (!v) return `Device ${num}`;
  return `${v} Device ${num.slice(5)}`;
}

export function vendorDeviceName(p: PciFunction, mixed: boolean): string {
  const num = `${h4(p.vendorId)}:${h4(p.deviceId)}`;
  return pair(VENDORS[p.vendorId], DEVICES[num], num, mixed);
}

export function subsystemName(p: PciFunction, mixed: boolean): string {
  const num = `${h4(p.subVendorId)}:${h4(p.subDeviceId)}`;
  const key = `${h4(p.vendorId)}:${h4(p.deviceId)}:${num}`;
  return pair(VENDORS[p.subVendorId], SUBSYSTEMS[key], num, mixed);
}

export function className(p: PciFunction, mixed: boolean): string {
  const cls = p.classCode >> 8;
  const name = CLASSES[cls] ?? `Class ${h4(cls)}`;
  return mixed ? `${name} [${h4(cls)}]` : name;
}

export function progIfName(p: PciFunction): string | undefined {
  const key = `${h4(p.classCode >> 8)}:${(p.classCode & 0xff).toString(16).padStart(2, '0')}`;
  return PROGIFS[key];
}
