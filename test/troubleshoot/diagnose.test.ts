/** The troubleshooting catalog and its pure mapping: checks → cause, hosts, evidence, comparisons, stage plan. */
import { describe, expect, it } from 'vitest';
import type { CheckResult, StageId } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { STAGES, stageById } from '../../checks/stages.js';
import { FACT_PAIR_CHECKS, SYMPTOMS, allFixStages, symptomById } from '../../checks/troubleshoot/symptoms.js';
import {
  buildComparison,
  diagnoseSymptom,
  differingLines,
  hostsOf,
  linesMissingElsewhere,
  matchesCause,
  type StageRun,
} from '../../src/troubleshoot/match.js';
import { stagePlan } from '../../src/troubleshoot/engine.js';

const HOSTS = ['l20-n1', 'l20-n2'];

function check(
  id: string,
  host: string | null,
  status: CheckResult['status'],
  rule?: string,
  summary = `${id} ${status}`,
): CheckResult {
  return {
    id,
    stage: id.split('.')[0] as StageId,
    host,
    status,
    summary,
    evidence: `evidence of ${id}`,
    ...(rule ? { rule } : {}),
  };
}

function run(
  stage: StageId,
  results: CheckResult[],
  cluster = false,
  outputs?: Record<string, Record<string, string>>,
): StageRun {
  const out = outputs
    ? new Map(
        Object.entries(outputs).map(([h, probes]) => [
          h,
          Object.fromEntries(
            Object.entries(probes).map(([p, stdout]) => [p, { stdout, stderr: '', exitCode: 0 } as RunResult]),
          ),
        ]),
      )
    : undefined;
  return { stage, results, cluster, ...(out ? { outputs: out } : {}) };
}

const sym = (id: string) => {
  const s = symptomById(id);
  if (!s) throw new Error(`no symptom ${id}`);
  return s;
};

describe('the symptom catalog', () => {
  const checkIds = new Map(STAGES.flatMap((s) => s.checks.map((c) => [c.id, c.scope] as const)));

  it("has the issue's symptoms plus the lab's link-down and driver-mismatch, each id once", () => {
    const ids = SYMPTOMS.map((s) => s.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const want of [
      'nccl-sockets',
      'wrong-gid',
      'gdr-disabled',
      'acs',
      'mtu-mismatch',
      'pfc-one-side',
      'mgmt-bound',
      'bond-one-port',
      'peermem-broken',
      'link-flap-gids',
      'link-down',
      'driver-mismatch',
    ]) {
      expect(ids).toContain(want);
    }
  });

  it('names only check ids the stages define, in stages the symptom probes, and real rule ids', () => {
    for (const s of SYMPTOMS) {
      for (const c of s.causes) {
        expect(c.when.checks?.length || c.when.rules?.length, `${s.id}/${c.id} recognises nothing`).toBeTruthy();
        for (const id of c.when.checks ?? []) {
          expect(checkIds.has(id), `${s.id}/${c.id}: no check ${id}`).toBe(true);
          expect(s.stages, `${s.id}/${c.id}: ${id} is in a stage the symptom does not run`).toContain(id.split('.')[0]);
        }
        for (const r of [...c.rules, ...(c.when.rules ?? [])]) {
          expect(r, `${s.id}/${c.id}`).toMatch(/^(R(0[1-9]|[1-4]\d|5[01])|D(0[1-9]|1\d|2[0-5]))$/);
        }
        expect(c.rules.length, `${s.id}/${c.id} cites no rule`).toBeGreaterThan(0);
      }
      for (const st of allFixStages(s))
        expect(stageById(st)?.steps?.length, `${s.id}: fix stage ${st} has no steps`).toBeGreaterThan(0);
      for (const cmp of s.compare ?? []) {
        expect(
          stageById(cmp.stage)?.probes.map((p) => p.id),
          `${s.id}: ${cmp.stage} has no probe ${cmp.probe}`,
        ).toContain(cmp.probe);
        if (cmp.match) expect(() => new RegExp(cmp.match!)).not.toThrow();
      }
    }
  });

  it('lists as fact-only pair checks only pair checks', () => {
    for (const id of FACT_PAIR_CHECKS) expect(checkIds.get(id), id).toBe('pair');
  });
});

