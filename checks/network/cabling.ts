/**
 * The cabling map as this stage uses it: the shared map (IPv6 neighbours and LLDP port ids, which
 * also resolve bond members by their permanent MACs), with cable k numbered by the position of its
 * end on the first host's k-th port (PCI order). An unplugged or unseen cable then leaves the others'
 * numbers — and so their subnets — as they are, instead of renumbering (and re-addressing) them.
 */
import type { HostFacts } from '../../src/engine/types.js';
import { cablingMap, type CablingMap } from '../common/fabric.js';
import type { NetworkFacts } from './facts.js';

export function networkCabling(all: ReadonlyArray<HostFacts<NetworkFacts>>): CablingMap {
  const base = cablingMap(all.map((a) => ({ host: a.host, facts: a.facts.fabric })));
  const position = (host: string, netdev: string): number =>
    all.find((a) => a.host === host)?.facts.fabric.ports.findIndex((p) => p.netdev === netdev) ?? -1;
  const cables = base.cables
    .map((c) => ({ ...c, index: position(c.ends[0].host, c.ends[0].netdev) + 1 }))
    .sort((a, b) => a.index - b.index);
  return { ...base, cables };
}

/** One L3 path to prove: the interfaces holding the two addresses of one fabric subnet (a bond for its members). */
export interface L3Link {
  subnet: string;
  /** Cables under the two interfaces (a bond's several; none when no neighbour was seen). */
  cables: number[];
  ends: [L3End, L3End | undefined];
}

export interface L3End {
  host: string;
  netdev: string;
  address: string;
  mac?: string;
}

function ipToInt(a: string): number {
  return a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
}

/** `192.168.101.0/24` for `192.168.101.1/24`. */
export function subnetOf(cidr: string): string {
  const [a, p] = cidr.split('/');
  const len = Number(p ?? 32);
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  const n = (ipToInt(a ?? '') & mask) >>> 0;
  return `${[24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.')}/${len}`;
}

/** Interfaces that carry fabric addresses: the ports themselves or the bonds over them. */
function fabricL3(f: NetworkFacts): Array<{ netdev: string; addresses: string[]; mac?: string; ports: string[] }> {
  const out = new Map<string, { netdev: string; addresses: string[]; mac?: string; ports: string[] }>();
  for (const p of f.fabric.ports) {
    const dev = p.master ?? p.netdev;
    const nd = f.fabric.netdevs.find((d) => d.name === dev);
    const cur = out.get(dev) ?? {
      netdev: dev,
      addresses: (nd?.addresses ?? []).filter((a) => !a.includes(':')),
      ...(nd?.mac ? { mac: nd.mac.toLowerCase() } : {}),
      ports: [],
    };
    cur.ports.push(p.netdev);
    out.set(dev, cur);
  }
  return [...out.values()];
}

/**
 * Every fabric subnet node 1 (the first host) holds, paired with the interface of each other host in
 * the same subnet: what reachability pings. A subnet only one side holds is a link without a peer.
 */
export function l3Links(all: ReadonlyArray<HostFacts<NetworkFacts>>, cabling: CablingMap): L3Link[] {
  const first = all[0];
  if (!first) return [];
  const cablesOf = (host: string, ports: string[]): number[] =>
    cabling.cables.filter((c) => c.ends.some((e) => e.host === host && ports.includes(e.netdev))).map((c) => c.index);
  const links: L3Link[] = [];
  for (const other of all.slice(1)) {
    const mine = fabricL3(first.facts);
    const theirs = fabricL3(other.facts);
    const seen = new Set<string>();
    for (const a of mine) {
      for (const cidr of a.addresses) {
        const subnet = subnetOf(cidr);
        seen.add(subnet);
        const b = theirs.find((t) => t.addresses.some((x) => subnetOf(x) === subnet));
        const peerCidr = b?.addresses.find((x) => subnetOf(x) === subnet);
        links.push({
          subnet,
          cables: cablesOf(first.host, a.ports),
          ends: [
            {
              host: first.host,
              netdev: a.netdev,
              address: cidr.split('/')[0] as string,
              ...(a.mac ? { mac: a.mac } : {}),
            },
            b && peerCidr
              ? {
                  host: other.host,
                  netdev: b.netdev,
                  address: peerCidr.split('/')[0] as string,
                  ...(b.mac ? { mac: b.mac } : {}),
                }
              : undefined,
          ],
        });
      }
    }
    for (const b of theirs) {
      for (const cidr of b.addresses) {
        if (seen.has(subnetOf(cidr))) continue;
        links.push({
          subnet: subnetOf(cidr),
          cables: cablesOf(other.host, b.ports),
          ends: [{ host: other.host, netdev: b.netdev, address: cidr.split('/')[0] as string }, undefined],
        });
      }
    }
  }
  return links;
}
