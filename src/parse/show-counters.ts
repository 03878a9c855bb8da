/**
 * `show_counters <dev>` (mlnx-tools): per port a `Port N hw counters:` (or `Port N counters:`) header and
 * `name: value` lines read from /sys/class/infiniband/<dev>/ports/N/{hw_,}counters. The device comes from
 * the pasted command line when present.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const ShowCountersPortSchema = z.object({
  port: z.number().int(),
  /** `hw` for `hw counters`, `ib` for plain `counters`. */
  set: z.enum(['hw', 'ib']),
  counters: z.record(z.string(), z.number()),
});

export const ShowCountersFactsSchema = z.object({
  device: z.string().optional(),
  sections: z.array(ShowCountersPortSchema),
  /** All counters of all sections, first occurrence kept. */
  counters: z.record(z.string(), z.number()),
});
export type ShowCountersFacts = z.infer<typeof ShowCountersFactsSchema>;

const HEAD_RE = /^\s*Port\s+(\d+)\s+(hw\s+)?counters:?\s*$/i;
const COUNTER_RE = /^\s*([A-Za-z][\w.-]*)\s*:\s*(-?\d+)\s*$/;

export function parseShowCounters(text: string): ShowCountersFacts {
  return guard(
    () => {
      const sections: Array<z.infer<typeof ShowCountersPortSchema>> = [];
      const counters: Record<string, number> = {};
      let device: string | undefined;
      let cur: z.infer<typeof ShowCountersPortSchema> | undefined;
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        const cmd = /\bshow_counters\s+(?:-\S+\s+)*([\w.-]+)/.exec(t);
        if (cmd && !COUNTER_RE.test(t)) {
          device ??= cmd[1];
          continue;
        }
        const h = HEAD_RE.exec(line);
        if (h) {
          const port = toInt(h[1]);
          if (port === undefined) continue;
          cur = { port, set: h[2] ? 'hw' : 'ib', counters: {} };
          sections.push(cur);
          continue;
        }
        const m = COUNTER_RE.exec(line);
        if (!m || m[1] === undefined || m[2] === undefined || !cur) continue;
        const v = Number(m[2]);
        if (!Number.isSafeInteger(v)) continue;
        cur.counters[m[1]] = v;
        if (!(m[1] in counters)) counters[m[1]] = v;
      }
      return validate(ShowCountersFactsSchema, compact({ device, sections, counters }));
    },
    () => ({ sections: [], counters: {} }),
  );
}
