/**
 * The qos stage against the lab over real SSH: ready passes; pfc-mismatch fails qos.pair (R26) and is
 * fixed on node 2 alone; the tutorial's runtime-only settings fail persistence (R27) and its pfc.sh
 * is a targets warning (R25: the operator's file, which nothing on the host runs); fresh converges. Every apply is followed by one that changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { qosStage } from '../../checks/qos/index.js';
import type { QosFacts } from '../../checks/qos/facts.js';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { CheckResult } from '../../src/engine/types.js';
import { reboot } from '../../lab/system/boot.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

const notPass = (rs: readonly CheckResult[]) =>
  rs
    .filter((r) => r.status !== 'pass')
    .map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status}${r.rule ? ` ${r.rule}` : ''}`)
    .sort();
const check = (t: LabTarget) => new Engine(t.hosts, { config: t.config }).runStage(qosStage);
const apply = (t: LabTarget) =>
  new StepExecutor(new Engine(t.hosts, { config: t.config }), {
    dryRun: false,
    yes: true,
    allowReboot: true,
  }).applyStage(qosStage);

describe('qos on the ready lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
  });
  afterAll(async () => t.close());

  it('passes every check; the settings survive a reboot through the unit', async () => {
    const o = await check(t);
    expect(notPass(o.results)).toEqual([]);
    expect(o.results).toHaveLength(6 * 2 + 2);
    expect((o.facts.get('l20-n1') as QosFacts).tool).toBe('dcb');
    await reboot(t.lab.hosts[1]!.machine.system);
    expect(notPass((await check(t)).results)).toEqual([]);
  });
});

describe('qos on the pfc-mismatch lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'pfc-mismatch' });
  });
  afterAll(async () => t.close());

  it('fails qos.pair (R26) with both ends side by side, and qos.pfc on node 2 only', async () => {
    const o = await check(t);
    expect(notPass(o.results)).toEqual([
      'l20-n2:qos.pfc fail R26',
      'pair:qos.pair fail R26',
      'pair:qos.tc-chain fail R08',
    ]);
    const pair = o.results.find((r) => r.id === 'qos.pair');
    expect(pair?.evidence).toContain(
      'l20-n1:ens1f0 trust dscp pfc 0,0,0,1,0,0,0,0 dscp2prio[26] 3  |  l20-n2:ens1f0 trust dscp pfc 0,0,0,0,0,0,0,0 dscp2prio[26] 3',
    );
  });

  it('qos.persist re-applies on node 2 only; everything passes; a second apply changes nothing', async () => {
    const first = await apply(t);
    expect(first.steps?.filter((s) => s.status === 'applied').map((s) => s.host)).toEqual(['l20-n2']);
    expect(notPass(first.results)).toEqual([]);
    expect((await apply(t)).changed).toBe(0);
  });
});

describe('qos on the tutorial lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
  });
  afterAll(async () => t.close());

  it('the runtime settings pass, persistence fails (R27) and pfc.sh, which nothing runs, is a targets warning (R25)', async () => {
    const o = await check(t);
    expect(notPass(o.results)).toEqual([
      'l20-n1:qos.persistence fail R27',
      'l20-n1:qos.targets warn R25',
      'l20-n2:qos.persistence fail R27',
      'l20-n2:qos.targets warn R25',
    ]);
    const f = o.facts.get('l20-n1') as QosFacts;
    expect(f.tool).toBe('mlnx_qos');
    expect(f.scripts.map((s) => [s.path, s.mode, s.runBy])).toEqual([['/home/l20/pfc.sh', '644', []]]);
    expect(o.results.find((r) => r.id === 'qos.targets')?.evidence).toContain(
      "/home/l20/pfc.sh: the operator's file, left as found",
    );
  });

  it('qos.persist installs the unit (node 2 first, mlnx_qos branch); the operator script stays a finding; nothing left to change', async () => {
    const first = await apply(t);
    expect(first.steps?.filter((s) => s.status === 'applied').map((s) => s.host)).toEqual(['l20-n2', 'l20-n1']);
    expect(notPass(first.results)).toEqual(['l20-n1:qos.targets warn R25', 'l20-n2:qos.targets warn R25']);
    expect((await apply(t)).changed).toBe(0);
    // After a reboot the unit puts trust and PFC back.
    await reboot(t.lab.hosts[0]!.machine.system);
    expect(notPass((await check(t)).results)).toEqual(['l20-n1:qos.targets warn R25', 'l20-n2:qos.targets warn R25']);
  });

  it('once cron runs pfc.sh at boot its bond lines are a blocker (R25) on that host', async () => {
    const w = await t.hosts[1]!.run(
      { script: 'echo "@reboot root /bin/bash /home/l20/pfc.sh" > /etc/cron.d/l20-pfc' },
      { sudo: true },
    );
    expect(w.exitCode).toBe(0);
    const o = await check(t);
    expect(notPass(o.results)).toEqual(['l20-n1:qos.targets warn R25', 'l20-n2:qos.targets fail R25']);
    expect(o.results.find((r) => r.id === 'qos.targets' && r.host === 'l20-n2')?.summary).toContain(
      'runs unattended (/etc/cron.d/l20-pfc)',
    );
  });
});

describe('qos on the fresh lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh' });
  });
  afterAll(async () => t.close());

  it('converges with dcb (inbox): every check passes, then nothing changes', async () => {
    const before = await check(t);
    expect(notPass(before.results)).toContain('l20-n1:qos.persistence fail R27');
    const first = await apply(t);
    expect(notPass(first.results)).toEqual([]);
    expect((await apply(t)).changed).toBe(0);
  });
});
