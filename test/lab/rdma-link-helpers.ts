/** Shared setup for the rdma-link lab tests. */
import type { Lab } from '../../lab/index.js';
import type { Cluster } from '../../lab/model/cluster.js';
import { FABRIC_PORTS } from '../../lab/model/cluster.js';
import { linkLocalFromMac } from '../../lab/model/machine.js';
import { syncGids } from '../../lab/model/rdma.js';
import type { Machine } from '../../lab/model/types.js';
import { perftestListening } from '../../lab/tools/perftest.js';
import type { Host, RunResult } from '../../src/transport/types.js';
import { waitFor } from './helpers.js';

export const clusterOf = (lab: Lab): Cluster => {
  const c = lab.hosts[0]!.machine.system.cluster;
  if (!c) throw new Error('lab machine has no cluster');
  return c;
};

/**
 * The network stage's design-A end state (cable k → 192.168.10k.i/24, MTU 9000, ports up), set in the
 * model when the scenario did not already leave it (the network part of `ready` fills it in).
 */
export function ensureDesignA(lab: Lab): void {
  const c = clusterOf(lab);
  for (const m of c.machines) {
    FABRIC_PORTS.forEach((n, k) => {
      const d = m.netdevs.find((x) => x.name === n)!;
      if (d.addresses.some((a) => a.family === 'inet')) return;
      d.adminUp = true;
      d.qdisc = 'mq';
      d.mtu = 9000;
      const ip = `192.168.10${k + 1}.${m.index}`;
      // Added after whatever a scenario already put there (wrong-gid's ULA), link-local first.
      if (!d.addresses.some((a) => a.family === 'inet6' && a.scope === 'link')) {
        d.addresses.unshift({
          family: 'inet6',
          local: linkLocalFromMac(d.mac),
          prefixlen: 64,
          scope: 'link',
          validLft: 4294967295,
          preferredLft: 4294967295,
        });
      }
      d.addresses.push({
        family: 'inet',
        local: ip,
        prefixlen: 24,
        broadcast: `192.168.10${k + 1}.255`,
        scope: 'global',
        label: n,
        validLft: 4294967295,
        preferredLft: 4294967295,
      });
      m.routes.push({ dst: `192.168.10${k + 1}.0/24`, dev: n, protocol: 'kernel', scope: 'link', prefsrc: ip });
    });
    syncGids(m);
    m.revision++;
  }
}

export function machine(lab: Lab, i: number): Machine {
  return lab.hosts[i]!.machine;
}

/** Starts an ib_write_bw server and resolves once it listens, with the server's result to await. */
export async function startServer(
  lab: Lab,
  host: Host,
  i: number,
  argv: string[],
  port: number,
): Promise<{ done: Promise<RunResult> }> {
  const done = host.run({ argv });
  let ended = false;
  void done.then(() => (ended = true));
  await waitFor(
    () => ended || perftestListening(clusterOf(lab), machine(lab, i).hostname, port),
    `ib_write_bw server on port ${port}`,
  );
  // Wrapped: an async function returning the promise itself would wait for the server to end.
  return { done };
}
