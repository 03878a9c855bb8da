/**
 * Troubleshooting on the lab (issue 6 acceptance): each fault scenario is diagnosed to the right
 * symptom, cause and rule ids — by the quick probe of every symptom and by the symptom's own probe
 * with its benchmarks — and applying that diagnosis' fix (plan/apply/verify through the StepExecutor)
 * makes the symptom's probes pass. `ready` is clear everywhere. One lab per scenario, real SSH.
 * The cases are spread over scenarios-N.test.ts, one shard each, so that they run in parallel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { applyFix, diagnose } from '../../src/troubleshoot/engine.js';
import { SYMPTOMS, symptomById } from '../../checks/troubleshoot/symptoms.js';
import type { Diagnosis } from '../../src/troubleshoot/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { shardOf } from '../helpers/shard.js';

interface Want {
  symptom: string;
  cause: string;
  rules: string[];
  hosts: string[];
  /** A line of this comparison must differ between the hosts. */
  differs?: RegExp;
  /** The fix is a cable, not a step: done to the lab model before the apply. */
  physicalFix?: (t: LabTarget) => void;
}

const SCENARIOS: Record<string, Want> = {
  'pfc-mismatch': {
    symptom: 'pfc-one-side',
    cause: 'pfc-differs',
    rules: ['R26'],
    hosts: ['l20-n2'],
    differs: /mlnx_qos/,
  },
  'mtu-mismatch': {
    symptom: 'mtu-mismatch',
    cause: 'mtu-differs',
    rules: ['R24'],
    hosts: ['l20-n1', 'l20-n2'],
    differs: /active_mtu/,
  },
  'link-down': {
    symptom: 'link-down',
    cause: 'port-down',
    rules: ['D08', 'D09'],
    hosts: ['l20-n1', 'l20-n2'],
    physicalFix: (t) => {
      for (const c of t.lab.cluster.cables) c.plugged = true;
      for (const m of t.lab.cluster.machines) m.revision++;
    },
  },
  'no-peermem': { symptom: 'peermem-broken', cause: 'not-loaded', rules: ['R34', 'D14'], hosts: ['l20-n1', 'l20-n2'] },
  'acs-enabled': { symptom: 'acs', cause: 'acs-on', rules: ['R36'], hosts: ['l20-n1'], differs: /ACS/ },
  'wrong-gid': {
    symptom: 'wrong-gid',
    cause: 'pinned-index',
    rules: ['R05'],
    hosts: ['l20-n1', 'l20-n2'],
    differs: /GID/,
  },
  'driver-mismatch': {
    symptom: 'driver-mismatch',
    cause: 'gpu-driver-differs',
    rules: ['R47'],
    hosts: ['l20-n1', 'l20-n2'],
    differs: /nvidia\/version/,
  },
  tutorial: { symptom: 'bond-one-port', cause: 'no-roce-lag', rules: ['R16'], hosts: ['l20-n1', 'l20-n2'] },
};

function brief(d: Diagnosis): string {
  return `${d.symptom}: ${d.status} ${d.causeId ?? ''} [${d.rules.join(',')}]\n${d.evidence.slice(0, 1500)}`;
}

/** Every fault scenario, then `ready`: the cases the shards divide between them. */
const CASES = [...Object.keys(SCENARIOS), 'ready'];

export function describeTroubleshootScenarios(shard: number, shards: number): void {
  const mine = new Set(shardOf(CASES, shard, shards));
  describe(`troubleshoot on the lab (shard ${shard + 1}/${shards})`, () => {
    let t: LabTarget | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    for (const [scenario, want] of Object.entries(SCENARIOS).filter(([name]) => mine.has(name))) {
      it(`${scenario}: ${want.symptom} found (${want.cause}, ${want.rules.join(' ')}); its fix clears it`, async () => {
        t = await labTarget({ scenario });
        const engine = new Engine(t.hosts, { config: t.config });
        const symptom = symptomById(want.symptom)!;

        // Every symptom on the quick probes, as `troubleshoot --json` without a SYMPTOM.
        const quick = await diagnose(engine, SYMPTOMS, { benchmarks: false });
        const q = quick.find((d) => d.symptom === want.symptom)!;
        expect(q.status, brief(q)).toBe('found');
        expect(q.causeId).toBe(want.cause);

        // The symptom alone, with its benchmarks where it has them.
        const [d] = await diagnose(engine, [symptom]);
        expect(d!.status, brief(d!)).toBe('found');
        expect(d!.causeId).toBe(want.cause);
        expect(d!.rules).toEqual(want.rules);
        expect(d!.hosts).toEqual(want.hosts);
        expect(d!.checks.length).toBeGreaterThan(0);
        expect(d!.checks.every((c) => c.status !== 'pass' && c.status !== 'skip')).toBe(true);
        if (want.differs) {
          const c = d!.comparisons.find((x) => want.differs!.test(x.label));
          expect(c, d!.comparisons.map((x) => x.label).join(', ')).toBeDefined();
          expect(Object.keys(c!.byHost)).toEqual(['l20-n1', 'l20-n2']);
          expect(c!.differing.length).toBeGreaterThan(0);
        }

        want.physicalFix?.(t);
        const fix = await applyFix(engine, d!, { dryRun: false, yes: true, allowReboot: true });
        const failed = fix.outcomes.flatMap((o) =>
          (o.steps ?? []).filter((s) => s.status === 'failed').map((s) => `${s.host} ${s.id}: ${s.error}`),
        );
        expect(failed).toEqual([]);
        expect(fix.stoppedAfter).toBeUndefined();
        if (!want.physicalFix) expect(fix.outcomes.reduce((n, o) => n + (o.changed ?? 0), 0)).toBeGreaterThan(0);

        const [after] = await diagnose(engine, [symptom]);
        expect(after!.status, brief(after!)).toBe('clear');
      }, 300_000);
    }

    if (mine.has('ready'))
      it('ready: every symptom clear, benchmarks included', async () => {
        t = await labTarget({ scenario: 'ready' });
        const engine = new Engine(t.hosts, { config: t.config });
        const all = await diagnose(engine, SYMPTOMS, { benchmarks: true });
        expect(all.map((d) => d.symptom)).toEqual(SYMPTOMS.map((s) => s.id));
        expect(all.filter((d) => d.status !== 'clear').map(brief)).toEqual([]);
        // The side-by-side outputs are there even when nothing is wrong, equal on both hosts.
        const pfc = all.find((d) => d.symptom === 'pfc-one-side')!;
        expect(pfc.comparisons[0]!.byHost['l20-n1']!.length).toBeGreaterThan(0);
        expect(pfc.comparisons[0]!.differing).toEqual([]);
      }, 300_000);
  });
}
