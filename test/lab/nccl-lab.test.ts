/**
 * The nccl stage against the lab over real SSH: `ready` passes with the modelled bandwidth, the
 * tutorial fails where docs/STAGES.md §4.4 says, `wrong-gid` fails the validation on ibv_modify_qp, and
 * applying the stage's steps turns them to pass, a second apply changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ncclStage } from '../../checks/nccl/index.js';
import { NCCL_LOG_DIR } from '../../checks/nccl/validation.js';
import { STATE_SCRIPT } from '../../src/bundle/commands.js';
import { osStage } from '../../checks/os/index.js';
import type { CheckResult } from '../../src/engine/types.js';
import { Engine } from '../../src/engine/runner.js';
import { clusterSchema } from '../../src/config/schema.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, withLabTarget } from './helpers.js';

const byId = (results: readonly CheckResult[], id: string, host: string | null = null): CheckResult => {
  const r = results.find((x) => x.id === id && x.host === host);
  if (!r) throw new Error(`no result ${id} ${host}`);
  return r;
};
const notPassing = (results: readonly CheckResult[]) =>
  results.filter((r) => r.status !== 'pass').map((r) => `${r.host}:${r.id} ${r.status} ${r.summary}\n${r.evidence}`);
const apply = (engine: Engine) => applier(engine).applyStage(ncclStage);

describe('nccl on ready', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
  });
  afterAll(() => t.close());

  it('passes every check; inter-node busbw ≈ 8.4 GB/s over four rails with GDR, intra-node ≈ 19', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const o = await engine.runStage(ncclStage);
    expect(notPassing(o.results)).toEqual([]);
    const v = byId(o.results, 'nccl.validation');
    const inter = Number(/inter-node busbw ([\d.]+) GB\/s/.exec(v.summary)?.[1]);
    expect(inter).toBeGreaterThan(8.2);
    expect(inter).toBeLessThan(8.5);
    expect(v.summary).toMatch(/intra-node l20-n1 1[89]\.\d+, l20-n2 1[89]\.\d+ GB\/s/);
    // A second apply of a converged host changes nothing.
    const again = await apply(engine);
    expect(again.changed).toBe(0);
  });

  it("keeps every run's NCCL_DEBUG=INFO log on its host (root only), where the support bundle collects it", async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    await engine.runStage(ncclStage);
    const id = engine.context.runId.replace(/[^0-9A-Za-z]/g, '');
    for (const [i, h] of t.hosts.entries()) {
      for (const kind of ['intra', 'inter']) {
        const path = `${NCCL_LOG_DIR}/${id}-${kind}.log`;
        const log = await h.readFile(path, { sudo: true });
        expect(log.split('\n')[0]).toMatch(/^# \S/); // the command line it ran
        expect((await h.run({ argv: ['stat', '-c', '%a %U', path] }, { sudo: true })).stdout.trim()).toBe('600 root');
        expect(log).toMatch(/^# exit 0, \d+ ms, NCCL_DEBUG=INFO/m);
        expect(log).toMatch(/NCCL INFO/);
        if (kind === 'inter' && i === 0) expect(log).toMatch(/NET\/IB/);
      }
      const listing = await h.run({ script: STATE_SCRIPT }, { sudo: true });
      // The bundle's state listing names it (and prints the newest logs whole).
      expect(listing.stdout).toMatch(new RegExp(`^${id}-inter\\.log$`, 'm'));
    }
  });
});

describe('nccl on the tutorial (design kept)', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
    t.config = clusterSchema.parse({ ...t.config, network: { ...t.config.network, design: 'tutorial' } });
  });
  afterAll(() => t.close());

  it('fails conf-lint on R01 and the validation on Unrecognized element token; applying nccl fixes both; a second apply changes nothing', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const before = await engine.runStage(ncclStage);
    for (const h of ['l20-n1', 'l20-n2'])
      expect(byId(before.results, 'nccl.conf-lint', h)).toMatchObject({ status: 'fail', rule: 'R01' });
    expect(byId(before.results, 'nccl.hca-resolve', 'l20-n1')).toMatchObject({ status: 'warn', rule: 'R06' });
    const v = byId(before.results, 'nccl.validation');
    expect(v).toMatchObject({ status: 'fail', rule: 'D03' });
    expect(v.evidence).toContain('Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"');
    expect(v.evidence).toContain('invalid usage');

    // The os stage comes first in the pipeline: it installs python3-venv, which the venv needs.
    await applier(engine).applyStage(osStage);
    const applied = await apply(engine);
    const failed = (applied.steps ?? []).filter((s) => s.status === 'failed');
    expect(failed.map((s) => `${s.host} ${s.id}: ${s.error}`)).toEqual([]);
    for (const h of ['l20-n1', 'l20-n2']) {
      expect(byId(applied.results, 'nccl.conf-lint', h)).toMatchObject({ status: 'pass' });
      expect(byId(applied.results, 'nccl.conf-names', h)).toMatchObject({ status: 'pass' });
      expect(byId(applied.results, 'nccl.bench-tools', h)).toMatchObject({ status: 'pass' });
    }
    expect(byId(applied.results, 'nccl.validation').status).not.toBe('fail');
    const again = await apply(engine);
    expect(again.changed).toBe(0);
  });
});

describe('nccl on wrong-gid', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'wrong-gid' });
  });
  afterAll(() => t.close());

  it('the pinned GID index fails the validation on ibv_modify_qp (D05); nccl.conf removes the pin and it passes', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const before = await engine.runStage(ncclStage);
    const v = byId(before.results, 'nccl.validation');
    expect(v).toMatchObject({ status: 'fail', rule: 'D05' });
    expect(v.summary).toContain('ibv_modify_qp failed');
    expect(v.evidence).toMatch(
      /Call to ibv_modify_qp failed with 101 Network is unreachable, on dev rocep26s0f0:1, curr state INIT, next state RTR, local GID index 3/,
    );
    expect(byId(before.results, 'nccl.conf-lint', 'l20-n2')).toMatchObject({ status: 'fail', rule: 'R05' });

    const applied = await apply(engine);
    expect(notPassing(applied.results)).toEqual([]);
    expect((await apply(engine)).changed).toBe(0);
  });
});

describe('nccl.validation on the faults of other stages (docs/STAGES.md §4.3 NCCL)', () => {
  const validation = (scenario: string): Promise<CheckResult> =>
    withLabTarget({ scenario }, async (t) => {
      const o = await new Engine(t.hosts, { config: t.config }).runStage(ncclStage);
      return byId(o.results, 'nccl.validation');
    });
  const busbw = (r: CheckResult) => Number(/inter-node busbw ([\d.]+) GB\/s/.exec(r.summary)?.[1]);

  it('mtu-mismatch: a local length completion error on the 1500-MTU side (D04)', async () => {
    const v = await validation('mtu-mismatch');
    expect(v).toMatchObject({
      status: 'fail',
      rule: 'D04',
      summary: expect.stringContaining('inter l20-n2: D04 RDMA completion error 1'),
    });
  });
  it('no-peermem: no GDR path, GPU Direct RDMA Disabled (D02 warn), busbw −10 %', async () => {
    const v = await validation('no-peermem');
    expect(v).toMatchObject({ status: 'warn', rule: 'D02' });
    expect(busbw(v)).toBeCloseTo(8.35 * 0.9, 0);
  });
  it('pfc-mismatch: the all-reduce still passes its threshold at × 0.6', async () => {
    const v = await validation('pfc-mismatch');
    expect(v.status).toBe('pass');
    expect(busbw(v)).toBeCloseTo(8.35 * 0.6, 0);
  });
});

describe('nccl applied after the earlier stages (ready without this stage)', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    for (const h of t.hosts) {
      const r = await h.run({ argv: ['rm', '-rf', '/opt/l20', '/etc/nccl.conf'] }, { sudo: true });
      expect(r.exitCode).toBe(0);
    }
  });
  afterAll(() => t.close());

  it('writes nccl.conf, builds the venv, installs the benchmark; everything passes; a second apply changes nothing', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const before = await engine.runStage(ncclStage);
    expect(byId(before.results, 'nccl.validation')).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('apply nccl.bench-tools'),
    });
    const applied = await apply(engine);
    expect(
      applied.steps
        ?.filter((s) => s.status === 'applied')
        .map((s) => `${s.host} ${s.id}`)
        .sort(),
    ).toEqual(['l20-n1 nccl.bench-tools', 'l20-n1 nccl.conf', 'l20-n2 nccl.bench-tools', 'l20-n2 nccl.conf']);
    expect(notPassing(applied.results)).toEqual([]);
    const conf = await t.hosts[1]!.run({ argv: ['stat', '-c', '%a', '/etc/nccl.conf'] });
    expect(conf.stdout.trim()).toBe('644');
    expect((await apply(engine)).changed).toBe(0);
  });
});
