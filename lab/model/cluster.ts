/**
 * The machines of a lab and the DAC cables between them. Carrier is derived, never stored: a
 * fabric port has carrier when a cable is plugged into it and both ends are administratively up.
 * Scenarios cross or unplug cables by editing `cables`.
 */
import { SimClock, type Speed } from '../util/clock.js';
import { createMachine, localCarrier } from './machine.js';
import { carrierOverride } from '../tools/bonding.js';
import type { Machine } from './types.js';

export interface CableEnd {
  host: string;
  ifname: string;
}

export interface Cable {
  a: CableEnd;
  b: CableEnd;
  plugged: boolean;
}

export interface Cluster {
  machines: Machine[];
  /** The lab's one simulated clock (every machine's `clock`). */
  clock: SimClock;
  cables: Cable[];
  machine(hostname: string): Machine | undefined;
  /** The other end of the cable in `host:ifname`, if one is plugged in. */
  peer(host: string, ifname: string): CableEnd | undefined;
}

export const FABRIC_PORTS = ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1'] as const;

/** `clockStartedAt`: see SimClock (processes serving one lab between them share it). */
export function createCluster(hosts: number, seed: number, speed: Speed, clockStartedAt?: number): Cluster {
  const clock = new SimClock(speed, undefined, clockStartedAt);
  const machines = Array.from({ length: hosts }, (_, i) => createMachine({ index: i + 1, seed, speed, clock }));
  // Two nodes per back-to-back pair (no switch is modelled): n1<->n2, n3<->n4, … straight.
  const cables: Cable[] = [];
  for (let i = 0; i + 1 < machines.length; i += 2) {
    const a = machines[i];
    const b = machines[i + 1];
    if (!a || !b) continue;
    for (const port of FABRIC_PORTS)
      cables.push({ a: { host: a.hostname, ifname: port }, b: { host: b.hostname, ifname: port }, plugged: true });
  }
  const cluster: Cluster = {
    machines,
    clock,
    cables,
    machine: (hostname) => machines.find((m) => m.hostname === hostname),
    peer(host, ifname) {
      for (const c of cables) {
        if (!c.plugged) continue;
        if (c.a.host === host && c.a.ifname === ifname) return c.b;
        if (c.b.host === host && c.b.ifname === ifname) return c.a;
      }
      return undefined;
    },
  };
  for (const m of machines) {
    m.system.cluster = cluster;
    m.carrier = (ifname) => {
      const local = localCarrier(m, ifname);
      if (local !== undefined) return local;
      // Bonds (a member with carrier) and ports inside a post-MTU-change flap: tools/bonding.ts.
      const override = carrierOverride(m, ifname);
      if (override !== undefined) return override;
      const self = m.netdevs.find((d) => d.name === ifname);
      const end = cluster.peer(m.hostname, ifname);
      if (!self?.adminUp || !end) return false;
      const other = cluster.machine(end.host)?.netdevs.find((d) => d.name === end.ifname);
      return other?.adminUp === true;
    };
  }
  return cluster;
}
