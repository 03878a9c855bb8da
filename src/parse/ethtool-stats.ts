/**
 * `ethtool -S <if>` (also grepped, and the no-header/no-indent form some tools store): `NIC statistics:`
 * then `     <name>: <value>` lines. Names are trimmed (one kernel prints `tx_pause_storm_warning_events `
 * with a trailing space); values are integers. Non-counter lines (prompts, junk) are skipped. A cut last
 * line without its value is dropped.
 */
import { z } from 'zod';
import { guard, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const EthtoolStatsFactsSchema = z.object({
  /** The interface, when the command line was pasted (`ethtool -S eth01 | grep …`). */
  netdev: z.string().optional(),
  /** The grep pattern, when the command line shows one. */
  grep: z.string().optional(),
  /** `NIC statistics:` was present. */
  header: z.boolean().optional(),
  counters: z.record(z.string(), z.number()),
});
export type EthtoolStatsFacts = z.infer<typeof EthtoolStatsFactsSchema>;

// A counter name: no spaces inside (trailing ones are trimmed), `[`/`]`/`.`/`-` allowed (`rx_queue_0_packets`, `rx-0.packets`).
const COUNTER_RE = /^\s*([A-Za-z0-9_][\w.[\]/-]*)\s*:\s*(-?\d+)\s*$/;

export function parseEthtoolStats(text: string): EthtoolStatsFacts {
  return guard(
    () => {
      const counters: Record<string, number> = {};
      let netdev: string | undefined;
      let grep: string | undefined;
      let header = false;
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        const cmd = /\bethtool\s+(?:-S|--statistics)\s+([\w.@-]+)(?:\s*\|\s*grep\s+(.*))?$/.exec(t);
        if (cmd) {
          netdev ??= cmd[1];
          if (cmd[2] !== undefined) grep ??= cmd[2].trim();
          continue;
        }
        if (/^NIC statistics:$/i.test(t)) {
          header = true;
          continue;
        }
        const m = COUNTER_RE.exec(line);
        if (!m || m[1] === undefined || m[2] === undefined) continue;
        const v = Number(m[2]);
        if (!Number.isSafeInteger(v)) continue;
        if (!(m[1] in counters)) counters[m[1]] = v;
      }
      const out: EthtoolStatsFacts = { counters };
      if (netdev !== undefined) out.netdev = netdev;
      if (grep !== undefined) out.grep = grep;
      if (header) out.header = true;
      return validate(EthtoolStatsFactsSchema, out);
    },
    () => ({ counters: {} }),
  );
}
