/**
 * Scenarios: named starting states applied to a freshly built cluster (STAGES.md §4.4). They
 * compose with `+` (`ready+link-down`), applied left to right. Only `fresh` exists so far; the
 * machine builder's defaults are exactly the `fresh` state, so it only asserts them.
 */
import type { Cluster } from '../model/cluster.js';

export interface Scenario {
  name: string;
  description: string;
  apply(cluster: Cluster): void;
}

const fresh: Scenario = {
  name: 'fresh',
  description: 'Ubuntu 22.04 minimal; eno1 from 01-netcfg.yaml; fabric ports down and unconfigured; no rdma-core, no NVIDIA driver (nouveau); straight cabling',
  apply(cluster) {
    for (const m of cluster.machines) {
      for (const d of m.netdevs) {
        if (d.driver === 'mlx5_core') {
          d.adminUp = false;
          d.addresses = [];
          d.mtu = 1500;
        }
      }
      m.revision++;
    }
    for (const c of cluster.cables) c.plugged = true;
  },
};

const REGISTRY: readonly Scenario[] = [fresh];

export const SCENARIOS: readonly string[] = REGISTRY.map((s) => s.name);

/** Resolves `a+b+c`; throws with the list of known names for an unknown one. */
export function resolveScenario(spec: string): Scenario[] {
  return spec.split('+').map((name) => {
    const s = REGISTRY.find((x) => x.name === name.trim());
    if (!s) throw new Error(`unknown lab scenario "${name}"; known scenarios: ${SCENARIOS.join(', ')}`);
    return s;
  });
}
