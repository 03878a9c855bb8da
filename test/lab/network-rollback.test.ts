/**
 * network.apply's armed rollback through the real SSH path: a change that cuts a host's
 * management route is rolled back by that host's timer (the tool cannot reach it) and at once on
 * the host it can reach; one that breaks a fabric cable is rolled back at once on both; a firewall
 * that drops the SSH port is disabled by its timer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'ssh2';
import { Engine } from '../../src/engine/runner.js';
import type { StepExecutor } from '../../src/engine/steps.js';
import type { StageDef } from '../../src/engine/types.js';
import { networkStage } from '../../checks/network/index.js';
import type { NetworkFacts } from '../../checks/network/facts.js';
import type { ReachCluster } from '../../checks/network/reach.js';
import { osStage } from '../../checks/os/index.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, connect, end, exec, text } from './helpers.js';

const only = (...ids: string[]): StageDef<NetworkFacts, ReachCluster> => ({
  ...networkStage,
  steps: (networkStage.steps ?? []).filter((s) => ids.includes(s.id)),
});

/** A fresh lab with the os stage applied and the fabric netplan written (not yet applied) on both hosts. */
async function writtenNotApplied(): Promise<{ t: LabTarget; engine: Engine; ex: StepExecutor }> {
  const t = await labTarget({ scenario: 'fresh' });
  const engine = new Engine(t.hosts, { config: t.config });
  const ex = applier(engine);
  await ex.applyStage(osStage);
  const w = await ex.applyStage(only('network.discover-cabling', 'network.write'));
  expect(w.steps?.filter((s) => s.id === 'network.write').map((s) => s.status)).toEqual(['applied', 'applied']);
  return { t, engine, ex };
}

