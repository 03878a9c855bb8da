/**
 * The result table of a torch.distributed all-reduce benchmark run under torchrun (the nccl stage's
 * l20-allreduce-bench.py; fixtures/h200-x2/nccl_info_torch_allreduce.txt): a header
 * `# all_reduce sum float32, world=2`, then per size `<bytes> <time>us algbw <x> GB/s busbw <y> GB/s`.
 * NCCL INFO lines, torchrun's warnings and anything else in between are skipped; rows keep their line
 * numbers (a size may repeat, as in the fixture).
 */
import { z } from 'zod';
import { guard, validate } from './common.js';

const RowSchema = z.object({
  bytes: z.number().int().nonnegative(),
  timeUs: z.number().nonnegative(),
  algbwGBps: z.number().nonnegative(),
  busbwGBps: z.number().nonnegative(),
  /** 1-based line in the text. */
  line: z.number().int().positive(),
});

export const TorchAllreduceSchema = z.object({
  op: z.string().optional(),
  dtype: z.string().optional(),
  world: z.number().int().positive().optional(),
  rows: z.array(RowSchema),
});
export type TorchAllreduceFacts = z.infer<typeof TorchAllreduceSchema>;
export type TorchAllreduceRow = z.infer<typeof RowSchema>;

const HEADER = /^# all_reduce (\w+) (\w+), world=(\d+)\s*$/;
const ROW = /^\s*(\d+)\s+(\d+(?:\.\d+)?)us\s+algbw\s+(\d+(?:\.\d+)?) GB\/s\s+busbw\s+(\d+(?:\.\d+)?) GB\/s\s*$/;

export function parseTorchAllreduce(text: string): TorchAllreduceFacts {
  return guard(
    () => {
      const out: TorchAllreduceFacts = { rows: [] };
      const lines = typeof text === 'string' ? text.replace(/\r\n?/g, '\n').split('\n') : [];
      lines.forEach((l, i) => {
        const h = HEADER.exec(l);
        if (h) {
          out.op = h[1];
          out.dtype = h[2];
          out.world = Number(h[3]);
          return;
        }
        const r = ROW.exec(l);
        if (r)
          out.rows.push({
            bytes: Number(r[1]),
            timeUs: Number(r[2]),
            algbwGBps: Number(r[3]),
            busbwGBps: Number(r[4]),
            line: i + 1,
          });
      });
      return validate(TorchAllreduceSchema, out);
    },
    () => ({ rows: [] }),
  );
}

/** The highest busbw among rows of at least `minBytes` (the bandwidth verdict's figure). */
export function peakBusbw(f: TorchAllreduceFacts, minBytes: number): TorchAllreduceRow | undefined {
  return f.rows
    .filter((r) => r.bytes >= minBytes)
    .reduce<TorchAllreduceRow | undefined>((best, r) => (!best || r.busbwGBps > best.busbwGBps ? r : best), undefined);
}
