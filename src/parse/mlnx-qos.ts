/**
 * `mlnx_qos -i <if>` (mlnx-tools `python/mlnx_qos`), every format generation:
 * - 2017-06: only `PFC configuration:` (`priority`/`enabled` rows) and `tc: N ratelimit: …, tsa: …` blocks
 *   with `priority:  N` lines (older MOFED adds `skprio: N (tos: X)` lines);
 * - 2017-09 (OFED 4.2): `DCBX mode: OS controlled|Firmware controlled`, `Priority trust state: pcp|dscp`,
 *   `dscp2prio mapping:` with `prio:N dscp:aa,bb,…,` rows (trust dscp only; > 8 DSCPs wrap onto a second
 *   row for the same prio) and `Cable len: N`;
 * - 2019-02: `Receive buffer size (bytes): a,…,h,` and a `buffer` row under `enabled`;
 * - 2021-05 … 2024-11: `default priority:` and a `total_size=N` / `max_buffer_size=N` suffix.
 * TC blocks may be out of order (python dict order). Setting commands print the same status afterwards.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const MlnxQosTcSchema = z.object({
  tc: z.number().int(),
  ratelimit: z.string().optional(),
  /** `vendor`, `strict`, `ets`. */
  tsa: z.string().optional(),
  bwPct: z.number().optional(),
  priorities: z.array(z.number().int()),
});
export type MlnxQosTc = z.infer<typeof MlnxQosTcSchema>;

export const MlnxQosFactsSchema = z.object({
  /** The interface, when the command line was pasted with the output. */
  netdev: z.string().optional(),
  /** `dscp` or `pcp`. */
  trust: z.enum(['dscp', 'pcp']).optional(),
  /** PFC enabled per priority 0–7. */
  pfc: z.array(z.number().int()).optional(),
  /** The `buffer` row: receive buffer per priority. */
  pfcBuffer: z.array(z.number().int()).optional(),
  /** `os` (OS controlled) or `firmware`. */
  dcbx: z.enum(['os', 'firmware']).optional(),
  /** DSCP → priority, as printed: `{ "26": 3, … }`. */
  dscp2prio: z.record(z.string(), z.number().int()).optional(),
  defaultPriority: z.number().int().optional(),
  receiveBufferBytes: z.array(z.number().int()).optional(),
  maxBufferSize: z.number().int().optional(),
  cableLen: z.number().int().optional(),
  tcs: z.array(MlnxQosTcSchema),
  /** Error lines mlnx_qos printed (`Priority trust state is not supported on your system`). */
  errors: z.array(z.string()).optional(),
});
export type MlnxQosFacts = z.infer<typeof MlnxQosFactsSchema>;

function eight(rest: string): number[] | undefined {
  const tok = rest.trim().split(/\s+/);
  if (tok.length !== 8 || !tok.every((t) => /^\d+$/.test(t))) return undefined;
  return tok.map(Number);
}

export function parseMlnxQos(text: string): MlnxQosFacts {
  return guard(
    () => {
      const out: MlnxQosFacts = { tcs: [] };
      const errors: string[] = [];
      const dscp2prio: Record<string, number> = {};
      let sawDscpRow = false;
      let inDscp = false;
      let tc: MlnxQosTc | undefined;
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        const cmd = /(?:^|[\s/])mlnx_qos\s+(?:.*\s)?(?:-i|--interface)[\s=]+(\S+)/.exec(t);
        if (cmd && cmd[1] !== undefined) {
          out.netdev ??= cmd[1];
          continue;
        }
        let m: RegExpExecArray | null;
        if ((m = /^DCBX mode:\s*(OS|Firmware)\b/i.exec(t))) {
          out.dcbx = m[1]?.toLowerCase() === 'os' ? 'os' : 'firmware';
          inDscp = false;
          continue;
        }
        if ((m = /^Priority trust (?:state|mode):\s*(dscp|pcp)\b/i.exec(t))) {
          out.trust = m[1]?.toLowerCase() === 'dscp' ? 'dscp' : 'pcp';
          inDscp = false;
          continue;
        }
        if (/not supported on your system|^Error|^-E-|failed/i.test(t) && !/^tc:/.test(t)) {
          errors.push(t);
          continue;
        }
        if (/^dscp2prio mapping:?$/i.test(t)) {
          inDscp = true;
          continue;
        }
        if ((m = /^prio:\s*(\d)\s+dscp:\s*([\d,\s]*)$/.exec(t))) {
          const prio = toInt(m[1]);
          const list = m[2] ?? '';
          // A cut row ends without the comma that terminates every value: drop its last entry.
          const trimmed = list.trimEnd();
          const complete = trimmed.endsWith(',') ? trimmed : trimmed.slice(0, trimmed.lastIndexOf(',') + 1);
          if (prio !== undefined && (inDscp || sawDscpRow)) {
            sawDscpRow = true;
            for (const d of complete.split(',')) {
              const n = toInt(d);
              if (n !== undefined && n >= 0 && n <= 63) dscp2prio[String(n)] = prio;
            }
          }
          continue;
        }
        if ((m = /^default priority:\s*(\d+)?\s*$/i.exec(t))) {
          const n = toInt(m[1]);
          if (n !== undefined) out.defaultPriority = n;
          inDscp = false;
          continue;
        }
        if ((m = /^Receive buffer size \(bytes\):\s*(.*)$/i.exec(t))) {
          const parts = (m[1] ?? '')
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '');
          const sizes: number[] = [];
          for (const p of parts) {
            const kv = /^(?:max_buffer_size|total_size)=(\d+)$/.exec(p);
            if (kv) out.maxBufferSize = toInt(kv[1]);
            else if (/^\d+$/.test(p)) sizes.push(Number(p));
          }
          if (sizes.length === 8) out.receiveBufferBytes = sizes;
          inDscp = false;
          continue;
        }
        if ((m = /^Cable len:\s*(\d+)/i.exec(t))) {
          out.cableLen = toInt(m[1]);
          continue;
        }
        if (/^PFC configuration:?$/i.test(t)) {
          inDscp = false;
          continue;
        }
        if ((m = /^enabled\s+(.*)$/.exec(t))) {
          const v = eight(m[1] ?? '');
          if (v && v.every((x) => x === 0 || x === 1)) out.pfc = v;
          continue;
        }
        if ((m = /^buffer\s+(.*)$/.exec(t))) {
          const v = eight(m[1] ?? '');
          if (v) out.pfcBuffer = v;
          continue;
        }
        if ((m = /^tc:\s*(\d+)\s+ratelimit:([^,]+),\s*tsa:\s*([a-z]+)(?:\s*,\s*bw:\s*(\d+(?:\.\d+)?)\s*%)?/i.exec(t))) {
          const n = toInt(m[1]);
          if (n === undefined) continue;
          tc = compact({
            tc: n,
            ratelimit: m[2]?.trim() || undefined,
            tsa: m[3],
            bwPct: m[4] !== undefined ? Number(m[4]) : undefined,
            priorities: [] as number[],
          });
          out.tcs.push(tc);
          inDscp = false;
          continue;
        }
        if ((m = /^priority:\s*(\d)\s*$/.exec(t))) {
          const n = toInt(m[1]);
          if (tc && n !== undefined) tc.priorities.push(n);
          continue;
        }
      }
      if (Object.keys(dscp2prio).length) out.dscp2prio = dscp2prio;
      if (errors.length) out.errors = errors;
      return validate(MlnxQosFactsSchema, compact(out));
    },
    () => ({ tcs: [] }),
  );
}