describe('network.apply rolls back a change that cuts management', () => {
  let t: LabTarget;
  let engine: Engine;
  let ex: StepExecutor;
  beforeAll(async () => {
    ({ t, engine, ex } = await writtenNotApplied());
  }, 120_000);
  afterAll(() => t.close());

  it('the unreachable host is restored by its timer, the other at once, and the tool says so', async () => {
    // A fabric route that captures the management return path (to the SSH client) on node 2 only.
    const c2: Client = await connect(t.lab, t.lab.hosts[1]!);
    const was = 'ens1f0: {renderer: networkd, optional: true, mtu: 9000, addresses: \\[192.168.101.2/24\\]}';
    const now =
      'ens1f0: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.101.2/24], ' +
      'routes: [{to: 10.0.0.100/32, via: 192.168.101.1}]}';
    const file = '/etc/netplan/60-l20-fabric.yaml';
    const edit = text(await exec(c2, `sudo sed -i 's|${was}|${now}|' ${file} && sudo grep -c 10.0.0.100 ${file}`));
    expect(edit.out.trim()).toBe('1');
    await end(c2);

    const o = await ex.applyStage(only('network.apply'));
    const steps = (o.steps ?? []).filter((s) => s.id === 'network.apply');
    expect(steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    const n2 = steps.find((s) => s.host === 'l20-n2')?.error ?? '';
    expect(n2).toMatch(/l20-n2: no new SSH connection over management/);
    expect(n2).toMatch(
      /unreachable after the change; the rollback timer restored it \(rollback\.log: .* rolled back run \d{8}T\d{6}Z\)/,
    );
    expect(n2).toMatch(/verify: the old addresses are back/);
    expect(steps.find((s) => s.host === 'l20-n1')?.error).toMatch(
      /rolled back at once \(the rollback service ran, Result=success\)/,
    );

    // Node 2 is back on the configuration before the write: no fabric file, no stray route, management reachable.
    const c = await connect(t.lab, t.lab.hosts[1]!);
    expect(text(await exec(c, 'sudo ls /etc/netplan')).out).toBe('01-netcfg.yaml\n');
    const routes = JSON.parse(text(await exec(c, 'ip -j route show')).out) as Array<{ dst: string; dev: string }>;
    expect(routes.filter((r) => r.dev !== 'eno1')).toEqual([]);
    expect(text(await exec(c, 'systemctl list-timers --all')).out).not.toContain('l20-netplan-rollback');
    await end(c);
    // The stage still asks for the change: the guards fail as before the attempt.
    const again = await engine.runStage(networkStage);
    expect(again.results.find((r) => r.id === 'network.addresses')?.status).toBe('fail');
  }, 120_000);
});

describe('network.apply rolls back a change that cuts the fabric path (management stays up)', () => {
  let t: LabTarget;
  let ex: StepExecutor;
  beforeAll(async () => {
    ({ t, ex } = await writtenNotApplied());
  }, 120_000);
  afterAll(() => t.close());

  it('the proof over the fabric fails, both hosts are rolled back at once, and the tool says which cable', async () => {
    // Node 2's end of cable 1 in the wrong subnet: management is untouched, but the cable no longer pings.
    const c2: Client = await connect(t.lab, t.lab.hosts[1]!);
    const edit = text(
      await exec(
        c2,
        "sudo sed -i 's|192.168.101.2/24|192.168.199.2/24|' /etc/netplan/60-l20-fabric.yaml && sudo grep -c 192.168.199.2 /etc/netplan/60-l20-fabric.yaml",
      ),
    );
    expect(edit.out.trim()).toBe('1');
    await end(c2);

    const o = await ex.applyStage(only('network.apply'));
    const steps = (o.steps ?? []).filter((s) => s.id === 'network.apply');
    expect(steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    for (const s of steps) {
      expect(s.error).toMatch(/not confirmed — .*network\.reachability: 192\.168\.101\.0\/24 \(cable 1\)/);
      expect(s.error).toMatch(/rolled back at once \(the rollback service ran, Result=success\)/);
      expect(s.error).toMatch(/verify: the old addresses are back/);
    }
    // Both hosts answer and are back on the configuration before the write; no timer left armed.
    for (const h of t.lab.hosts) {
      const c = await connect(t.lab, h);
      expect(text(await exec(c, 'sudo ls /etc/netplan')).out).toBe('01-netcfg.yaml\n');
      expect(text(await exec(c, 'systemctl list-timers --all')).out).not.toContain('l20-netplan-rollback');
      await end(c);
    }
  }, 120_000);
});

describe('network.firewall lets the timer disable a firewall that locked SSH out', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    for (const h of t.lab.hosts) {
      const c = await connect(t.lab, h);
      expect(text(await exec(c, 'sudo ufw --force disable')).out).toBe(
        'Firewall stopped and disabled on system startup\n',
      );
      await end(c);
    }
  }, 60_000);
  afterAll(() => t.close());

  it('reports the lock-out and the timer that ended it', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const ex = applier(engine);
    // Fault: node 2's sshd moves to port 2222 while the tool is connected (its session stays on 22),
    // so the rule the step writes for port 22 does not admit new connections once ufw is enabled.
    const m2 = t.lab.hosts[1]!.machine;
    const un = engine.subscribe((e) => {
      if (e.type === 'cmd.start' && e.host === 'l20-n2' && e.commandLine.includes('ufw --force enable'))
        m2.mgmt.sshPort = 2222;
    });
    const o = await ex.applyStage(only('network.firewall'));
    un();
    m2.mgmt.sshPort = 22;
    const steps = (o.steps ?? []).filter((s) => s.id === 'network.firewall');
    expect(steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    expect(steps.find((s) => s.host === 'l20-n2')?.error).toMatch(
      /locked out; the rollback timer disabled the firewall and SSH works again/,
    );
    expect(steps.find((s) => s.host === 'l20-n1')?.error).toMatch(/disabled again at once/);
    for (const h of t.lab.hosts) {
      const c = await connect(t.lab, h);
      expect(text(await exec(c, 'sudo ufw status')).out).toBe('Status: inactive\n');
      await end(c);
    }
  }, 120_000);
});
