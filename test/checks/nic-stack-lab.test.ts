/** The nic-stack stage against the lab over real SSH: ready passes, tutorial's OFED, fresh → install-inbox. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nicStackStage } from '../../checks/nic-stack/index.js';
import type { NicStackFacts } from '../../checks/nic-stack/facts.js';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { CheckResult } from '../../src/engine/types.js';
import { reboot } from '../../lab/system/boot.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

const notPass = (rs: readonly CheckResult[]) =>
  rs.filter((r) => r.status !== 'pass').map((r) => `${r.host}:${r.id} ${r.status} ${r.summary}`);
const apply = (t: LabTarget) =>
  new StepExecutor(new Engine(t.hosts, { config: t.config }), {
    dryRun: false,
    yes: true,
    allowReboot: true,
  }).applyStage(nicStackStage);

describe('nic-stack on the ready lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
  });
  afterAll(async () => t.close());

  it('passes every check on both hosts: inbox stack, rocep… devices', async () => {
    const o = await new Engine(t.hosts, { config: t.config }).runStage(nicStackStage);
    expect(notPass(o.results)).toEqual([]);
    expect(o.results).toHaveLength(5 * 2 + 2);
    const f = o.facts.get('l20-n2') as NicStackFacts;
    expect(f.stack.flavor).toBe('inbox');
    expect(f.ibvDevices).toEqual(['rocep26s0f0', 'rocep26s0f1', 'rocep154s0f0', 'rocep154s0f1']);
    expect(f.links.map((l) => l.driverVersion)).toEqual(Array(4).fill('5.15.0-126-generic'));
  });
});

describe('nic-stack on the tutorial lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
  });
  afterAll(async () => t.close());

  it("reads the recipe's MLNX_OFED (the real 23.10 LTS build, loaded): flavor passes and names it end-of-line; nothing to install", async () => {
    const o = await apply(t);
    expect(notPass(o.results)).toEqual([]);
    const flavor = o.results.find((r) => r.id === 'nic-stack.flavor' && r.host === 'l20-n1');
    expect(flavor).toMatchObject({ rule: 'R30', summary: expect.stringContaining('MLNX_OFED 23.10-1.1.9.0') });
    expect(flavor?.summary).toContain('successor DOCA-OFED');
    expect(o.results.find((r) => r.id === 'nic-stack.parity')?.summary).toContain('MLNX_OFED 23.10-1.1.9.0');
    expect((o.facts.get('l20-n1') as NicStackFacts).ibvDevices).toEqual(['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']);
    expect(o.changed).toBe(0);
  });
});

describe('nic-stack on the fresh lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh' });
  });
  afterAll(async () => t.close());

  it('fails userspace, cannot tell the devices without ibverbs-utils; install-inbox installs the five packages; names change only at the next reload; a second apply changes nothing', async () => {
    const before = await new Engine(t.hosts, { config: t.config }).runStage(nicStackStage);
    expect(notPass(before.results).sort()).toEqual([
      'l20-n1:nic-stack.devices error cannot tell: ibv_devices is not installed on l20-n1 (package ibverbs-utils); ibv_devinfo is not installed on l20-n1 (package ibverbs-utils)',
      'l20-n1:nic-stack.userspace fail missing: rdma-core, ibverbs-utils, rdmacm-utils, infiniband-diags, perftest',
      'l20-n2:nic-stack.devices error cannot tell: ibv_devices is not installed on l20-n2 (package ibverbs-utils); ibv_devinfo is not installed on l20-n2 (package ibverbs-utils)',
      'l20-n2:nic-stack.userspace fail missing: rdma-core, ibverbs-utils, rdmacm-utils, infiniband-diags, perftest',
      'null:nic-stack.parity skip rdma-core is installed on no host: no userspace version to compare (nic-stack.userspace)',
    ]);
    const first = await apply(t);
    expect(first.steps?.filter((s) => s.status === 'applied').map((s) => `${s.host}:${s.id}`)).toEqual([
      'l20-n1:nic-stack.install-inbox',
      'l20-n2:nic-stack.install-inbox',
    ]);
    expect(notPass(first.results)).toEqual([]);
    expect((first.facts.get('l20-n1') as NicStackFacts).ibvDevices).toEqual(['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']);
    const second = await apply(t);
    expect(second.changed).toBe(0);
    // The next driver registration applies rdma-core's naming rule.
    const r = await t.hosts[0]!.run(
      { script: 'modprobe -r mlx5_ib && modprobe mlx5_ib && ibv_devices' },
      { sudo: true },
    );
    expect(r.stdout).toContain('rocep26s0f0');
  });
});

describe('nic-stack on a host with a short-lived MLNX_OFED branch (the non-default DOCA path)', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
    // The tutorial's bundle, but from the short-lived 23.04 branch: nic-stack.flavor warns (R30).
    for (const h of t.lab.hosts) h.machine.ofed!.version = '23.04-1.1.3.0';
  });
  afterAll(async () => t.close());

  it('install-doca removes MLNX_OFED and installs DOCA-OFED 2.9.1 LTS; after the reload every check passes', async () => {
    const before = await new Engine(t.hosts, { config: t.config }).runStage(nicStackStage);
    expect(notPass(before.results)).toEqual([
      'l20-n1:nic-stack.flavor warn MLNX_OFED 23.04-1.1.3.0 is on the short-lived 23.04 branch (LTS: 4.9, 5.4, 5.8, 23.10, 24.10)',
      'l20-n2:nic-stack.flavor warn MLNX_OFED 23.04-1.1.3.0 is on the short-lived 23.04 branch (LTS: 4.9, 5.4, 5.8, 23.10, 24.10)',
    ]);
    const first = await apply(t);
    const steps = first.steps?.filter((s) => s.status === 'applied') ?? [];
    expect(steps.map((s) => `${s.host}:${s.id}`)).toEqual([
      'l20-n1:nic-stack.install-doca',
      'l20-n2:nic-stack.install-doca',
    ]);
    expect(steps[0]?.commands).toEqual([
      'sudo /usr/sbin/ofed_uninstall.sh --force',
      'sudo wget -q -O /tmp/doca-host_2.9.1-018000-24.10-ubuntu2204_amd64.deb https://www.mellanox.com/downloads/DOCA/DOCA_v2.9.1/host/doca-host_2.9.1-018000-24.10-ubuntu2204_amd64.deb',
      'sudo dpkg -i /tmp/doca-host_2.9.1-018000-24.10-ubuntu2204_amd64.deb',
      'sudo apt-get update',
      'sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y doca-ofed',
      'sudo /etc/init.d/openibd restart',
    ]);
    expect((await apply(t)).changed).toBe(0);
    for (const h of t.lab.hosts) await reboot(h.machine.system);
    const after = await new Engine(t.hosts, { config: t.config }).runStage(nicStackStage);
    expect(notPass(after.results)).toEqual([]);
    expect(after.results.find((r) => r.id === 'nic-stack.parity')?.summary).toContain('DOCA 24.10-1.1.4');
    expect((after.facts.get('l20-n1') as NicStackFacts).ibvDevices).toEqual(['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']);
  });
});
