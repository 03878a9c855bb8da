/**
 * `cma_roce_mode -d <dev> -p <port> [-m 1|2]` (MLNX_OFED script): prints the rdma_cm default RoCE mode,
 * `IB/RoCE v1` or `RoCE v2` (the strings of /sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_mode).
 * A transcript with several invocations keeps each; the last printed mode is the current one.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const CmaRoceModeFactsSchema = z.object({
  device: z.string().optional(),
  port: z.number().int().optional(),
  /** The last mode printed: `v1` or `v2`. */
  mode: z.enum(['v1', 'v2']).optional(),
  /** Every printed mode, in order, with what the invocation asked for (`set` when `-m` was given). */
  history: z.array(
    z.object({ mode: z.enum(['v1', 'v2']), set: z.boolean().optional(), device: z.string().optional() }),
  ),
});
export type CmaRoceModeFacts = z.infer<typeof CmaRoceModeFactsSchema>;

export function parseCmaRoceMode(text: string): CmaRoceModeFacts {
  return guard(
    () => {
      const out: CmaRoceModeFacts = { history: [] };
      let pendingSet = false;
      let pendingDev: string | undefined;
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        if (/\bcma_roce_mode\b/.test(t)) {
          const d = /\s-d\s+(\S+)/.exec(t);
          const p = /\s-p\s+(\d+)/.exec(t);
          pendingDev = d?.[1];
          if (d) out.device = d[1];
          if (p) out.port = toInt(p[1]);
          pendingSet = /\s-m\s+\d/.test(t);
          continue;
        }
        const m = /^(?:IB\/)?RoCE (v[12])$/.exec(t);
        if (m && (m[1] === 'v1' || m[1] === 'v2')) {
          out.mode = m[1];
          out.history.push(compact({ mode: m[1], set: pendingSet ? true : undefined, device: pendingDev }));
          pendingSet = false;
        }
      }
      return validate(CmaRoceModeFactsSchema, compact(out));
    },
    () => ({ history: [] }),
  );
}
