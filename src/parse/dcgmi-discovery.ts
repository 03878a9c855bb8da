/**
 * `dcgmi discovery -l`: `N GPUs found.`, then a table of three rows per GPU (`| 0 | Name: NVIDIA H800 |`,
 * `|   | PCI Bus ID: 00000000:18:00.0 |`, `|   | Device UUID: GPU-… |`), then `N NvSwitches found.` and its table.
 * The name may be `<<<NULL>>>` (DCGM could not read it): kept as printed.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';

export const DcgmiDiscoveryFactsSchema = z.object({
  gpus: z.array(
    z.object({
      id: z.number().int(),
      name: z.string().optional(),
      busId: z.string().optional(),
      uuid: z.string().optional(),
    }),
  ),
  /** `N GPUs found.` as printed (the table may be cut). */
  gpusFound: z.number().int().optional(),
  nvSwitchesFound: z.number().int().optional(),
  nvSwitches: z.array(z.number().int()).optional(),
});
export type DcgmiDiscoveryFacts = z.infer<typeof DcgmiDiscoveryFactsSchema>;

export function parseDcgmiDiscovery(text: string): DcgmiDiscoveryFacts {
  return guard(
    () => {
      const facts: DcgmiDiscoveryFacts = { gpus: [] };
      let table: 'gpu' | 'switch' | undefined;
      let cur: DcgmiDiscoveryFacts['gpus'][number] | undefined;
      const switches: number[] = [];
      for (const line of logLines(text)) {
        const t = line.trim();
        const found = /^(\d+)\s+(GPUs?|NvSwitch(?:es)?|CPUs?)\s+found\.?/.exec(t);
        if (found) {
          if (/^GPU/.test(found[2] ?? '')) {
            facts.gpusFound = Number(found[1]);
            table = 'gpu';
          } else if (/^NvSwitch/.test(found[2] ?? '')) {
            facts.nvSwitchesFound = Number(found[1]);
            table = 'switch';
          } else table = undefined;
          continue;
        }
        if (!t.startsWith('|')) continue;
        const cells = t.split('|').map((c) => c.trim());
        const id = cells[1] ?? '';
        const info = cells.slice(2, -1).join('|').trim();
        if (table === 'switch') {
          if (/^\d+$/.test(id)) switches.push(Number(id));
          continue;
        }
        if (table !== 'gpu') continue;
        if (/^\d+$/.test(id)) {
          cur = { id: Number(id) };
          facts.gpus.push(cur);
        }
        if (!cur) continue;
        const kv = /^(Name|PCI Bus ID|Device UUID)\s*:\s*(.*)$/.exec(info);
        if (!kv) continue;
        const v = (kv[2] ?? '').trim();
        if (v === '') continue;
        if (kv[1] === 'Name') cur.name = v;
        else if (kv[1] === 'PCI Bus ID') cur.busId = v;
        else cur.uuid = v;
      }
      if (switches.length > 0) facts.nvSwitches = switches;
      facts.gpus = facts.gpus.map((g) => compact(g));
      return validate(DcgmiDiscoveryFactsSchema, compact(facts));
    },
    () => ({ gpus: [] }),
  );
}
