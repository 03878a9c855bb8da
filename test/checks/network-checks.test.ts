/**
 * network checks on recorded probe output (test/fixtures/network: the stage's probes captured on
 * the lab's ready, fresh, tutorial and design-B hosts) and the corpus' /proc/net/bonding samples:
 * every pass and fail path, with the rule ids and the evidence each verdict rests on.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as h from '../../checks/network/checks-host.js';
import * as p from '../../checks/network/checks-pair.js';
import { collectNetwork, type NetworkFacts } from '../../checks/network/facts.js';
import type { ReachCluster, LinkProof, PingOutcome } from '../../checks/network/reach.js';
import type { HostCheckDef, HostFacts, PairCheckDef, StageContext } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';

type Recorded = Record<string, { commandLine: string; exitCode: number | null; stdout: string; stderr: string }>;

function recorded(name: string): Recorded {
  return JSON.parse(readFileSync(new URL(`../fixtures/network/${name}.json`, import.meta.url), 'utf8')) as Recorded;
}

function corpus(name: string): string {
  return readFileSync(new URL(`../fixtures/corpus/${name}`, import.meta.url), 'utf8');
}

/** Facts of one recorded host; `edit` changes the raw outputs first (stdout by probe id). */
function facts(name: string, host: string, edit: (r: Recorded) => void = () => undefined): NetworkFacts {
  const r = recorded(`${name}-${host}`);
  edit(r);
  const results: Record<string, RunResult> = {};
  for (const [id, x] of Object.entries(r))
    results[id] = { ...x, signal: null, durationMs: 1, timedOut: false, cancelled: false, truncated: false };
  return collectNetwork({ host, results });
}

const both = (name: string, edit?: (r: Recorded, host: string) => void): HostFacts<NetworkFacts>[] =>
  ['l20-n1', 'l20-n2'].map((host) => ({ host, facts: facts(name, host, edit ? (r) => edit(r, host) : undefined) }));

const ctxA = testContext();
const host = (check: unknown, f: NetworkFacts, ctx: StageContext = ctxA) =>
  (check as HostCheckDef<NetworkFacts>).evaluate(f, f.host, ctx);
const pair = (check: unknown, all: HostFacts<NetworkFacts>[], cluster?: ReachCluster, ctx: StageContext = ctxA) =>
  (check as PairCheckDef<NetworkFacts, ReachCluster>).evaluate(all, { ...ctx, cluster });

describe('network facts', () => {
  it('read the fabric, files with modes, merged netplan, LLDP, bonds and ufw of a ready host', () => {
    const f = facts('ready', 'l20-n1');
    expect(f.fabric.ports.map((x) => `${x.netdev} ${x.addresses.join(',')} ${x.mtu}`)).toEqual([
      'ens1f0 192.168.101.1/24 9000',
      'ens1f1 192.168.102.1/24 9000',
      'ens2f0 192.168.103.1/24 9000',
      'ens2f1 192.168.104.1/24 9000',
    ]);
    expect(f.netplanFiles.map((x) => [x.path, x.mode])).toEqual([
      ['/etc/netplan/01-netcfg.yaml', 0o600],
      ['/etc/netplan/60-l20-fabric.yaml', 0o600],
    ]);
    expect(Object.keys(f.merged.ethernets)).toEqual(['eno1', 'ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']);
    expect(f.lldp.map((n) => n.localPort)).toEqual(['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']);
    expect(f.bonds).toEqual([]);
    expect(f.ufw).toMatchObject({ available: true, active: true, defaultIncoming: 'deny' });
    expect(f.lldpMissing).toBe(false);
  });
  it("read the tutorial's bond from /proc/net/bonding and ip -d link, members with their card", () => {
    const f = facts('tutorial', 'l20-n1');
    expect(f.bonds).toHaveLength(1);
    expect(f.bonds[0]).toMatchObject({
      name: 'bond0',
      mode: 'balance-xor',
      lacpRate: 'slow',
      miimon: 100,
      xmitHashPolicy: 'layer3+4',
      addresses: ['192.168.100.1/24'],
      described: true,
    });
    expect(f.bonds[0]?.slaves.map((s) => `${s.name} ${s.card} ${s.mii}`)).toEqual([
      'ens1f0 0000:1a:00 up',
      'ens1f1 0000:1a:00 up',
      'ens2f0 0000:9a:00 up',
      'ens2f1 0000:9a:00 up',
    ]);
    expect(f.permMacs.ens1f0).not.toBe(f.fabric.ports[0]?.mac);
    expect(f.lldpMissing).toBe(true);
  });
});

