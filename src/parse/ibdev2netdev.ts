/**
 * `ibdev2netdev [-v]` (MLNX_OFED / mlnx-tools script).
 *
 * Plain: `<ibdev> port <n> ==> <netdev> (Up|Down)` — the state is the netdev's operstate (an IPoIB netdev
 * can be Down on an active IB port). `-v`: `<BDF> <ibdev> (<MTxxxx> - <PSID|PN|NA>) <description> fw <ver>
 * port <n> (<ACTIVE|DOWN>  ) ==> <netdev> (Up|Down)`; the description may be padded with many spaces.
 * Pastes piped through `column -t` or with comments appended are read too; a cut line keeps what it has.
 */
import { z } from 'zod';
import { compact, guard, normalizeBdf, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const Ibdev2netdevLinkSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  netdev: z.string().optional(),
  /** The netdev's operstate: `(Up)` → true. */
  up: z.boolean().optional(),
  /** `-v`: the RDMA port state as printed (`ACTIVE`, `DOWN`, `INIT`). */
  portState: z.string().optional(),
  bdf: z.string().optional(),
  /** `-v`: `MT4117`, `MT41692`, … */
  partType: z.string().optional(),
  /** `-v`: PSID or part number (`MT_2420110034`, `MCX653105A-HDAT`); `NA` for VFs is omitted. */
  psid: z.string().optional(),
  description: z.string().optional(),
  fw: z.string().optional(),
});
export type Ibdev2netdevLink = z.infer<typeof Ibdev2netdevLinkSchema>;

export const Ibdev2netdevFactsSchema = z.object({ links: z.array(Ibdev2netdevLinkSchema) });
export type Ibdev2netdevFacts = z.infer<typeof Ibdev2netdevFactsSchema>;

const BDF_START = /^((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(\S+)\s*(.*)$/;
const PORT_TAIL = /\bport\s+(\d+)(?:\s+\(\s*([A-Za-z_]+)\s*\))?\s*$/;

export function parseIbdev2netdevLine(line: string): Ibdev2netdevLink | undefined {
  const t = line.trim();
  if (t === '' || !/\bport\s+\d/.test(t)) return undefined;
  const arrow = t.indexOf('==>');
  const left = (arrow >= 0 ? t.slice(0, arrow) : t).trim();
  const right = arrow >= 0 ? t.slice(arrow + 3).trim() : '';
  const pt = PORT_TAIL.exec(left);
  if (!pt) return undefined;
  const port = toInt(pt[1]);
  if (port === undefined) return undefined;
  let device: string | undefined;
  let bdf: string | undefined;
  let rest = '';
  const b = BDF_START.exec(left);
  if (b && b[2] !== undefined) {
    bdf = normalizeBdf(b[1]);
    device = b[2];
    rest = b[3] ?? '';
  } else {
    const m = /^(\S+)\s+port\s+\d+/.exec(left);
    if (!m || m[1] === undefined) return undefined;
    device = m[1];
  }
  let partType: string | undefined;
  let psid: string | undefined;
  let description: string | undefined;
  let fw: string | undefined;
  if (bdf !== undefined) {
    const id = /^\(\s*(MT\w+)\s*-([^)]*)\)/.exec(rest);
    if (id) {
      partType = id[1];
      const ps = (id[2] ?? '').trim();
      psid = ps !== '' && ps !== 'NA' ? ps : undefined;
    }
    const afterId = id ? rest.slice(id[0].length) : rest;
    const fwAt = afterId.search(/(?:^|\s)fw\s+\S+\s+port\s+\d/);
    if (fwAt >= 0) {
      const desc = afterId.slice(0, fwAt).trim();
      description = desc === '' ? undefined : desc;
      fw = /fw\s+(\S+)/.exec(afterId.slice(fwAt))?.[1];
    }
  }
  let netdev: string | undefined;
  let up: boolean | undefined;
  if (right !== '') {
    const r = /^(\S+)(?:\s+\((Up|Down)\))?/i.exec(right);
    if (r && r[1] !== undefined && r[1] !== '(Up)' && r[1] !== '(Down)') {
      netdev = r[1];
      if (r[2] !== undefined) up = r[2].toLowerCase() === 'up';
    }
  }
  return compact({ device, port, netdev, up, portState: pt[2], bdf, partType, psid, description, fw });
}

export function parseIbdev2netdev(text: string): Ibdev2netdevFacts {
  return guard(
    () => {
      const links: Ibdev2netdevLink[] = [];
      // `ibdev2netdev` then `ibdev2netdev -v` in one paste: one entry per device port, the richer line merged in.
      const seen = new Map<string, Ibdev2netdevLink>();
      for (const line of rdmaLines(text, { commands: ['ibdev2netdev'] })) {
        if (!/\bport\s+\d+/.test(line) || !(line.includes('==>') || /\bport\s+\d+\s+\(\s*[A-Z_]+\s*\)\s*$/.test(line)))
          continue;
        const link = parseIbdev2netdevLine(line);
        if (!link) continue;
        const key = `${link.device}/${link.port}`;
        const prev = seen.get(key);
        if (prev) Object.assign(prev, link);
        else {
          seen.set(key, link);
          links.push(link);
        }
      }
      return validate(Ibdev2netdevFactsSchema, { links });
    },
    () => ({ links: [] }),
  );
}
