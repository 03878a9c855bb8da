import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { inventoryStage } from '../../checks/inventory/index.js';
import type { InventoryFacts } from '../../checks/inventory/facts.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

describe('inventory on the fresh lab over real SSH', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('passes every check on both hosts and reads the facts the later stages need', async () => {
    const engine = new Engine(t.hosts);
    const outcome = await engine.runStage(inventoryStage);
    const notPass = outcome.results.filter((r) => r.status !== 'pass');
    // The fresh lab's fabric ports are down: the cabling cannot be seen yet, which is not a pass.
    expect(notPass.map((r) => `${r.host}:${r.id} ${r.status} ${r.summary}`)).toEqual([
      'null:inventory.cabling skip cabling not yet visible: fabric ports are down — network.discover-cabling maps it once they are up',
    ]);
    // 11 host checks × 2 hosts + 3 cluster checks
    expect(outcome.results).toHaveLength(11 * 2 + 3);
    const f = outcome.facts.get('l20-n1') as InventoryFacts;
    expect(f.os).toMatchObject({ id: 'ubuntu', versionId: '22.04' });
    expect(f.gpus).toHaveLength(8);
    expect(f.gpus.every((g) => g.deviceId === '26ba')).toBe(true);
    expect(f.nics.map((n) => n.bdf)).toEqual(['0000:1a:00.0', '0000:1a:00.1', '0000:9a:00.0', '0000:9a:00.1']);
    expect(
      f.netdevs
        .filter((n) => n.bdf?.startsWith('0000:1a') || n.bdf?.startsWith('0000:9a'))
        .map((n) => n.name)
        .sort(),
    ).toEqual(['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']);
    expect(f.rdma.map((r) => r.device)).toEqual(['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']);
    expect(f.mgmt).toMatchObject({ netdev: 'eno1', serverAddress: '10.0.0.1', gateway: '10.0.0.254' });
    expect(f.cpu.cpus).toBe(128);
    expect(f.topology.source).toBe('pci');
    // Each NIC shares a PCIe switch with GPUs of its socket (PXB); GPUs on the other socket are SYS.
    const relations = (nic: string) => f.topology.gpuToNic.filter((x) => x.nic === nic).map((x) => x.relation);
    expect(relations('ens1f0').filter((r) => r === 'PXB').length).toBeGreaterThanOrEqual(2);
    expect(relations('ens1f0')).toContain('SYS');
    expect(relations('ens2f1').filter((r) => r === 'PXB').length).toBeGreaterThanOrEqual(2);
    const g = f.pcie.find((p) => p.bdf === f.gpus[0]!.bdf);
    expect(g).toMatchObject({ staSpeedGTs: 16, staWidth: 16, numaNode: 0 });
    const n2 = outcome.facts.get('l20-n2') as InventoryFacts;
    expect(n2.mgmt.serverAddress).toBe('10.0.0.2');
    expect(n2.netdevs.find((n) => n.name === 'ens1f0')?.mac).not.toBe(f.netdevs.find((n) => n.name === 'ens1f0')?.mac);
  });
});
