/**
 * Decodes a PCI config-space dump in the `lspci -xxx` text format (what `lspci -F` reads): the identity
 * registers and the PCI Express capability's Link Capabilities (+0x0c) and Link Status (+0x12). Tests use it
 * as the ground truth that lspci's text, in any pciutils version, must parse back to.
 */

/** PCIe link speed codes (PCIe base spec; pciutils `link_speed`). */
const SPEED_GTS: Record<number, number> = { 1: 2.5, 2: 5, 3: 8, 4: 16, 5: 32, 6: 64 };
const PCIE_TYPE: Record<number, string> = { 0: 'Endpoint', 4: 'Root Port', 5: 'Upstream Port', 6: 'Downstream Port' };

export interface PciRegisters {
  bdf: string;
  vendorId: string;
  deviceId: string;
  /** Base class and subclass, `0302`. */
  classId: string;
  type: string;
  cap: { speed?: number; width: number };
  sta: { speed?: number; width: number };
}

const hex4 = (n: number): string => n.toString(16).padStart(4, '0');

export function decodePciDump(dump: string): PciRegisters[] {
  const out: PciRegisters[] = [];
  for (const block of dump.trim().split(/\n(?=[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] )/)) {
    const [head, ...rows] = block.trim().split('\n');
    const bytes = rows.flatMap((r) =>
      r
        .slice(4)
        .trim()
        .split(' ')
        .map((h) => parseInt(h, 16)),
    );
    const at = (o: number, n: number): number => bytes.slice(o, o + n).reduceRight((v, b) => v * 256 + (b ?? 0), 0);
    const cap = bytes[0x34] ?? 0;
    const lnkCap = at(cap + 0x0c, 4);
    const lnkSta = at(cap + 0x12, 2);
    out.push({
      bdf: (head ?? '').split(' ')[0] ?? '',
      vendorId: hex4(at(0, 2)),
      deviceId: hex4(at(2, 2)),
      classId: hex4(at(0x0a, 2)),
      type: PCIE_TYPE[(at(cap + 2, 2) >> 4) & 0xf] ?? '?',
      cap: { speed: SPEED_GTS[lnkCap & 0xf], width: (lnkCap >> 4) & 0x3f },
      sta: { speed: SPEED_GTS[lnkSta & 0xf], width: (lnkSta >> 4) & 0x3f },
    });
  }
  return out;
}