describe('network host checks', () => {
  it('design: classifies none / A / B / tutorial and passes only the chosen one', () => {
    expect(h.classify(facts('fresh', 'l20-n1')).design).toBe('none');
    expect(h.classify(facts('ready', 'l20-n1')).design).toBe('A');
    expect(h.classify(facts('tutorial', 'l20-n1')).design).toBe('tutorial');
    expect(h.classify(facts('design-b', 'l20-n1')).design).toBe('B');
    expect(host(h.designCheck, facts('ready', 'l20-n1')).status).toBe('pass');
    expect(host(h.designCheck, facts('fresh', 'l20-n1'))).toMatchObject({
      status: 'fail',
      fix: 'apply network.write and network.apply',
    });
    const tut = host(h.designCheck, facts('tutorial', 'l20-n1'));
    expect(tut).toMatchObject({ status: 'fail', rule: 'R16', summary: 'live design is tutorial, chosen A' });
    expect(tut.fix).toMatch(/network\.design.*tutorial/);
    expect(
      host(
        h.designCheck,
        facts('tutorial', 'l20-n1'),
        testContext(undefined, { network: { design: 'tutorial', mtu: 9000 } }),
      ).status,
    ).toBe('pass');
    // A port without its address is neither design.
    const partial = facts('ready', 'l20-n1', (r) => {
      r['ip-addr']!.stdout = r['ip-addr']!.stdout.replace('"192.168.104.1"', '"fe80::1"').replace(
        '"family":"inet","local":"fe80::1"',
        '"family":"inet6","local":"fe80::1"',
      );
    });
    expect(h.classify(partial).design).toBe('other');
  });

  it('bond-lag (R16): skip without bonds, fail for the 4-port cross-card bond with §2 reasons, pass for design B', () => {
    expect(host(h.bondLagCheck, facts('ready', 'l20-n1')).status).toBe('skip');
    const tut = host(h.bondLagCheck, facts('tutorial', 'l20-n2'));
    expect(tut).toMatchObject({ status: 'fail', rule: 'R16' });
    expect(tut.summary).toContain('4 slaves');
    expect(tut.evidence).toContain('  ens1f1 → 0000:1a:00.1 (card 0000:1a:00)');
    expect(tut.evidence).toContain('rdma link: mlx5_0/1 ACTIVE netdev ens1f0; mlx5_1/1 ACTIVE netdev ens1f1');
    for (const n of [
      '1. No RoCE LAG',
      '2. GID spill',
      '3. No "100GbE"',
      '4. DCB cannot be set on a bond',
      '5. lacp-rate is silently dropped',
    ])
      expect(tut.evidence).toContain(n);
    const b = host(h.bondLagCheck, facts('design-b', 'l20-n1'));
    expect(b).toMatchObject({ status: 'pass', summary: 'bond0, bond1: RoCE LAG formed' });
    // A two-port bond in balance-rr forms no LAG even on one card.
    const rr = facts('design-b', 'l20-n1', (r) => {
      r['ip-bond']!.stdout = r['ip-bond']!.stdout.replace(/bond mode 802\.3ad/g, 'bond mode balance-rr');
    });
    expect(host(h.bondLagCheck, rr).summary).toMatch(/mode balance-rr/);
  });

  it("netplan-lint: lint's own rules on the live files", () => {
    expect(host(h.netplanLintCheck, facts('ready', 'l20-n1')).status).toBe('pass');
    const fresh = host(h.netplanLintCheck, facts('fresh', 'l20-n1'));
    expect(fresh).toMatchObject({ status: 'warn', rule: 'R21', fix: expect.stringContaining('network.mgmt-routes') });
    expect(fresh.evidence).toContain('/etc/netplan/01-netcfg.yaml:9 gateway4: 10.0.0.254');
    const tut = host(h.netplanLintCheck, facts('tutorial', 'l20-n1'));
    expect(tut).toMatchObject({ status: 'fail', rule: 'R22' });
    expect(tut.summary).toContain('R18');
    // Our own file carries bond parameters in design B: applied under an armed rollback, never with netplan try.
    expect(host(h.netplanLintCheck, facts('design-b', 'l20-n1')).status).toBe('pass');
    const noMii = facts('design-b', 'l20-n1', (r) => {
      r['netplan-files']!.stdout = r['netplan-files']!.stdout.replace(/, mii-monitor-interval: 100/g, '').replace(
        '/etc/netplan/60-l20-fabric.yaml 600',
        '/etc/netplan/70-b.yaml 600',
      );
    });
    expect(host(h.netplanLintCheck, noMii)).toMatchObject({
      status: 'fail',
      rule: 'R22',
      summary: expect.stringContaining('R20'),
    });
  });

  it('stale-devices (R23): a bond no file defines', () => {
    expect(host(h.staleDevicesCheck, facts('tutorial', 'l20-n1')).status).toBe('pass');
    const stale = facts('tutorial', 'l20-n1', (r) => {
      r['netplan-get']!.stdout = r['netplan-get']!.stdout.replace(/ {2}bonds:[\s\S]*$/, '');
    });
    const v = host(h.staleDevicesCheck, stale);
    expect(v).toMatchObject({
      status: 'fail',
      rule: 'R23',
      fix: expect.stringContaining('sudo ip link delete dev bond0'),
    });
    expect(v.evidence).toContain(
      'bond0: NOT in any netplan file; slaves ens1f0, ens1f1, ens2f0, ens2f1; 192.168.100.1/24',
    );
  });

  it('lacp: skip under design A, pass for design B, fail on the corpus bond without an aggregator or partner', () => {
    expect(host(h.lacpCheck, facts('ready', 'l20-n1')).status).toBe('skip');
    const ctxB = testContext(undefined, { network: { design: 'B', mtu: 9000 } });
    expect(host(h.lacpCheck, facts('design-b', 'l20-n1'), ctxB)).toMatchObject({ status: 'pass' });
    const broken = facts('design-b', 'l20-n1', (r) => {
      // The corpus bond, its members renamed to this host's ports (eth1/eth2 → ens1f0/ens1f1).
      const sample = corpus('proc-net-bonding__802.3ad-no-active-aggregator-agg-id-na.txt')
        .split('\n')
        .filter((l) => !l.startsWith('#') && !l.startsWith('cat '))
        .join('\n')
        .replace('Slave Interface: eth1', 'Slave Interface: ens1f0')
        .replace('Slave Interface: eth2', 'Slave Interface: ens1f1');
      r.bonding!.stdout = r.bonding!.stdout.replace(
        /### bond bond0\n[\s\S]*?(?=### bond bond1)/,
        `### bond bond0\n${sample}\n`,
      );
    });
    const v = host(h.lacpCheck, broken, ctxB);
    expect(v.status).toBe('fail');
    expect(v.summary).toMatch(/bond0 has no active aggregator/);
    expect(v.evidence).toContain('  ens1f0: MII up, Aggregator ID N/A');
  });

  it('firewall (R48): inactive warns, missing rules fail, SSH and every fabric interface admitted passes', () => {
    expect(host(h.firewallCheck, facts('ready', 'l20-n1'))).toMatchObject({ status: 'pass', rule: 'R48' });
    expect(host(h.firewallCheck, facts('fresh', 'l20-n1'))).toMatchObject({
      status: 'warn',
      rule: 'R48',
      fix: expect.stringContaining('network.firewall'),
    });
    const noSsh = facts('ready', 'l20-n1', (r) => {
      r.ufw!.stdout = r
        .ufw!.stdout.split('\n')
        .filter((l) => !l.startsWith('22/tcp') && !l.includes('ens2f1'))
        .join('\n');
    });
    expect(host(h.firewallCheck, noSsh)).toMatchObject({
      status: 'fail',
      summary: 'ufw active but missing ALLOW IN: 22/tcp on eno1, in on ens2f1',
    });
    expect(host(h.firewallCheck, facts('design-b', 'l20-n2')).summary).toContain('fabric (bond0, bond1)');
  });
});

