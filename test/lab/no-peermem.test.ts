/**
 * The `no-peermem` scenario end to end over real SSH: a `ready` host moved to DOCA-OFED (through
 * its repository) and the proprietary driver flavour, rebooted, without nvidia-peermem. Its state
 * must be one a real host can have — apt finds every dependency met, the RDMA devices carry DOCA's
 * `mlx5_N` names and nccl.conf follows them — so that only the GPUDirect findings show, and
 * applying every stage brings back every `ready` verdict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type StageOutcome } from '../../src/engine/runner.js';
import { parseDpkgQuery } from '../../src/parse/dpkg-query.js';
import { parseLsmod } from '../../src/parse/lsmod.js';
import { parseRdmaLink } from '../../src/parse/rdma-link.js';
import { STAGES } from '../../checks/stages.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier } from './helpers.js';

const HOSTS = ['l20-n1', 'l20-n2'];
const DOCA_RDMA = '2410mlnx54-1.2410068';

/** Every verdict that is neither pass nor skip, as `host:id status rule`. */
function findings(outcomes: readonly StageOutcome[]): string[] {
  return outcomes
    .flatMap((o) =>
      o.results
        .filter((r) => r.status !== 'pass' && r.status !== 'skip')
        .map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status} ${r.rule ?? '-'}`),
    )
    .sort();
}

async function checkAll(engine: Engine): Promise<StageOutcome[]> {
  const out: StageOutcome[] = [];
  for (const stage of STAGES) out.push(await engine.runStage(stage));
  return out;
}

describe('no-peermem: DOCA-OFED from its repository, the proprietary 580 driver, no nvidia-peermem', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'no-peermem', speed: 'max' });
  });
  afterAll(() => t.close());

  it('is what installing DOCA-OFED through apt leaves: its rdma-core family, its source list, apt consistent', async () => {
    for (const h of t.hosts) {
      const q = await h.run({
        argv: [
          'dpkg-query',
          '-W',
          '-f=${db:Status-Abbrev} ${Package} ${Version}\\n',
          'doca-host',
          'doca-ofed',
          'rdma-core',
          'libibverbs1',
          'ibverbs-providers',
          'librdmacm1',
          'nvidia-driver-580-server',
          'nvidia-driver-580-server-open',
        ],
      });
      const pkgs = new Map(parseDpkgQuery(q.stdout + q.stderr).packages.map((p) => [p.name, p]));
      expect(pkgs.get('doca-ofed')?.installed).toBe(true);
      expect(pkgs.get('doca-host')?.installed).toBe(true);
      for (const name of ['rdma-core', 'libibverbs1', 'ibverbs-providers', 'librdmacm1'])
        expect(pkgs.get(name)?.version, name).toBe(DOCA_RDMA);
      expect(pkgs.get('nvidia-driver-580-server')).toMatchObject({ installed: true, held: true });
      expect(pkgs.get('nvidia-driver-580-server-open')?.installed ?? false).toBe(false);

      expect((await h.run({ argv: ['cat', '/etc/apt/sources.list.d/doca.list'] })).stdout).toContain(
        'file:/usr/share/doca-host-2.9.1-018000-24.10-ubuntu2204/repo ./',
      );
      expect((await h.run({ argv: ['apt-cache', 'policy', 'rdma-core'] })).stdout).toMatch(
        new RegExp(`Installed: ${DOCA_RDMA}\\n\\s+Candidate: ${DOCA_RDMA}`),
      );
      // An unrelated install must not want to remove DOCA-OFED (unmet versioned dependencies would).
      const sim = await h.run({ argv: ['apt-get', 'install', '-s', 'htop'] }, { sudo: true });
      expect(sim.exitCode, sim.stdout + sim.stderr).toBe(0);
      expect(sim.stdout).toMatch(/^Inst htop /m);
      expect(sim.stdout).not.toMatch(/REMOVED|^Remv /m);
    }
  });

  it("after the reboot DOCA's driver runs with mlx5_N names; nccl.conf names them; nvidia-peermem nowhere", async () => {
    for (const h of t.hosts) {
      const names = parseRdmaLink((await h.run({ argv: ['rdma', 'link', 'show'] })).stdout).ports.map(
        (p) => `${p.device}:${p.netdev}`,
      );
      expect(names).toEqual(['mlx5_0:ens1f0', 'mlx5_1:ens1f1', 'mlx5_2:ens2f0', 'mlx5_3:ens2f1']);
      expect((await h.run({ argv: ['ofed_info', '-s'] })).stdout).toBe('OFED-internal-24.10-1.1.4:\n');
      expect((await h.run({ argv: ['grep', '^NCCL_IB_HCA', '/etc/nccl.conf'] })).stdout).toBe(
        'NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1\n',
      );
      expect(parseLsmod((await h.run({ argv: ['lsmod'] })).stdout).modules.map((m) => m.name)).not.toContain(
        'nvidia_peermem',
      );
      expect((await h.run({ script: 'grep -rls peermem /etc/modules-load.d /etc/modules; true' })).stdout).toBe('');
    }
  });

  it('shows only the GPUDirect findings; applying every stage ends with every check pass or skip; a second apply changes nothing', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    expect(findings(await checkAll(engine))).toEqual(
      [
        ...HOSTS.flatMap((h) => [
          `${h}:gpu-driver.open warn -`,
          `${h}:gpudirect.path warn R34`,
          `${h}:os.holds warn -`,
        ]),
        'pair:nccl.validation warn D02',
      ].sort(),
    );

    const exec = applier(engine);
    const first: StageOutcome[] = [];
    for (const stage of STAGES) first.push(await exec.applyStage(stage));
    const steps = first.flatMap((o) => o.steps ?? []);
    expect(steps.filter((s) => s.status === 'failed').map((s) => `${s.host}:${s.id} ${s.error ?? ''}`)).toEqual([]);
    expect(
      steps
        .filter((s) => s.changed)
        .map((s) => `${s.host}:${s.id}`)
        .sort(),
    ).toEqual(HOSTS.flatMap((h) => [`${h}:gpu-driver.install`, `${h}:os.holds`]).sort());
    expect(findings(first)).toEqual([]);
    const path = first
      .find((o) => o.stage === 'gpudirect')
      ?.results.find((r) => r.id === 'gpudirect.path' && r.host === 'l20-n1');
    expect(path?.summary).toContain('DMA-BUF');

    let changed = 0;
    for (const stage of STAGES) changed += (await exec.applyStage(stage)).changed ?? 0;
    expect(changed).toBe(0);
    expect(findings(await checkAll(engine))).toEqual([]);
  });
});
