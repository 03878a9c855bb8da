/**
 * PyTorch ProcessGroupNCCL watchdog reports (the usual symptom of a hung NCCL collective):
 *   `[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=469508,
 *    OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds before timing out.` (2022)
 *   `[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught … WorkNCCL(SeqNum=808,
 *    OpType=ALLREDUCE, NumelIn=…, NumelOut=…, Timeout(ms)=600000) ran for 600020 milliseconds …` (2.x)
 *   `[PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 808,
 *    last enqueued NCCL work: 811, last completed NCCL work: 807.`
 * Kept as its own kind (`torch-nccl-watchdog`): such logs usually hold no NCCL INFO line. An NCCL log or vLLM log
 * containing these lines reports D07 under its own kind.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';

export const TorchWatchdogFactsSchema = z.object({
  timeouts: z.array(
    z.object({
      rank: z.number().int().optional(),
      seqNum: z.number().int().optional(),
      opType: z.string().optional(),
      timeoutMs: z.number().optional(),
      ranForMs: z.number().optional(),
      numelIn: z.number().optional(),
      numelOut: z.number().optional(),
      line: z.number().int(),
    }),
  ),
  /** `detected by watchdog at work: N, last enqueued NCCL work: M, last completed NCCL work: K`. */
  exceptions: z.array(
    z.object({
      rank: z.number().int().optional(),
      work: z.number().int().optional(),
      lastEnqueued: z.number().int().optional(),
      lastCompleted: z.number().int().optional(),
      line: z.number().int(),
    }),
  ),
  ranks: z.array(z.number().int()),
  opTypes: z.array(z.string()),
  timeoutMs: z.number().optional(),
  errors: z.array(z.string()),
});
export type TorchWatchdogFacts = z.infer<typeof TorchWatchdogFactsSchema>;

const num = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s));

export function parseTorchWatchdog(text: string): TorchWatchdogFacts {
  return guard(
    () => {
      const f: TorchWatchdogFacts = { timeouts: [], exceptions: [], ranks: [], opTypes: [], errors: [] };
      const ranks = new Set<number>();
      const ops = new Set<string>();
      const lines = logLines(text);
      for (let i = 0; i < lines.length; i++) {
        const l = lines[i] ?? '';
        if (!l.includes('atchdog') && !l.includes('ProcessGroupNCCL')) continue;
        const rank = /\bRank (\d+)\]/.exec(l) ?? /\[rank(\d+)\]/.exec(l);
        const r = num(rank?.[1]);
        if (r !== undefined && ranks.size < 4096) ranks.add(r);
        if (/Watchdog caught collective operation timeout/i.test(l)) {
          // The WorkNCCL(…) argument list holds `Timeout(ms)=…`, so read keys from the text after `WorkNCCL(`.
          const w = l.slice(Math.max(0, l.indexOf('WorkNCCL(')));
          const g = (k: string): string | undefined => new RegExp(`\\b${k}=([^,)\\s]+)`).exec(w)?.[1];
          const op = g('OpType');
          if (op && ops.size < 64) ops.add(op);
          const ran = /ran for (\d+) milliseconds/.exec(l);
          if (f.timeouts.length < 1000) {
            f.timeouts.push(
              compact({
                rank: r,
                seqNum: num(g('SeqNum')),
                opType: op,
                timeoutMs: num(/Timeout\(ms\)=(\d+)/.exec(w)?.[1]),
                ranForMs: num(ran?.[1]),
                numelIn: num(g('NumelIn')),
                numelOut: num(g('NumelOut')),
                line: i + 1,
              }),
            );
          }
          continue;
        }
        const ex =
          /detected by watchdog(?: at work: (\d+))?(?:, last enqueued NCCL work: (-?\d+))?(?:, last completed NCCL work: (-?\d+))?/.exec(
            l,
          );
        if (ex && f.exceptions.length < 1000) {
          f.exceptions.push(
            compact({ rank: r, work: num(ex[1]), lastEnqueued: num(ex[2]), lastCompleted: num(ex[3]), line: i + 1 }),
          );
          continue;
        }
        if (/NCCL error|terminate called|what\(\):/i.test(l) && f.errors.length < 20) f.errors.push(l.trim());
      }
      f.ranks = [...ranks].sort((a, b) => a - b);
      f.opTypes = [...ops];
      const t = f.timeouts.find((x) => x.timeoutMs !== undefined)?.timeoutMs;
      if (t !== undefined) f.timeoutMs = t;
      return validate(TorchWatchdogFactsSchema, compact(f));
    },
    () => ({ timeouts: [], exceptions: [], ranks: [], opTypes: [], errors: [] }),
  );
}
