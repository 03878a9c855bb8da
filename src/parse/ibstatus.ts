/**
 * `ibstatus` (rdma-core infiniband-diags shell script): per port
 * `Infiniband device '<dev>' port <n> status:` then `\t<label>:\t <value>` lines — `default gid`,
 * `base lid`/`sm lid` in hex, `state: 4: ACTIVE`, `phys state: 5: LinkUp`,
 * `rate: 200 Gb/sec (4X HDR)` (IB notation even on Ethernet ports), `link_layer: InfiniBand`.
 * States are reported without their number (`ACTIVE`, `DOWN`, `Polling`).
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { parseRateGbps, toIntAny, rdmaLines } from './rdma-util.js';

export const IbstatusPortSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  /** Without the number: `ACTIVE`, `DOWN`, `INIT`, `ARMED`. */
  state: z.string().optional(),
  stateCode: z.number().int().optional(),
  /** Without the number: `LinkUp`, `Polling`, `Disabled`. */
  physState: z.string().optional(),
  physStateCode: z.number().int().optional(),
  rateGbps: z.number().optional(),
  /** As printed: `200 Gb/sec (4X HDR)`. */
  rate: z.string().optional(),
  linkLayer: z.string().optional(),
  defaultGid: z.string().optional(),
  baseLid: z.number().int().optional(),
  smLid: z.number().int().optional(),
});
export type IbstatusPort = z.infer<typeof IbstatusPortSchema>;

export const IbstatusFactsSchema = z.object({ ports: z.array(IbstatusPortSchema) });
export type IbstatusFacts = z.infer<typeof IbstatusFactsSchema>;

const HEAD_RE = /^\s*Infiniband device\s+'([^']+)'\s+port\s+(\d+)\s+status:?\s*$/i;
const FIELD_RE = /^\s*(default gid|base lid|sm lid|state|phys state|rate|link_layer)\s*:\s*(.*)$/i;

// The script prints sysfs `state` / `phys_state`: `<code>: <name>`; a name outside these is a cut line.
const STATES = new Set(['NOP', 'DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER']);
const PHYS_STATES = new Set([
  'Sleep',
  'Polling',
  'Disabled',
  'PortConfigurationTraining',
  'LinkUp',
  'LinkErrorRecovery',
  'Phy Test',
  'PhyTest',
]);

function numbered(v: string): { code?: number; name?: string } {
  const m = /^(\d+)\s*:\s*(\S+(?: Test)?)/.exec(v);
  if (m) return { code: toInt(m[1]), name: m[2] };
  return /^\S+$/.test(v) ? { name: v } : {};
}

export function parseIbstatus(text: string): IbstatusFacts {
  return guard(
    () => {
      const ports: IbstatusPort[] = [];
      let cur: IbstatusPort | undefined;
      for (const line of rdmaLines(text, { commands: ['ibstatus'] })) {
        const h = HEAD_RE.exec(line);
        if (h && h[1] !== undefined) {
          const n = toInt(h[2]);
          if (n === undefined) continue;
          cur = { device: h[1], port: n };
          ports.push(cur);
          continue;
        }
        if (!cur) continue;
        const f = FIELD_RE.exec(line);
        if (!f || f[1] === undefined) continue;
        const key = f[1].toLowerCase();
        const value = (f[2] ?? '').trim();
        if (value === '') continue;
        if (key === 'state' || key === 'phys state') {
          const { code, name } = numbered(value);
          if (key === 'state') {
            if (name !== undefined && STATES.has(name)) cur.state = name;
            if (code !== undefined) cur.stateCode = code;
          } else {
            if (name !== undefined && PHYS_STATES.has(name)) cur.physState = name;
            if (code !== undefined) cur.physStateCode = code;
          }
        } else if (key === 'rate') {
          cur.rate = value;
          const r = parseRateGbps(value);
          if (r !== undefined) cur.rateGbps = r;
        } else if (key === 'link_layer') {
          cur.linkLayer = value;
        } else if (key === 'default gid') {
          cur.defaultGid = value;
        } else if (key === 'base lid' || key === 'sm lid') {
          const n = toIntAny(value);
          if (n !== undefined) cur[key === 'base lid' ? 'baseLid' : 'smLid'] = n;
        }
      }
      return validate(IbstatusFactsSchema, { ports: ports.map((p) => compact(p)) });
    },
    () => ({ ports: [] }),
  );
}
