/**
 * `show_gids` (mlnx-tools `sbin/show_gids`): header `DEV PORT INDEX GID IPv4 VER DEV`, a dashed rule, one
 * row per non-zero GID, footer `n_gids_found=N`. Raw output is TAB-separated (an empty IPv4 cell is two
 * TABs, a filled one `<ip>  \t`); pastes expand TABs and long device names break the alignment, so rows
 * are read by token shape: device, port, index, GID, optional IPv4, `v1`/`v2`, optional netdev (absent on
 * IB ports). Index numbers can have gaps; other vendors may list v2 rows only.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const ShowGidSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  index: z.number().int(),
  gid: z.string(),
  ipv4: z.string().optional(),
  version: z.enum(['v1', 'v2']),
  netdev: z.string().optional(),
});
export type ShowGid = z.infer<typeof ShowGidSchema>;

export const ShowGidsFactsSchema = z.object({
  gids: z.array(ShowGidSchema),
  /** The footer's `n_gids_found=N`. */
  nGidsFound: z.number().int().optional(),
});
export type ShowGidsFacts = z.infer<typeof ShowGidsFactsSchema>;

const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
// Full 8-group GIDs as the script prints them; the poster may mask groups with `xxxx`.
const GID = /^[0-9a-fx]{1,4}(?::[0-9a-fx]{1,4}){7}$/i;

export function parseShowGids(text: string): ShowGidsFacts {
  return guard(
    () => {
      const gids: ShowGid[] = [];
      let nGidsFound: number | undefined;
      for (const line of rdmaLines(text, { commands: ['show_gids'] })) {
        const footer = /^\s*n_gids_found=(\d+)\s*$/.exec(line);
        if (footer) {
          nGidsFound = toInt(footer[1]);
          continue;
        }
        const tok = line.trim().split(/\s+/);
        if (tok.length < 5) continue;
        const [device, portS, indexS, gid] = tok;
        const port = toInt(portS);
        const index = toInt(indexS);
        if (device === undefined || gid === undefined || port === undefined || index === undefined || !GID.test(gid))
          continue;
        let i = 4;
        let ipv4: string | undefined;
        if (tok[i] !== undefined && IPV4.test(tok[i] ?? '')) ipv4 = tok[i++];
        const ver = tok[i++];
        if (ver !== 'v1' && ver !== 'v2') continue;
        const netdev = tok[i];
        if (tok.length > i + 1) continue;
        gids.push(compact({ device, port, index, gid, ipv4, version: ver, netdev }));
      }
      return validate(ShowGidsFactsSchema, compact({ gids, nGidsFound }));
    },
    () => ({ gids: [] }),
  );
}