describe('diagnoseSymptom', () => {
  it('PFC on one side: qos.pair with R26 is the PFC cause, on the host whose qos.pfc fails', () => {
    const d = diagnoseSymptom(
      sym('pfc-one-side'),
      [
        run('qos', [
          check('qos.pfc', 'l20-n1', 'pass', 'R26'),
          check('qos.pfc', 'l20-n2', 'fail', 'R26'),
          check('qos.tc-chain', null, 'fail', 'R08'),
          check('qos.pair', null, 'fail', 'R26', 'PFC differs across l20-n1:ens1f0 ↔ l20-n2:ens1f0'),
        ]),
      ],
      HOSTS,
    );
    expect(d.status).toBe('found');
    expect(d.causeId).toBe('pfc-differs');
    expect(d.rules).toEqual(['R26']);
    expect(d.hosts).toEqual(['l20-n2']);
    expect(d.checks.map((c) => c.id)).toEqual(['qos.pfc', 'qos.pair']);
    expect(d.evidence).toContain('l20-n2 qos.pfc (R26) fail');
    expect(d.fixStages).toEqual(['qos']);
  });

  it('the same check with another rule is another cause (qos.pair R08: trust or DSCP map)', () => {
    const d = diagnoseSymptom(
      sym('pfc-one-side'),
      [run('qos', [check('qos.pair', null, 'fail', 'R08', 'ends differ: l20-n2:ens1f0 trust pcp')])],
      HOSTS,
    );
    expect(d.causeId).toBe('trust-differs');
    expect(d.rules).toEqual(['R08']);
    expect(d.hosts).toEqual(['l20-n2']);
  });

  it("a cause's own fix stages replace the symptom's", () => {
    const d = diagnoseSymptom(sym('mgmt-bound'), [run('ray', [check('ray.node-ips', 'l20-n1', 'fail', 'R45')])], HOSTS);
    expect(d.causeId).toBe('ray-node-ip');
    expect(d.fixStages).toEqual(['ray']);
  });

  it('first cause wins: the pinned GID index before the queue-pair errors it causes', () => {
    const d = diagnoseSymptom(
      sym('wrong-gid'),
      [
        run(
          'rdma-link',
          [check('rdma-link.gids', null, 'fail', 'R05', 'NCCL_IB_GID_INDEX pins a GID …: l20-n2 rocep26s0f0')],
          true,
        ),
        run('nccl', [check('nccl.validation', null, 'fail', 'D05')], true),
      ],
      HOSTS,
    );
    expect(d.causeId).toBe('pinned-index');
    expect(d.hosts).toEqual(['l20-n2']);
    expect(d.checks.map((c) => c.id)).toEqual(['rdma-link.gids']);
  });

  it('clear when every probe passes; a warning no cause reads (GID indexes differ, unpinned) keeps it clear', () => {
    const d = diagnoseSymptom(
      sym('wrong-gid'),
      [
        run('rdma-link', [check('rdma-link.gids', null, 'warn'), check('rdma-link.ports', 'l20-n1', 'pass')], true),
        run('nccl', [check('nccl.conf-lint', 'l20-n1', 'pass', 'R05'), check('nccl.validation', null, 'pass')], true),
      ],
      HOSTS,
    );
    expect(d.status).toBe('clear');
    expect(d.cause).toBeNull();
    expect(d.rules).toEqual([]);
    expect(d.evidence).toContain('nccl.validation');
    expect(d.evidence).not.toContain('benchmarks were not run');
  });

  it('clear without the benchmarks says which causes are not ruled out', () => {
    const d = diagnoseSymptom(
      sym('nccl-sockets'),
      [run('rdma-link', [check('rdma-link.ports', 'l20-n1', 'pass')]), run('nccl', [])],
      HOSTS,
    );
    expect(d.status).toBe('clear');
    expect(d.evidence).toMatch(/benchmarks were not run/);
  });

  it('inconclusive when a probe errored (a host was lost) and no cause shows', () => {
    const d = diagnoseSymptom(
      sym('acs'),
      [
        run('gpudirect', [
          check('gpudirect.acs', 'l20-n1', 'pass', 'R36'),
          { ...check('gpudirect.acs', 'l20-n2', 'error'), summary: 'lost l20-n2 while probing' },
        ]),
      ],
      HOSTS,
    );
    expect(d.status).toBe('inconclusive');
    expect(d.hosts).toEqual(['l20-n2']);
    expect(d.evidence).toContain('lost l20-n2 while probing');
  });

  it("checks of other stages or other symptoms' rules are not this symptom's business", () => {
    const d = diagnoseSymptom(
      sym('bond-one-port'),
      [
        run('rdma-link', [check('rdma-link.gids', null, 'fail', 'R05')]),
        run('qos', [check('qos.pfc', 'l20-n2', 'fail', 'R26')]),
      ],
      HOSTS,
    );
    expect(d.status).toBe('clear');
  });
});

