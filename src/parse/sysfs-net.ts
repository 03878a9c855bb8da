/**
 * Output of `for i in /sys/class/net/*; do echo "$i $(readlink -f $i/device)"; done`:
 * `/sys/class/net/<if> <resolved device path>`. A PCI netdev resolves to
 * `/sys/devices/pci0000:17/0000:17:02.0/0000:18:00.0/0000:1a:00.0`; a virtual one (lo, bond0) has no
 * `device` link, and `readlink -f` then prints `/sys/devices/virtual/net/<if>/device` (the missing
 * last component canonicalised) or nothing. Every BDF in the path is an upstream bridge or the
 * device itself, root first.
 */
import { z } from 'zod';
import { BDF_PATTERN, cleanLines, compact, guard, normalizeBdf, validate } from './common.js';

export const SysfsNetEntrySchema = z.object({
  /** The netdev's own PCI function, when the path ends in one. */
  bdf: z.string().nullable(),
  /** Every BDF in the path, upstream first (root port … device). */
  pciPath: z.array(z.string()),
  /** The resolved path as printed ('' when readlink printed nothing). */
  path: z.string(),
  /** Under /sys/devices/virtual, or no device at all. */
  virtual: z.boolean(),
});
export type SysfsNetEntry = z.infer<typeof SysfsNetEntrySchema>;

export const SysfsNetFactsSchema = z.object({
  netdevs: z.record(z.string(), SysfsNetEntrySchema),
});
export type SysfsNetFacts = z.infer<typeof SysfsNetFactsSchema>;

const SEGMENT_BDF = new RegExp(`^${BDF_PATTERN}$`);

/**
 * The PCI functions in a resolved sysfs device path, upstream first, and the function the path ends
 * in (if any). `/sys/devices/…/0000:1a:00.0/net/ens1f0` (a readlink of the netdev itself) and
 * `…/virtual/net/lo/device` both reduce to the segments before `net`.
 */
export function pciPathOf(path: string): { bdf: string | null; pciPath: string[]; segments: string[] } {
  const segments = path.split('/').filter((s) => s !== '');
  const netIdx = segments.lastIndexOf('net');
  const devSegments = netIdx >= 0 ? segments.slice(0, netIdx) : segments;
  const pciPath = devSegments
    .filter((s) => SEGMENT_BDF.test(s))
    .map((s) => normalizeBdf(s))
    .filter((s): s is string => s !== undefined);
  const last = devSegments[devSegments.length - 1];
  const bdf = last !== undefined && SEGMENT_BDF.test(last) ? (normalizeBdf(last) ?? null) : null;
  return { bdf, pciPath, segments };
}

export function parseSysfsNet(text: string): SysfsNetFacts {
  return guard(
    () => {
      const netdevs: Record<string, SysfsNetEntry> = {};
      for (const line of cleanLines(text, { commands: ['for', 'readlink', 'ls'] })) {
        const m = /^\s*\/sys\/class\/net\/([^\s/]+)\/?(?:\s+(\S+))?\s*$/.exec(line);
        if (!m || m[1] === undefined) continue;
        const ifname = m[1];
        const path = m[2] ?? '';
        const { bdf, pciPath, segments } = pciPathOf(path);
        const virtual = path === '' || segments.includes('virtual') || (bdf === null && pciPath.length === 0);
        netdevs[ifname] = compact({ bdf, pciPath, path, virtual });
      }
      return validate(SysfsNetFactsSchema, { netdevs });
    },
    () => ({ netdevs: {} }),
  );
}