function ping(
  from: string,
  to: string,
  kind: PingOutcome['kind'],
  received: number,
  localMtuError = false,
): PingOutcome {
  return {
    from: {
      host: from,
      netdev: 'ens1f0',
      address: from === 'l20-n1' ? '192.168.101.1' : '192.168.101.2',
      mac: `mac-${from}`,
    },
    to: { host: to, netdev: 'ens1f0', address: to === 'l20-n1' ? '192.168.101.1' : '192.168.101.2', mac: `mac-${to}` },
    kind,
    sent: 3,
    received,
    localMtuError,
    exitCode: received === 3 ? 0 : 1,
    evidence: `${from} ping ${kind}`,
  };
}

function proof(over: Partial<LinkProof> = {}): LinkProof {
  return {
    link: {
      subnet: '192.168.101.0/24',
      cables: [1],
      ends: [
        { host: 'l20-n1', netdev: 'ens1f0', address: '192.168.101.1', mac: 'mac-l20-n1' },
        { host: 'l20-n2', netdev: 'ens1f0', address: '192.168.101.2', mac: 'mac-l20-n2' },
      ],
    },
    pings: [
      ping('l20-n1', 'l20-n2', 'normal', 3),
      ping('l20-n1', 'l20-n2', 'jumbo', 3),
      ping('l20-n2', 'l20-n1', 'normal', 3),
      ping('l20-n2', 'l20-n1', 'jumbo', 3),
    ],
    neigh: [
      {
        host: 'l20-n1',
        dst: '192.168.101.2',
        dev: 'ens1f0',
        lladdr: 'mac-l20-n2',
        state: 'REACHABLE',
        evidence: 'n1 neigh',
      },
      {
        host: 'l20-n2',
        dst: '192.168.101.1',
        dev: 'ens1f0',
        lladdr: 'mac-l20-n1',
        state: 'REACHABLE',
        evidence: 'n2 neigh',
      },
    ],
    ...over,
  };
}

