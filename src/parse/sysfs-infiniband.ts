/**
 * `/sys/class/infiniband` read with `grep -H . <files>` (or `head`/`cat` with the path printed before the
 * value): `<path>:<value>` lines. Device files (`fw_ver`, `hca_type`, `board_id`, `node_guid`, …), port
 * files (`state` `4: ACTIVE`, `phys_state` `5: LinkUp`, `rate` `25 Gb/sec (1X EDR)`, `link_layer`), port
 * counters (`counters/*`, `hw_counters/*`) and GID attributes (`gids/N`, `gid_attrs/types/N`,
 * `gid_attrs/ndevs/N`) are read.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { parseRateGbps, textLines } from './rdma-util.js';
import { cleanText } from './common.js';

export const SysfsIbPortSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  /** Without the number: `ACTIVE`, `DOWN`, … */
  state: z.string().optional(),
  stateCode: z.number().int().optional(),
  physState: z.string().optional(),
  rateGbps: z.number().optional(),
  rate: z.string().optional(),
  linkLayer: z.string().optional(),
});
export type SysfsIbPort = z.infer<typeof SysfsIbPortSchema>;

export const SysfsIbDeviceSchema = z.object({
  device: z.string(),
  fwVer: z.string().optional(),
  hcaType: z.string().optional(),
  boardId: z.string().optional(),
  nodeGuid: z.string().optional(),
  nodeDesc: z.string().optional(),
});

export const SysfsIbGidSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  index: z.number().int(),
  gid: z.string().optional(),
  /** `IB/RoCE v1`, `RoCE v2`. */
  type: z.string().optional(),
  netdev: z.string().optional(),
});

export const SysfsInfinibandFactsSchema = z.object({
  devices: z.array(SysfsIbDeviceSchema),
  ports: z.array(SysfsIbPortSchema),
  /** `"<dev>/<port>"` → counter → value (`counters/*` and `hw_counters/*` merged). */
  counters: z.record(z.string(), z.record(z.string(), z.number())),
  gids: z.array(SysfsIbGidSchema).optional(),
});
export type SysfsInfinibandFacts = z.infer<typeof SysfsInfinibandFactsSchema>;

const LINE_RE = /^\s*\/sys\/class\/infiniband\/([^/\s:]+)\/(?:ports\/(\d+)\/)?([^:\s]+):(.*)$/;
const DEV_KEYS: Record<string, 'fwVer' | 'hcaType' | 'boardId' | 'nodeGuid' | 'nodeDesc'> = {
  fw_ver: 'fwVer',
  hca_type: 'hcaType',
  board_id: 'boardId',
  node_guid: 'nodeGuid',
  node_desc: 'nodeDesc',
};

export function parseSysfsInfiniband(text: string): SysfsInfinibandFacts {
  return guard(
    () => {
      const devices = new Map<string, z.infer<typeof SysfsIbDeviceSchema>>();
      const ports = new Map<string, SysfsIbPort>();
      const counters: Record<string, Record<string, number>> = {};
      const gids = new Map<string, z.infer<typeof SysfsIbGidSchema>>();
      for (const line of textLines(cleanText(text))) {
        const m = LINE_RE.exec(line);
        if (!m || m[1] === undefined || m[3] === undefined) continue;
        const dev = m[1];
        const value = (m[4] ?? '').trim();
        const attr = m[3];
        if (m[2] === undefined) {
          const k = DEV_KEYS[attr];
          if (!k || value === '') continue;
          const d = devices.get(dev) ?? { device: dev };
          d[k] = value;
          devices.set(dev, d);
          continue;
        }
        const port = toInt(m[2]);
        if (port === undefined) continue;
        const key = `${dev}/${port}`;
        const c = /^(?:hw_)?counters\/([\w.-]+)$/.exec(attr);
        if (c && c[1] !== undefined) {
          if (!/^-?\d+$/.test(value)) continue;
          const v = Number(value);
          if (!Number.isSafeInteger(v)) continue;
          (counters[key] ??= {})[c[1]] = v;
          continue;
        }
        const g = /^(gids|gid_attrs\/types|gid_attrs\/ndevs)\/(\d+)$/.exec(attr);
        if (g) {
          const index = toInt(g[2]);
          if (index === undefined || value === '') continue;
          const gk = `${key}/${index}`;
          const e = gids.get(gk) ?? { device: dev, port, index };
          if (g[1] === 'gids') e.gid = value;
          else if (g[1] === 'gid_attrs/types') e.type = value;
          else e.netdev = value;
          gids.set(gk, e);
          continue;
        }
        const p = ports.get(key) ?? { device: dev, port };
        const sm = /^(\d+):\s*(\S+(?: Test)?)$/.exec(value);
        switch (attr) {
          case 'state':
            if (sm) {
              p.stateCode = toInt(sm[1]);
              if (sm[2] && /^(NOP|DOWN|INIT|ARMED|ACTIVE|ACTIVE_DEFER)$/.test(sm[2])) p.state = sm[2];
            }
            break;
          case 'phys_state':
            if (
              sm &&
              sm[2] &&
              /^(Sleep|Polling|Disabled|PortConfigurationTraining|LinkUp|LinkErrorRecovery|Phy Test)$/.test(sm[2])
            )
              p.physState = sm[2];
            break;
          case 'rate': {
            const r = parseRateGbps(value);
            if (r !== undefined && /Gb\/sec/.test(value)) {
              p.rateGbps = r;
              p.rate = value;
            }
            break;
          }
          case 'link_layer':
            if (/^(InfiniBand|Ethernet)$/.test(value)) p.linkLayer = value;
            break;
          default:
            continue;
        }
        ports.set(key, p);
      }
      return validate(
        SysfsInfinibandFactsSchema,
        compact({
          devices: [...devices.values()],
          ports: [...ports.values()].map((p) => compact(p)),
          counters,
          gids: gids.size ? [...gids.values()] : undefined,
        }),
      );
    },
    () => ({ devices: [], ports: [], counters: {} }),
  );
}
