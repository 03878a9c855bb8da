/**
 * `/proc/meminfo` (whole, or `grep MemTotal /proc/meminfo`): `Key:   <number> kB` lines, a few
 * without unit (`HugePages_Total:       0`). The kernel's `kB` means KiB (1024 bytes).
 */
import { z } from 'zod';
import { cleanLines, compact, guard, toInt, validate } from './common.js';

export const MeminfoFactsSchema = z.object({
  memTotalKiB: z.number().int().optional(),
  memFreeKiB: z.number().int().optional(),
  memAvailableKiB: z.number().int().optional(),
  swapTotalKiB: z.number().int().optional(),
  hugePagesTotal: z.number().int().optional(),
  hugePagesFree: z.number().int().optional(),
  hugePageSizeKiB: z.number().int().optional(),
  /** Every `Key: number` line read, value as printed (KiB where the kernel prints `kB`). */
  fields: z.record(z.string(), z.number()),
});
export type MeminfoFacts = z.infer<typeof MeminfoFactsSchema>;

const UNITLESS = new Set(['HugePages_Total', 'HugePages_Free', 'HugePages_Rsvd', 'HugePages_Surp']);

export function parseMeminfo(text: string): MeminfoFacts {
  return guard(
    () => {
      const fields: Record<string, number> = {};
      for (const line of cleanLines(text, { commands: ['grep', 'cat'] })) {
        // Optional `/proc/meminfo:` prefix (grep over several files); key chars include `(`/`)`/`_`.
        const m = /(?:^|[\s:])([A-Za-z][A-Za-z0-9_()]*):\s+(\d+)(\s*kB)?\s*$/.exec(line);
        if (!m || m[1] === undefined) continue;
        // A value the kernel prints with `kB` but shown without it is a cut line: its number is partial.
        if (!m[3] && !UNITLESS.has(m[1])) continue;
        const v = toInt(m[2]);
        if (v !== undefined && !(m[1] in fields)) fields[m[1]] = v;
      }
      return validate(
        MeminfoFactsSchema,
        compact({
          memTotalKiB: fields['MemTotal'],
          memFreeKiB: fields['MemFree'],
          memAvailableKiB: fields['MemAvailable'],
          swapTotalKiB: fields['SwapTotal'],
          hugePagesTotal: fields['HugePages_Total'],
          hugePagesFree: fields['HugePages_Free'],
          hugePageSizeKiB: fields['Hugepagesize'],
          fields,
        }),
      );
    },
    () => ({ fields: {} }),
  );
}
