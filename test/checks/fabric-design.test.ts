import { describe, expect, it } from 'vitest';
import { cablingMap, type FabricFacts, type FabricPort } from '../../checks/common/fabric.js';
import { controlAddress, controlSubnet, designPlan } from '../../checks/common/design.js';
import { testContext } from '../helpers/stage-context.js';

function port(netdev: string, bdf: string, mac: string): FabricPort {
  return { netdev, bdf, card: bdf.replace(/\.\d$/, ''), mac, adminUp: true, addresses: [] };
}
const NAMES: Array<[string, string]> = [
  ['ens1f0', '0000:1a:00.0'],
  ['ens1f1', '0000:1a:00.1'],
  ['ens2f0', '0000:9a:00.0'],
  ['ens2f1', '0000:9a:00.1'],
];
const mac = (h: number, p: number) => `b8:59:9f:0${h}:00:0${p}`;

/** Two hosts; `peer[p]` is the port of host 2 that host 1's port p is cabled to. */
function hosts(peer: number[], down: number[] = []): Array<{ host: string; facts: FabricFacts }> {
  const mk = (h: number): FabricFacts => ({
    host: `l20-n${h}`,
    netdevs: [],
    rdma: [],
    mgmt: {},
    ports: NAMES.map(([n, b], p) => port(n, b, mac(h, p))),
    neighbours: NAMES.map(([n], p) => {
      const other = h === 1 ? peer[p]! : peer.indexOf(p);
      const isDown = down.includes(h === 1 ? p : other);
      return {
        port: n,
        peerMacs: isDown ? [] : [mac(h === 1 ? 2 : 1, other)],
        state: isDown ? ('down' as const) : ('up' as const),
      };
    }),
  });
  return [
    { host: 'l20-n1', facts: mk(1) },
    { host: 'l20-n2', facts: mk(2) },
  ];
}

describe('cabling map', () => {
  it('numbers cables in node 1 port order and follows crossed cables', () => {
    const m = cablingMap(hosts([1, 0, 2, 3]));
    expect(m.cables.map((c) => `${c.index} ${c.ends[0].netdev}-${c.ends[1].netdev}`)).toEqual([
      '1 ens1f0-ens1f1',
      '2 ens1f1-ens1f0',
      '3 ens2f0-ens2f0',
      '4 ens2f1-ens2f1',
    ]);
    expect(m.unknown).toEqual([]);
  });
  it('bond members share a MAC: LLDP port ids (permanent MACs) name the peer port', () => {
    const all = hosts([1, 0, 2, 3]);
    for (const h of all) {
      const bondMac = h.facts.ports[0]!.mac!;
      for (const p of h.facts.ports) {
        p.permMac = p.mac!;
        p.mac = bondMac;
      }
    }
    // Each port's neighbour: the bond MAC of the other host (useless) plus LLDP's port id.
    for (const h of all) {
      const other = all.find((x) => x !== h)!;
      h.facts.neighbours = h.facts.ports.map((p, i) => {
        const peerIndex = h.host === 'l20-n1' ? [1, 0, 2, 3][i]! : [1, 0, 2, 3].indexOf(i);
        return {
          port: p.netdev,
          peerMacs: [other.facts.ports[0]!.mac!],
          state: 'up' as const,
          peerPort: other.facts.ports[peerIndex]!.permMac!,
          peerPortIdType: 'mac',
          peerSystem: other.host,
        };
      });
    }
    const m = cablingMap(all);
    expect(m.cables.map((c) => `${c.ends[0].netdev}-${c.ends[1].netdev}`)).toEqual([
      'ens1f0-ens1f1',
      'ens1f1-ens1f0',
      'ens2f0-ens2f0',
      'ens2f1-ens2f1',
    ]);
    // Without LLDP the shared MAC names four ports: unknown, never guessed.
    for (const h of all)
      h.facts.neighbours = h.facts.neighbours.map(({ peerPort: _p, peerPortIdType: _t, ...rest }) => rest);
    expect(cablingMap(all).cables).toEqual([]);
  });

  it('reports down ports as unknown, never guesses', () => {
    const m = cablingMap(hosts([0, 1, 2, 3], [3]));
    expect(m.cables).toHaveLength(3);
    expect(m.unknown.map((u) => `${u.host}:${u.netdev}`).sort()).toEqual(['l20-n1:ens2f1', 'l20-n2:ens2f1']);
  });
});

describe('design plans', () => {
  it('A: both ends of cable k get subnet k, control on cable 1', () => {
    const all = hosts([1, 0, 2, 3]);
    const cab = cablingMap(all);
    const ctx = testContext();
    const p1 = designPlan(ctx.config, 0, all[0]!.facts, cab, 2);
    const p2 = designPlan(ctx.config, 1, all[1]!.facts, cab, 2);
    if (typeof p1 === 'string' || typeof p2 === 'string') throw new Error('no plan');
    expect(p1.interfaces.map((x) => `${x.name} ${x.addresses[0]} ${x.mtu}`)).toEqual([
      'ens1f0 192.168.101.1/24 9000',
      'ens1f1 192.168.102.1/24 9000',
      'ens2f0 192.168.103.1/24 9000',
      'ens2f1 192.168.104.1/24 9000',
    ]);
    // node 2's ens1f1 is on cable 1 (crossed): it gets 192.168.101.2
    expect(p2.interfaces.find((x) => x.rail === 1)).toMatchObject({ name: 'ens1f1', addresses: ['192.168.101.2/24'] });
    expect(p2.control).toEqual({ netdev: 'ens1f1', address: '192.168.101.2', subnet: '192.168.101.0/24' });
  });
  it('A without a cabling map refuses with the reason', () => {
    const all = hosts([0, 1, 2, 3], [0, 1, 2, 3]);
    expect(designPlan(testContext().config, 0, all[0]!.facts, cablingMap(all), 2)).toMatch(/cabling is not known/);
  });
  it('B bonds the two ports of each card; tutorial bonds all four', () => {
    const all = hosts([0, 1, 2, 3]);
    const b = designPlan(testContext(undefined, { network: { design: 'B' } }).config, 1, all[1]!.facts, undefined, 2);
    if (typeof b === 'string') throw new Error(b);
    expect(
      b.interfaces
        .filter((x) => x.kind === 'bond')
        .map((x) => `${x.name} ${x.slaves?.join('+')} ${x.addresses[0]} ${x.parameters?.mode}`),
    ).toEqual(['bond0 ens1f0+ens1f1 192.168.110.2/24 802.3ad', 'bond1 ens2f0+ens2f1 192.168.111.2/24 802.3ad']);
    const t = designPlan(
      testContext(undefined, { network: { design: 'tutorial' } }).config,
      0,
      all[0]!.facts,
      undefined,
      2,
    );
    if (typeof t === 'string') throw new Error(t);
    expect(t.control).toEqual({ netdev: 'bond0', address: '192.168.100.1', subnet: '192.168.100.0/24' });
    expect(controlAddress('A', 1)).toBe('192.168.101.2');
    expect(controlSubnet('B')).toBe('192.168.110.0/24');
  });
});
