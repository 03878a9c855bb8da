import { describe, expect, it } from 'vitest';
import { parseRdmaLink } from '../../src/parse/rdma-link.js';
import {
  ansiWrap,
  CUTS,
  loadFixture,
  spacesToTabs,
  toCrlf,
  truncateAt,
  withPrompt,
  withTrailingSpaces,
} from './fixtures.js';

const GB10 = 'corpus/rdma-link__gb10-cx7-inbox-rocep-names-2up-2down.txt';
const IB = 'corpus/rdma-link__ib-ports-no-netdev-trailing-space-high-index.txt';

describe('parseRdmaLink', () => {
  it('reads rocep names, ACTIVE/LINK_UP and DOWN/DISABLED with netdevs', () => {
    const { ports } = parseRdmaLink(loadFixture(GB10));
    expect(ports).toEqual([
      { device: 'rocep1s0f0', port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: 'enp1s0f0np0' },
      { device: 'rocep1s0f1', port: 1, state: 'DOWN', physState: 'DISABLED', netdev: 'enp1s0f1np1' },
      { device: 'roceP2p1s0f0', port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: 'enP2p1s0f0np0' },
      { device: 'roceP2p1s0f1', port: 1, state: 'DOWN', physState: 'DISABLED', netdev: 'enP2p1s0f1np1' },
    ]);
  });

  it('reads IB ports without netdev and with trailing spaces (two hosts pasted)', () => {
    const { ports } = parseRdmaLink(loadFixture(IB));
    expect(ports).toHaveLength(8);
    expect(ports[0]).toEqual({ device: 'mlx5_49', port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: 'eno0' });
    expect(ports[1]).toEqual({ device: 'mlx5_113', port: 1, state: 'ACTIVE', physState: 'LINK_UP' });
    expect(ports.filter((p) => p.netdev !== undefined).map((p) => p.device)).toEqual(['mlx5_49', 'mlx5_39']);
    expect(ports.map((p) => p.device)).toContain('mlx5_103');
  });

  it('reads the pre-5.x iproute2 format and RoCE LAG devices', () => {
    const text = [
      '$ rdma link show',
      '8/1: mlx5_bond_0/1: state ACTIVE physical_state LINK_UP netdev reth0 ',
      '9/1: mlx5_bond_1/1: state ACTIVE physical_state LINK_UP netdev reth2 ',
    ].join('\n');
    expect(parseRdmaLink(text).ports).toEqual([
      { device: 'mlx5_bond_0', port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: 'reth0' },
      { device: 'mlx5_bond_1', port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: 'reth2' },
    ]);
  });

  it('reads IB attributes and rdma -j link JSON', () => {
    const ib =
      'link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 12 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP ';
    expect(parseRdmaLink(ib).ports[0]).toEqual({
      device: 'mlx5_0',
      port: 1,
      state: 'ACTIVE',
      physState: 'LINK_UP',
      lid: 12,
      smLid: 1,
      subnetPrefix: 'fe80:0000:0000:0000',
    });
    const json =
      '[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"ACTIVE","physical_state":"LINK_UP","netdev":"ens1f0","netdev_index":4}]';
    expect(parseRdmaLink(json).ports).toEqual([
      { device: 'mlx5_0', port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: 'ens1f0', netdevIndex: 4 },
    ]);
  });

  it.each([GB10, IB])('%s: CRLF, ANSI, tabs, prompt, trailing spaces keep the facts', (name) => {
    const text = loadFixture(name);
    const base = parseRdmaLink(text);
    for (const v of [
      toCrlf(text),
      ansiWrap(text),
      spacesToTabs(text),
      withPrompt(text, 'rdma link show'),
      withTrailingSpaces(text),
    ]) {
      expect(parseRdmaLink(v)).toEqual(base);
    }
  });

  it.each([GB10, IB])('%s: truncation keeps complete ports and drops cut state fragments', (name) => {
    const text = loadFixture(name);
    const base = parseRdmaLink(text).ports;
    for (const cut of CUTS) {
      const ports = parseRdmaLink(truncateAt(text, cut)).ports;
      ports.slice(0, -1).forEach((p, i) => expect(p).toEqual(base[i]));
      const last = ports[ports.length - 1];
      if (last?.state !== undefined) expect(['ACTIVE', 'DOWN']).toContain(last.state);
      if (last?.physState !== undefined) expect(['LINK_UP', 'DISABLED']).toContain(last.physState);
    }
    expect(parseRdmaLink('link mlx5_0/1 state ACT').ports).toEqual([{ device: 'mlx5_0', port: 1 }]);
  });

  it('never throws on junk', () => {
    expect(parseRdmaLink('')).toEqual({ ports: [] });
    expect(parseRdmaLink('bash: rdma: command not found')).toEqual({ ports: [] });
    expect(parseRdmaLink('[{"ifname":')).toEqual({ ports: [] });
  });
});
