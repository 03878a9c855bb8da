/**
 * Every fault scenario against every stage (docs/STAGES.md §4.4): the checks it should fail fail, with the
 * rule ids the spec names, nothing else fails; applying the proposed steps restores every `ready`
 * verdict and a second apply changes nothing. Real SSH to the in-process lab, all stages in order.
 * The cases are spread over scenarios-N.test.ts, one shard each, so that they run in parallel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { CheckResult } from '../../src/engine/types.js';
import { STAGES } from '../../checks/stages.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { shardOf } from '../helpers/shard.js';

interface Expect {
  /** `id` or `id/RULE`, optionally `host:` first; each must be non-passing. */
  fails: string[];
  /** Other checks this fault may also trip (consequences downstream); anything else non-passing is a bug. */
  also?: string[];
  /** Evidence that must appear in the named check. */
  evidence?: Record<string, RegExp>;
  /** Warnings the spec keeps after the fix (wrong-gid: the ULA stays, so GID indexes still differ — harmless unpinned). */
  warnAfter?: string[];
  /** The fix is not a step (a cable): do this to the lab, then every check must pass. */
  physicalFix?: (t: LabTarget) => void;
}

const SCENARIOS: Record<string, Expect> = {
  'pfc-mismatch': {
    fails: ['cluster:qos.pair/R26', 'l20-n2:qos.pfc/R26', 'cluster:rdma-link.bw', 'cluster:rdma-link.counters/R29'],
    also: ['qos.tc-chain', 'rdma-link.bw-aggregate'],
  },
  'mtu-mismatch': {
    fails: ['cluster:network.mtu/R24', 'cluster:rdma-link.active-mtu/R24', 'cluster:nccl.validation/D04'],
    also: ['network.reachability'],
  },
  'link-down': {
    fails: ['l20-n1:rdma-link.ports', 'l20-n2:rdma-link.ports', 'cluster:network.reachability', 'cluster:rdma-link.bw'],
    also: ['inventory.links', 'inventory.cabling', 'network.cabling', 'rdma-link.bw-aggregate'],
    physicalFix: (t) => {
      for (const c of t.lab.cluster.cables) c.plugged = true;
      for (const m of t.lab.cluster.machines) m.revision++;
    },
  },
  'no-peermem': {
    fails: ['l20-n1:gpudirect.path/R34', 'l20-n2:gpudirect.path/R34', 'cluster:nccl.validation/D02'],
    also: ['gpu-driver.open', 'os.holds'],
  },
  'acs-enabled': { fails: ['l20-n1:gpudirect.acs/R36'] },
  'wrong-gid': {
    fails: ['cluster:rdma-link.gids/R05', 'cluster:nccl.validation/D05'],
    also: ['nccl.conf-lint', 'nccl.conf-names'],
    evidence: { 'nccl.validation': /ibv_modify_qp failed/ },
    warnAfter: ['rdma-link.gids'],
  },
  'driver-mismatch': { fails: ['cluster:gpu-driver.parity/R47'] },
};

function label(r: CheckResult): string {
  return `${r.host ?? 'cluster'}:${r.id}${r.rule ? `/${r.rule}` : ''} ${r.status}: ${r.summary}`;
}

function notPassing(results: readonly CheckResult[]): CheckResult[] {
  return results.filter((r) => r.status !== 'pass' && r.status !== 'skip');
}

async function checkAll(t: LabTarget): Promise<CheckResult[]> {
  const engine = new Engine(t.hosts, { config: t.config });
  return (await engine.runStages(STAGES)).flatMap((o) => o.results);
}

/** Every fault scenario, then the tutorial's recipe: the cases the shards divide between them. */
const CASES = [...Object.keys(SCENARIOS), 'tutorial'];

export function describeFaultScenarios(shard: number, shards: number): void {
  const mine = new Set(shardOf(CASES, shard, shards));
  describe(`fault scenarios across every stage (shard ${shard + 1}/${shards})`, () => {
    let t: LabTarget | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    for (const [scenario, want] of Object.entries(SCENARIOS).filter(([name]) => mine.has(name))) {
      it(`${scenario}: fails what it should, and the fix restores every ready verdict`, async () => {
        t = await labTarget({ scenario });
        const bad = notPassing(await checkAll(t));
        for (const f of want.fails) {
          const [where, idRule] = f.split(':') as [string, string];
          const [id, rule] = idRule.split('/');
          const hit = bad.find(
            (r) => r.id === id && (r.host ?? 'cluster') === where && (rule === undefined || r.rule === rule),
          );
          expect(hit, `${scenario}: expected ${f} among\n${bad.map(label).join('\n')}`).toBeDefined();
          const ev = want.evidence?.[id!];
          if (ev) expect(hit!.evidence).toMatch(ev);
        }
        const allowed = new Set([...want.fails.map((f) => f.split(':')[1]!.split('/')[0]!), ...(want.also ?? [])]);
        expect(bad.filter((r) => !allowed.has(r.id)).map(label), `${scenario}: unexpected findings`).toEqual([]);

        if (want.physicalFix) {
          want.physicalFix(t);
          expect(notPassing(await checkAll(t)).map(label)).toEqual([]);
          return;
        }
        const engine = new Engine(t.hosts, { config: t.config });
        const first = await new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true }).applyStages(
          STAGES,
        );
        const failedSteps = first.outcomes.flatMap((o) =>
          (o.steps ?? []).filter((s) => s.status === 'failed').map((s) => `${s.host} ${s.id}: ${s.error}`),
        );
        expect(failedSteps).toEqual([]);
        expect(first.stoppedAfter).toBeUndefined();
        const left = notPassing(first.outcomes.flatMap((o) => o.results)).filter(
          (r) => !(r.status === 'warn' && want.warnAfter?.includes(r.id)),
        );
        expect(left.map(label)).toEqual([]);
        expect(first.outcomes.reduce((n, o) => n + (o.changed ?? 0), 0)).toBeGreaterThan(0);
        const second = await new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true }).applyStages(
          STAGES,
        );
        expect(second.outcomes.reduce((n, o) => n + (o.changed ?? 0), 0)).toBe(0);
      }, 300_000);
    }

    if (mine.has('tutorial'))
      it("tutorial: the recipe's mistakes show on the live hosts with their rule ids", async () => {
        t = await labTarget({ scenario: 'tutorial' });
        const bad = notPassing(await checkAll(t));
        const has = (id: string, rule: string) => bad.some((r) => r.id === id && r.rule === rule);
        expect(has('network.bond-lag', 'R16')).toBe(true);
        expect(has('network.netplan-lint', 'R22')).toBe(true);
        expect(has('qos.persistence', 'R27')).toBe(true);
        expect(has('gpu-driver.method', 'R32')).toBe(true);
        expect(has('nccl.conf-lint', 'R01')).toBe(true);
        expect(bad.find((r) => r.id === 'nccl.validation')?.evidence).toMatch(
          /Unrecognized element token "COLLNET_CHAIN"/,
        );
        expect(has('ray.node-ips', 'R45')).toBe(true);
        expect(has('vllm.flags', 'R40')).toBe(true);
      }, 300_000);
  });
}
