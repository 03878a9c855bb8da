/**
 * D19 No RoCE v2 GID carrying an IPv4 address on an active port — high (docs/RULES.md §3). Reads `show_gids` and
 * `ibv_devinfo -v`: an active Ethernet port with no GID row that has type v2 and an IPv4 address. Old
 * `GID[ n]:` lines carry no type, so there an IPv4-mapped entry suffices. Ports whose state or link layer
 * the text does not show, and down ports (D08), are skipped.
 */
import type { Finding } from '../types.js';

export interface GidPortInput {
  device?: string;
  port: number;
  netdev?: string;
  /** Known from the same text; undefined skips the port. */
  active: boolean | undefined;
  ethernet: boolean | undefined;
  gids: ReadonlyArray<{ index: number; gid: string; version?: 'v1' | 'v2'; ipv4?: string }>;
  /** True when the tool prints a type per GID (show_gids, rdma-core ≥ v29 ibv_devinfo -v). */
  typed: boolean;
  /** Where the port's state came from (verbatim line), for the evidence. */
  stateEvidence?: string;
  line?: number;
  kind: string;
}

export function d19RoceV2Gid(p: GidPortInput): Finding | undefined {
  if (p.active !== true || p.ethernet !== true) return undefined;
  const ok = p.gids.some((g) => g.ipv4 !== undefined && (!p.typed || g.version === 'v2'));
  if (ok) return undefined;
  const name = `${p.device ?? 'port'}${p.device ? ` port ${p.port}` : ` ${p.port}`}`;
  const list = p.gids
    .map((g) => `${g.index}: ${g.gid}${g.version ? ` ${g.version}` : ''}${g.ipv4 ? ` ${g.ipv4}` : ''}`)
    .join('; ');
  const nd = p.netdev ?? `<netdev of ${p.device ?? 'the port'}>`;
  return {
    rule: 'D19',
    severity: 'high',
    title: 'No RoCE v2 GID carrying an IPv4 address on an active port',
    evidence: `${name}${p.netdev ? ` (${p.netdev})` : ''}${p.stateEvidence ? ` [${p.stateEvidence}]` : ''}: ${p.gids.length} GIDs, none ${p.typed ? 'v2 with IPv4' : 'IPv4-mapped'}${list ? ` — ${list}` : ''}`,
    fix:
      `Give ${nd} its per-cable IPv4 (netplan \`addresses: [10.x.y.z/24]\`, then \`netplan apply\`), then rerun \`show_gids\`: ` +
      `a \`v2\` row with that IPv4 must appear. If ${nd} is a bond slave without a RoCE LAG, its GIDs follow the bond: use design A (R16).`,
    ...(p.line !== undefined ? { line: p.line } : {}),
    source: p.kind,
  };
}
