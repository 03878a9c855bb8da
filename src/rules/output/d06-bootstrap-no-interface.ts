/**
 * D06 NCCL bootstrap found no socket interface — blocker (docs/RULES.md §3). `Bootstrap : no socket interface found`,
 * `NET/Socket : No usable listening interface found`, `NET/Socket : no interface found`.
 */
import type { LogHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d06BootstrapNoInterface(
  hits: readonly LogHit[],
  env: Record<string, string> = {},
): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const ifname = env.NCCL_SOCKET_IFNAME;
  const family = env.NCCL_SOCKET_FAMILY;
  const envLine = [
    ifname !== undefined ? `NCCL_SOCKET_IFNAME=${ifname}` : '',
    family !== undefined ? `NCCL_SOCKET_FAMILY=${family}` : '',
  ]
    .filter((s) => s !== '')
    .join(', ');
  return {
    rule: 'D06',
    severity: 'blocker',
    title: 'NCCL bootstrap found no socket interface',
    evidence: [
      ...hits.slice(0, 3).map((h) => `line ${h.line}: ${h.text}`),
      ...(envLine ? [`set in this log: ${envLine}`] : []),
    ].join('\n'),
    fix:
      `Causes: NCCL_SOCKET_IFNAME${ifname !== undefined ? `=${ifname}` : ''} selects no UP interface with an address (e.g. bond0 after moving to design A); ` +
      'a NCCL_SOCKET_FAMILY mismatch; a container without host networking (NCCL skips lo and docker*). ' +
      'Next: `ip -br addr` on every host, then set `NCCL_SOCKET_IFNAME==<cluster netdev>` (e.g. `==ens1f0`) per R14.',
    line: first.line,
  };
}
