/**
 * The network stage end to end over real SSH on the lab's scenarios: `ready` passes untouched;
 * `fresh` goes through discover-cabling, write, apply, mgmt-routes and firewall to every check
 * passing, and a second apply changes nothing; `tutorial` shows its mistakes (R16, R18, R22, R23
 * evidence, R48) and migrates to design A; `mtu-mismatch` and `link-down` fail what docs/STAGES.md §4.4 says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type StageOutcome } from '../../src/engine/runner.js';
import type { StepExecutor } from '../../src/engine/steps.js';
import type { CheckResult } from '../../src/engine/types.js';
import { networkStage } from '../../checks/network/index.js';
import { osStage } from '../../checks/os/index.js';
import { clusterSchema } from '../../src/config/schema.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, shellOn, withLabTarget } from './helpers.js';

const notPassing = (o: StageOutcome): string[] =>
  o.results
    .filter((r) => r.status !== 'pass' && r.status !== 'skip')
    .map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status} ${r.summary}`);
const result = (o: StageOutcome, id: string, host: string | null = null): CheckResult | undefined =>
  o.results.find((r) => r.id === id && r.host === host);

describe('network on ready', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
  }, 60_000);
  afterAll(() => t.close());

  it('passes every check (LAG, LACP and stale bonds skip under design A: it has no bond)', async () => {
    const o = await new Engine(t.hosts, { config: t.config }).runStage(networkStage);
    expect(notPassing(o)).toEqual([]);
    expect(
      o.results
        .filter((r) => r.status === 'skip')
        .map((r) => r.id)
        .sort(),
    ).toEqual([
      'network.bond-lag',
      'network.bond-lag',
      'network.lacp',
      'network.lacp',
      'network.stale-devices',
      'network.stale-devices',
    ]);
    expect(result(o, 'network.reachability')?.summary).toMatch(/^4 fabric subnet\(s\) reachable both ways at MTU 9000/);
  }, 60_000);
});

describe('network from fresh', () => {
  let t: LabTarget;
  let ex: StepExecutor;
  let first: StageOutcome;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh' });
    const engine = new Engine(t.hosts, { config: t.config });
    ex = applier(engine);
    await ex.applyStage(osStage); // lldpd, which maps the cables
    first = await ex.applyStage(networkStage);
  }, 180_000);
  afterAll(() => t.close());

  it('discovers the cabling, writes and applies design A under an armed rollback, fixes gateway4 and enables the firewall', () => {
    const applied = (id: string) => (first.steps ?? []).filter((s) => s.id === id).map((s) => `${s.host} ${s.status}`);
    for (const id of [
      'network.discover-cabling',
      'network.write',
      'network.apply',
      'network.mgmt-routes',
      'network.firewall',
    ]) {
      expect(applied(id), id).toEqual(['l20-n1 applied', 'l20-n2 applied']);
    }
    expect(notPassing(first)).toEqual([]);
  });

  it('leaves the files and the live state design A describes', async () => {
    const file = await shellOn(
      t,
      1,
      'sudo cat /etc/netplan/60-l20-fabric.yaml; sudo stat -c %a /etc/netplan/60-l20-fabric.yaml',
    );
    expect(file).toMatch(/^# l20-setup \S+ run \d{8}T\d{6}Z design A — fabric only\n/);
    expect(file).toContain('\nnetwork:\n  version: 2\n  ethernets:\n');
    expect(file).toContain(
      '    ens2f1: {renderer: networkd, optional: true, mtu: 9000, ' + 'addresses: [192.168.104.2/24]}\n',
    );
    expect(file.trim().endsWith('600')).toBe(true);
    expect(await shellOn(t, 0, 'sudo netplan get ethernets.eno1')).toContain(
      'routes:\n- to: "default"\n  via: "10.0.0.254"\n',
    );
    expect(await shellOn(t, 0, 'systemctl list-timers --all')).not.toContain('l20-netplan-rollback');
  });

  it('a second apply changes nothing', async () => {
    const again = await ex.applyStage(networkStage);
    expect(again.changed).toBe(0);
    expect(notPassing(again)).toEqual([]);
  }, 60_000);
});

describe('network design B from fresh', () => {
  it(
    'two 802.3ad bonds, one per card: RoCE LAG devices, LACP partners, both subnets proved',
    () =>
      withLabTarget({ scenario: 'fresh' }, async (t) => {
        const config = clusterSchema.parse({ ...t.config, network: { design: 'B', mtu: 9000 } });
        const ex = applier(new Engine(t.hosts, { config }));
        await ex.applyStage(osStage);
        const o = await ex.applyStage(networkStage);
        expect(notPassing(o)).toEqual([]);
        expect(result(o, 'network.bond-lag', 'l20-n2')).toMatchObject({
          status: 'pass',
          summary: 'bond0, bond1: RoCE LAG formed',
        });
        expect(result(o, 'network.lacp', 'l20-n1')?.status).toBe('pass');
        expect(result(o, 'network.reachability')?.summary).toMatch(/^2 fabric subnet\(s\) reachable/);
        expect(await shellOn(t, 0, 'rdma link show')).toBe(
          'link mlx5_bond_0/1 state ACTIVE physical_state LINK_UP netdev bond0 \nlink mlx5_bond_1/1 state ACTIVE physical_state LINK_UP netdev bond1 \n',
        );
      }),
    180_000,
  );
});

describe('network on the tutorial', () => {
  let t: LabTarget;
  let engine: Engine;
  let before: StageOutcome;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
    engine = new Engine(t.hosts, { config: t.config });
    before = await engine.runStage(networkStage);
  }, 60_000);
  afterAll(() => t.close());

  it("shows the recipe's mistakes with their rule ids and evidence", () => {
    expect(result(before, 'network.design', 'l20-n1')).toMatchObject({
      status: 'fail',
      rule: 'R16',
      summary: 'live design is tutorial, chosen A',
    });
    const lag = result(before, 'network.bond-lag', 'l20-n1');
    expect(lag).toMatchObject({ status: 'fail', rule: 'R16' });
    expect(lag?.evidence).toContain('  ens2f0 → 0000:9a:00.0 (card 0000:9a:00)');
    expect(lag?.evidence).toContain('2. GID spill');
    expect(lag?.evidence).toContain('`netplan apply` never deletes the bond later (R23)');
    const lint = result(before, 'network.netplan-lint', 'l20-n2');
    expect(lint).toMatchObject({ status: 'fail', rule: 'R22' });
    expect(lint?.evidence).toMatch(/R22 \(high\) \/etc\/netplan\/02-bond-roce\.yaml:12 parameters:/);
    expect(lint?.evidence).toMatch(/R18 \(medium\) \/etc\/netplan\/02-bond-roce\.yaml:16 lacp-rate: fast/);
    expect(lint?.evidence).toMatch(/R21 \(low\).*mode 0644/);
    expect(result(before, 'network.firewall', 'l20-n1')).toMatchObject({ status: 'warn', rule: 'R48' });
    // One subnet over the bond: reachable, but not per cable (no LLDP on the recipe's hosts: ports unmapped).
    expect(result(before, 'network.cabling')?.status).toBe('fail');
  });

  it('migrates to design A: bond deleted, its file moved to the backup directory, every check passing', async () => {
    const ex = applier(engine);
    await ex.applyStage(osStage);
    const o = await ex.applyStage(networkStage);
    const write = (o.steps ?? []).find((s) => s.id === 'network.write' && s.host === 'l20-n1');
    expect(write?.commands.join('\n')).toMatch(
      /sudo mv \/etc\/netplan\/02-bond-roce\.yaml \/var\/lib\/l20-setup\/backup\/\d{8}T\d{6}Z\/etc\/netplan\/02-bond-roce\.yaml/,
    );
    expect((o.steps ?? []).find((s) => s.id === 'network.apply' && s.host === 'l20-n1')?.commands.join('\n')).toContain(
      'sudo ip link delete dev bond0',
    );
    expect(notPassing(o)).toEqual([]);
    expect(await shellOn(t, 0, 'ip -d link show type bond')).toBe('');
    expect(await shellOn(t, 0, 'rdma link show')).toMatch(
      /^link mlx5_0\/1 state ACTIVE physical_state LINK_UP netdev ens1f0 \n/,
    );
    const again = await ex.applyStage(networkStage);
    expect(again.changed).toBe(0);
  }, 180_000);
});

describe('network on the fault scenarios', () => {
  it(
    'mtu-mismatch fails network.mtu (R24, cable 2 ends differ) and jumbo reachability; apply fixes it',
    () =>
      withLabTarget({ scenario: 'mtu-mismatch' }, async (t) => {
        const engine = new Engine(t.hosts, { config: t.config });
        const o = await engine.runStage(networkStage);
        expect(notPassing(o).map((x) => x.split(' ')[0])).toEqual(['pair:network.mtu', 'pair:network.reachability']);
        expect(result(o, 'network.mtu')).toMatchObject({
          rule: 'R24',
          summary: expect.stringContaining('MTU differs at the ends of a cable'),
        });
        expect(result(o, 'network.mtu')?.evidence).toContain('cable 2: l20-n1:ens1f1 9000 ≠ l20-n2:ens1f1 1500');
        expect(result(o, 'network.reachability')).toMatchObject({ status: 'fail', rule: 'R24' });
        const fixed = await applier(engine).applyStage(networkStage);
        expect(notPassing(fixed)).toEqual([]);
      }),
    120_000,
  );

  it(
    'link-down fails reachability on cable 4 and names the unplugged ports',
    () =>
      withLabTarget({ scenario: 'link-down' }, async (t) => {
        const o = await new Engine(t.hosts, { config: t.config }).runStage(networkStage);
        expect(notPassing(o).map((x) => x.split(' ')[0])).toEqual([
          'pair:network.cabling',
          'pair:network.reachability',
        ]);
        expect(result(o, 'network.reachability')).toMatchObject({
          rule: 'R17',
          summary: expect.stringContaining('192.168.104.0/24'),
        });
        expect(result(o, 'network.cabling')?.summary).toContain('l20-n1:ens2f1, l20-n2:ens2f1');
      }),
    60_000,
  );
});
