/**
 * Scenario parts for the rdma-link stage (docs/STAGES.md §4.4). The stage has no apply steps: its `ready` and
 * `tutorial` states are what the earlier stages left, with the GID tables built in the order those
 * stages added the addresses (so every later read sees the slots the kernel would have handed out).
 * `wrong-gid` is this stage's fault.
 */
import type { Cluster } from '../model/cluster.js';
import { syncGids } from '../model/rdma.js';
import type { IpAddress, Machine } from '../model/types.js';

export function ready(cluster: Cluster): void {
  for (const m of cluster.machines) syncGids(m);
}

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) syncGids(m);
}

/** The ULA node 2's ens1f0 gets (an IPv6 prefix someone added by hand). */
export const WRONG_GID_ULA = 'fd20:101::2';
export const PINNED_GID_LINE = 'NCCL_IB_GID_INDEX=3';

/** Appends a line to a file the scenario leaves on the machine (after what earlier parts wrote). */
function appendFile(m: Machine, path: string, line: string): void {
  m.files ??= new Map();
  const prev = m.files.get(path);
  const content = prev?.content ?? '';
  m.files.set(path, {
    content: `${content}${content && !content.endsWith('\n') ? '\n' : ''}${line}\n`,
    ...(prev?.mode !== undefined ? { mode: prev.mode } : {}),
  });
}

/**
 * `wrong-gid`: node 2 `ens1f0` got an IPv6 ULA before its IPv4 — its IPv4 was removed and added back
 * after the ULA, so the ULA took GID slots 2/3 and the IPv4 RoCE v2 GID sits at index 5, not 3 — and
 * both /etc/nccl.conf pin NCCL_IB_GID_INDEX=3.
 */
export function wrongGid(cluster: Cluster): void {
  const n2 = cluster.machines[1];
  const port = n2?.netdevs.find((d) => d.name === 'ens1f0');
  if (n2 && port) {
    const v4 = port.addresses.filter((a) => a.family === 'inet');
    port.addresses = port.addresses.filter((a) => a.family !== 'inet');
    syncGids(n2);
    const ula: IpAddress = {
      family: 'inet6',
      local: WRONG_GID_ULA,
      prefixlen: 64,
      scope: 'global',
      validLft: 4294967295,
      preferredLft: 4294967295,
    };
    port.addresses.push(ula);
    syncGids(n2);
    port.addresses.push(...v4);
    syncGids(n2);
    n2.revision++;
  }
  for (const m of cluster.machines) appendFile(m, '/etc/nccl.conf', PINNED_GID_LINE);
}
