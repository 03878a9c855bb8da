/**
 * The tutorial's hosts migrated to design A by one apply of every stage, over real SSH: the 4-port
 * bond, driver 535 with its failed runfile, the recipe's nccl.conf and its hand-started Ray give way to
 * the tool's configuration; MLNX_OFED 23.10 (an LTS build that runs the CX4 Lx) stays. No step fails,
 * every check passes except the two findings about the operator's own files, which l20-setup never edits
 * and nothing on the host runs — ~/pfc.sh (qos.targets, R25) and ~/start_vllm.sh (vllm.flags, R40) —
 * each a warning whose evidence names the file as the operator's and says what is wrong with it. A
 * second apply changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { CheckResult } from '../../src/engine/types.js';
import { TUTORIAL_PFC_SH } from '../../lab/scenarios/qos.js';
import { TUTORIAL_START_VLLM } from '../../lab/scenarios/ray-vllm.js';
import { STAGES } from '../../checks/stages.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

type Outcomes = Awaited<ReturnType<StepExecutor['applyStages']>>['outcomes'];

const results = (o: Outcomes): CheckResult[] => o.flatMap((s) => s.results);
const standing = (o: Outcomes): string[] =>
  results(o)
    .filter((r) => r.status !== 'pass' && r.status !== 'skip')
    .map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status}${r.rule ? ` ${r.rule}` : ''}`)
    .sort();
const failedSteps = (o: Outcomes): string[] =>
  o.flatMap((s) =>
    (s.steps ?? []).filter((x) => x.status === 'failed').map((x) => `${x.host} ${x.id}: ${x.error ?? x.summary}`),
  );

/** What is left once the tool's own configuration replaced the recipe's: warnings about the operator's files. */
const OPERATOR_FILE_FINDINGS = [
  'l20-n1:qos.targets warn R25',
  'l20-n1:vllm.flags warn R40',
  'l20-n2:qos.targets warn R25',
  'l20-n2:vllm.flags warn R40',
];

describe('tutorial → design A: one apply of every stage', () => {
  let t: LabTarget;
  let first: Outcomes;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
    const engine = new Engine(t.hosts, { config: t.config });
    first = (await new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true }).applyStages(STAGES))
      .outcomes;
  }, 600_000);
  afterAll(async () => t.close());

  it("runs every stage with no failed step; only the warnings about the operator's files stand", () => {
    expect(first.map((o) => o.stage)).toEqual(STAGES.map((s) => s.id));
    expect(failedSteps(first)).toEqual([]);
    expect(standing(first)).toEqual(OPERATOR_FILE_FINDINGS);
    const applied = new Set(
      first.flatMap((o) => (o.steps ?? []).filter((s) => s.status === 'applied').map((s) => s.id)),
    );
    for (const id of [
      'network.write',
      'network.apply',
      'qos.persist',
      'gpu-driver.remove-conflicts',
      'gpu-driver.install',
      'nccl.conf',
      'vllm.units',
    ])
      expect(applied, id).toContain(id);
  });

  it("each standing finding says the file is the operator's, left as found, and what is wrong with it", () => {
    for (const host of ['l20-n1', 'l20-n2']) {
      const qos = results(first).find((r) => r.id === 'qos.targets' && r.host === host)!;
      expect(qos.evidence).toContain("/home/l20/pfc.sh: the operator's file, left as found (l20-setup never edits it)");
      expect(qos.evidence).toContain('/home/l20/pfc.sh (runs DCB commands; mode 644; nothing on the host runs it');
      expect(qos.evidence).toContain('/home/l20/pfc.sh:7: sudo mlnx_qos -i bond0 --trust dscp → bond0 is a bond');
      expect(qos.evidence).toContain(
        '/usr/local/sbin/l20-roce-qos (runs DCB commands; mode 755; run by /etc/systemd/system/l20-roce-qos.service)',
      );
      const flags = results(first).find((r) => r.id === 'vllm.flags' && r.host === host)!;
      expect(flags.summary).toContain(
        '/home/l20/start_vllm.sh (the operator\'s, unused: l20-vllm.service serves) would exit with "error: unrecognized arguments: --engine-use-ray --ray-address auto"',
      );
      expect(flags.evidence).toContain(
        "/home/l20/start_vllm.sh: the operator's file, left as found (l20-setup never edits it)",
      );
    }
  });

  it("leaves design A in place of the recipe: no bond, the tool's nccl.conf, the open 580 driver, no hand-started Ray; the operator's files untouched", async () => {
    for (const h of t.hosts) {
      const r = await h.run({
        script:
          'ip -br link show type bond | wc -l; ls /etc/netplan; grep -c COLLNET /etc/nccl.conf; cat /proc/driver/nvidia/version | head -n 1; pgrep -c raylet; systemctl is-active l20-roce-qos.service l20-vllm.service',
      });
      expect(r.stdout).toMatch(
        /^0\n01-netcfg\.yaml\n60-l20-fabric\.yaml\n0\nNVRM version: NVIDIA UNIX Open Kernel Module for x86_64 {2}580\.126\.09 .*\n0\nactive\nactive\n$/,
      );
      expect((await h.run({ argv: ['cat', '/home/l20/pfc.sh'] })).stdout).toBe(TUTORIAL_PFC_SH);
      expect((await h.run({ argv: ['cat', '/home/l20/start_vllm.sh'] })).stdout).toBe(TUTORIAL_START_VLLM);
    }
  });

  it('a second apply changes nothing and reads the same verdicts', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const again = (await new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true }).applyStages(STAGES))
      .outcomes;
    expect(again.reduce((n, o) => n + (o.changed ?? 0), 0)).toBe(0);
    expect(
      again.flatMap((o) =>
        (o.steps ?? []).filter((s) => s.status !== 'skipped').map((s) => `${s.host} ${s.id} ${s.status}`),
      ),
    ).toEqual([]);
    expect(standing(again)).toEqual(OPERATOR_FILE_FINDINGS);
  }, 600_000);
});