describe('network pair checks', () => {
  it('cabling: four cables from LLDP on ready; unknown ports name network.discover-cabling', () => {
    expect(pair(p.cablingCheck, both('ready'))).toMatchObject({ status: 'pass', summary: '4 cables mapped' });
    const fresh = pair(p.cablingCheck, both('fresh'));
    expect(fresh).toMatchObject({ status: 'fail', fix: expect.stringContaining('network.discover-cabling') });
    expect(fresh.evidence).toContain('l20-n2:ens2f1: no neighbour seen');
  });

  it('addresses (R17): the plan from the cabling; cabling unknown, other addresses and shared subnets fail', () => {
    expect(pair(p.addressesCheck, both('ready'))).toMatchObject({ status: 'pass', rule: 'R17' });
    expect(pair(p.addressesCheck, both('fresh'))).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('network.discover-cabling'),
    });
    expect(
      pair(
        p.addressesCheck,
        both('design-b'),
        undefined,
        testContext(undefined, { network: { design: 'B', mtu: 9000 } }),
      ).status,
    ).toBe('pass');
    const shared = both('ready', (r, hn) => {
      if (hn === 'l20-n2')
        r['ip-addr']!.stdout = r['ip-addr']!.stdout.replace(
          '"192.168.102.2","prefixlen":24',
          '"192.168.101.9","prefixlen":24',
        );
    });
    const v = pair(p.addressesCheck, shared);
    expect(v.status).toBe('fail');
    expect(v.evidence).toContain('l20-n2: ens1f0 and ens1f1 share 192.168.101.0/24 (ARP flux)');
    expect(v.evidence).toContain('l20-n2:ens1f1 has 192.168.101.9/24, planned 192.168.102.2/24');
  });

  it('mtu (R24): 9000 everywhere and equal at both ends of every cable', () => {
    expect(pair(p.mtuCheck, both('ready'))).toMatchObject({ status: 'pass', rule: 'R24' });
    const mismatch = both('ready', (r, hn) => {
      if (hn === 'l20-n2')
        r['ip-link']!.stdout = r['ip-link']!.stdout.replace(
          /("ifname":"ens1f1","flags":\[[^\]]*\],"mtu":)9000/,
          '$11500',
        );
    });
    const v = pair(p.mtuCheck, mismatch);
    expect(v).toMatchObject({
      status: 'fail',
      rule: 'R24',
      summary: expect.stringContaining('MTU differs at the ends of a cable'),
    });
    expect(v.evidence).toContain('cable 2: l20-n1:ens1f1 9000 ≠ l20-n2:ens1f1 1500');
    expect(pair(p.mtuCheck, both('fresh')).summary).toContain('l20-n1:ens1f0 MTU 1500 (want 9000)');
  });

  it('reachability: both ways with jumbo; jumbo-only loss is R24, loss or a foreign neighbour MAC is R17', () => {
    const all = both('ready');
    expect(
      pair(p.reachabilityCheck, all, { cabling: { cables: [], unknown: [], loops: [] }, links: [proof()] }).status,
    ).toBe('pass');
    const jumbo = proof({
      pings: [
        ping('l20-n1', 'l20-n2', 'normal', 3),
        ping('l20-n1', 'l20-n2', 'jumbo', 0),
        ping('l20-n2', 'l20-n1', 'normal', 3),
        ping('l20-n2', 'l20-n1', 'jumbo', 0, true),
      ],
    });
    const j = pair(p.reachabilityCheck, all, { cabling: { cables: [], unknown: [], loops: [] }, links: [jumbo] });
    expect(j).toMatchObject({ status: 'fail', rule: 'R24' });
    expect(j.summary).toContain('jumbo pings lost while normal ones pass');
    expect(j.evidence).toContain("jumbo frames fail locally (ens1f0's MTU is below the jumbo size)");
    const lost = proof({
      pings: [
        ping('l20-n1', 'l20-n2', 'normal', 0),
        ping('l20-n1', 'l20-n2', 'jumbo', 0),
        ping('l20-n2', 'l20-n1', 'normal', 0),
        ping('l20-n2', 'l20-n1', 'jumbo', 0),
      ],
    });
    expect(
      pair(p.reachabilityCheck, all, { cabling: { cables: [], unknown: [], loops: [] }, links: [lost] }),
    ).toMatchObject({ status: 'fail', rule: 'R17', summary: expect.stringContaining('lost 3/3 pings') });
    const flux = proof({
      neigh: [
        { host: 'l20-n1', dst: '192.168.101.2', dev: 'ens1f0', lladdr: 'mac-other', evidence: '' },
        { host: 'l20-n2', dst: '192.168.101.1', dev: 'ens1f0', lladdr: 'mac-l20-n1', evidence: '' },
      ],
    });
    expect(
      pair(p.reachabilityCheck, all, { cabling: { cables: [], unknown: [], loops: [] }, links: [flux] }).summary,
    ).toContain('through MAC mac-other, not l20-n2:ens1f0');
    const lonely = proof({
      link: {
        subnet: '192.168.104.0/24',
        cables: [],
        ends: [{ host: 'l20-n1', netdev: 'ens2f1', address: '192.168.104.1' }, undefined],
      },
      pings: [],
      neigh: [],
    });
    expect(
      pair(p.reachabilityCheck, all, { cabling: { cables: [], unknown: [], loops: [] }, links: [lonely] }).summary,
    ).toContain('no other host has an address in 192.168.104.0/24');
    expect(
      pair(p.reachabilityCheck, both('fresh'), { cabling: { cables: [], unknown: [], loops: [] }, links: [] }),
    ).toMatchObject({ status: 'fail', summary: 'no fabric addresses configured yet' });
  });
});