describe('comparisons', () => {
  it('marks lines that differ by position, and per host by content', () => {
    const byHost = { a: ['x', 'pfc 0,0,0,1', 'z'], b: ['x', 'pfc 0,0,0,0', 'z', 'extra'] };
    expect(differingLines(byHost)).toEqual([1, 3]);
    expect(linesMissingElsewhere(byHost)).toEqual({ a: [1], b: [1, 3] });
    expect(differingLines({ a: ['x'] })).toEqual([]);
  });

  it("builds one from the probes' stdout, filtered by the match and made inert", () => {
    const d = sym('pfc-one-side');
    const runs = [
      run('qos', [], false, {
        'l20-n1': {
          qos: '### mlnx_qos ens1f0\nDCBX mode: OS controlled\nPriority trust state: dscp\n\tenabled     0   0   0   1   0   0   0   0\n### exit ens1f0 0\nReceive buffer size (bytes): 130944\n',
        },
        'l20-n2': {
          qos: '### mlnx_qos ens1f0\nDCBX mode: OS controlled\nPriority trust state: dscp\u001b[31m\n\tenabled     0   0   0   0   0   0   0   0\n',
        },
      }),
    ];
    const c = buildComparison(d.compare![0]!, runs, HOSTS)!;
    expect(c.byHost['l20-n1']).toEqual([
      '### mlnx_qos ens1f0',
      'DCBX mode: OS controlled',
      'Priority trust state: dscp',
      '\tenabled     0   0   0   1   0   0   0   0',
    ]);
    expect(c.byHost['l20-n2']![2]).toBe('Priority trust state: dscp');
    expect(c.differing).toEqual([3]);
    const full = diagnoseSymptom(d, runs, HOSTS);
    expect(full.comparisons.map((x) => x.label)).toEqual([d.compare![0]!.label]);
  });

  it('says so for a host whose probe did not run', () => {
    const runs = [run('gpu-driver', [], false, { 'l20-n1': { 'nvidia-version': 'NVRM version: 580.126.09' } })];
    const c = buildComparison(sym('driver-mismatch').compare![0]!, runs, HOSTS)!;
    expect(c.byHost['l20-n2']).toEqual(['(probe did not run on this host)']);
    expect(c.differing).toEqual([0]);
  });
});

describe('hostsOf and stagePlan', () => {
  it("reads host names in a cluster check's summary as whole words", () => {
    expect(
      hostsOf([check('gpu-driver.parity', null, 'fail', 'R47', 'l20-n2 differ from l20-n1 (580.126.09 open)')], HOSTS),
    ).toEqual(['l20-n1', 'l20-n2']);
    expect(hostsOf([check('x.y', null, 'fail', undefined, 'l20-n10 differs')], HOSTS)).toEqual([]);
  });

  it('runs each stage once, in pipeline order, with its cluster run only where a symptom wants benchmarks', () => {
    const plan = stagePlan([sym('acs'), sym('nccl-sockets'), sym('mtu-mismatch')]);
    expect(plan).toEqual([
      { stage: 'network', cluster: false },
      { stage: 'rdma-link', cluster: true },
      { stage: 'gpudirect', cluster: false },
      { stage: 'nccl', cluster: true },
    ]);
    expect(stagePlan([sym('nccl-sockets')], false).every((p) => !p.cluster)).toBe(true);
    expect(stagePlan([sym('acs')], true)).toEqual([{ stage: 'gpudirect', cluster: true }]);
  });

  it('matches statuses: a cause reading warnings only ignores failures', () => {
    const flap = sym('link-flap-gids').causes.find((c) => c.id === 'index-differs')!;
    expect(matchesCause(flap, check('rdma-link.gids', null, 'warn'))).toBe(true);
    expect(matchesCause(flap, check('rdma-link.gids', null, 'fail'))).toBe(false);
    expect(matchesCause(flap, check('rdma-link.gids', null, 'pass'))).toBe(false);
  });
});
