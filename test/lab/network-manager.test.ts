/**
 * The network stage on a host whose management NetworkManager renders (the `networkmanager` lab
 * scenario: Ubuntu desktop/cloud images' 01-network-manager-all.yaml): the apply leaves management
 * on NetworkManager, and a fabric file with a top-level `renderer: networkd` (the old format, which
 * would re-render management) is refused by network.apply's preflight, by name, before any change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type StageOutcome } from '../../src/engine/runner.js';
import type { StageDef } from '../../src/engine/types.js';
import { networkStage } from '../../checks/network/index.js';
import type { NetworkFacts } from '../../checks/network/facts.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, shellOn } from './helpers.js';

const only = (...ids: string[]): StageDef<NetworkFacts> => ({
  ...networkStage,
  steps: (networkStage.steps ?? []).filter((s) => ids.includes(s.id)),
});
const statuses = (o: StageOutcome, id: string): string[] =>
  (o.steps ?? []).filter((s) => s.id === id).map((s) => `${s.host} ${s.status}`);

describe('network on networkmanager: management stays on NetworkManager', () => {
  let t: LabTarget;
  let first: StageOutcome;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'networkmanager' });
    const steps = only('network.discover-cabling', 'network.write', 'network.apply', 'network.mgmt-routes');
    first = await applier(new Engine(t.hosts, { config: t.config })).applyStage(steps);
  }, 180_000);
  afterAll(() => t.close());

  it('applies design A and the default route; netplan and the host keep management on NetworkManager', async () => {
    for (const id of ['network.write', 'network.apply', 'network.mgmt-routes']) {
      expect(statuses(first, id), id).toEqual(['l20-n1 applied', 'l20-n2 applied']);
    }
    for (const [i, h] of t.lab.hosts.entries()) {
      expect(await shellOn(t, i, 'sudo netplan get renderer'), h.name).toBe('NetworkManager\n');
      expect(await shellOn(t, i, 'sudo netplan get ethernets.eno1.renderer'), h.name).toBe('null\n');
      expect(await shellOn(t, i, 'sudo netplan get ethernets.ens1f0.renderer'), h.name).toBe('networkd\n');
      expect(h.machine.renderedBy?.get('eno1'), h.name).toBe('NetworkManager');
      expect(h.machine.renderedBy?.get('ens1f0'), h.name).toBe('networkd');
      const eno1 = h.machine.netdevs.find((d) => d.name === 'eno1');
      expect(
        eno1?.addresses.map((a) => a.local),
        h.name,
      ).toContain(h.machine.mgmt.address);
    }
  });
});

describe('network.apply on networkmanager refuses a fabric file that would re-render management', () => {
  let t: LabTarget;
  let engine: Engine;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'networkmanager' });
    engine = new Engine(t.hosts, { config: t.config });
    const w = await applier(engine).applyStage(only('network.discover-cabling', 'network.write'));
    expect(statuses(w, 'network.write')).toEqual(['l20-n1 applied', 'l20-n2 applied']);
  }, 180_000);
  afterAll(() => t.close());

  it('names management and the renderer move, and changes nothing', async () => {
    // The old format: a top-level renderer, which netplan gives every definition without its own.
    const topLevel =
      "sudo sed -i 's/^  version: 2$/  version: 2\\n  renderer: networkd/' " + '/etc/netplan/60-l20-fabric.yaml';
    await shellOn(t, 1, topLevel);
    expect(await shellOn(t, 1, 'sudo netplan get ethernets.eno1.renderer')).toBe('null\n');
    expect(await shellOn(t, 1, 'sudo netplan get renderer')).toBe('networkd\n');
    const o = await applier(engine).applyStage(only('network.apply'));
    const steps = (o.steps ?? []).filter((s) => s.id === 'network.apply');
    expect(steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    expect(steps[0]?.error).toContain(
      'preflight refused, nothing changed:\n' + 'l20-n2: management eno1 would move from NetworkManager to networkd',
    );
    expect(steps.every((s) => !s.changed)).toBe(true);
    // The real netplan generate ran over copies of the files before and after, not over /run.
    const preflight = /^sudo bash -s \S+ \/var\/lib\/l20-setup\/netplan\/pending\/files <<'EOF' … EOF \(preflight\)$/;
    expect(steps[1]?.commands.some((c) => preflight.test(c))).toBe(true);
    expect(await shellOn(t, 1, 'systemctl list-timers --all')).not.toContain('l20-netplan-rollback');
    expect(t.lab.hosts[1]!.machine.renderedBy?.get('eno1')).toBe('NetworkManager');
  }, 120_000);
});
