/**
 * Verdicts rest on evidence, on every lab scenario: whatever state a host is in, no check passes or warns without
 * evidence, and no summary or evidence shows a value that was never read. The engine's guard (which would turn
 * such a pass into "cannot tell") never has to step in: each check grounds its own verdict. The real-host
 * conformance suite (test/realhost) holds the same line against a real machine.
 * The scenarios are spread over evidence-N.test.ts, one shard each, so that they run in parallel.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import type { CheckResult } from '../../src/engine/types.js';
import { SCENARIOS } from '../../lab/scenarios/index.js';
import { STAGES } from '../../checks/stages.js';
import { ungroundedVerdicts } from '../helpers/evidence.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { shardOf } from '../helpers/shard.js';

/** Every lab scenario, then ready+bare (no tools): the cases the shards divide between them. */
const CASES = [...SCENARIOS, 'ready+bare'];

export function describeEvidenceScenarios(shard: number, shards: number): void {
  const mine = shardOf(CASES, shard, shards);
  describe(`every lab scenario: verdicts rest on evidence (shard ${shard + 1}/${shards})`, () => {
    let t: LabTarget | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it.each(mine.filter((s) => s !== 'ready+bare').map((s) => [s]))(
      '%s',
      async (scenario) => {
        t = await labTarget({ scenario });
        const results = (await new Engine(t.hosts, { config: t.config }).runStages(STAGES)).flatMap((o) => o.results);
        expect(results.length).toBeGreaterThan(80);
        expect(ungroundedVerdicts(results)).toEqual([]);
        // A tool said to be missing really is missing on that host.
        const named = new Set(
          results.flatMap((r) =>
            [...r.summary.matchAll(/\b([\w.+-]+) is not installed on (\S+) \(/g)].map((m) => `${m[2]} ${m[1]}`),
          ),
        );
        const present: string[] = [];
        for (const pair of named) {
          const [host, tool] = pair.split(' ') as [string, string];
          const h = t.hosts.find((x) => x.name === host)!;
          const found = await h.run(
            { argv: ['bash', '-c', 'command -v "$1"', 'probe', tool] },
            { sudo: tool !== 'sudo' },
          );
          if (found.exitCode === 0) present.push(`${host}: ${tool} at ${found.stdout.trim()}`);
        }
        expect(present).toEqual([]);
      },
      120_000,
    );

    if (mine.includes('ready+bare'))
      it('ready+bare: every verdict that is not a pass says which tool is missing and its package', async () => {
        t = await labTarget({ scenario: 'ready+bare' });
        const results = (await new Engine(t.hosts, { config: t.config }).runStages(STAGES)).flatMap((o) => o.results);
        // bare removes pciutils, iproute2, ethtool, systemd and the NVIDIA utilities: any tool of theirs may be named.
        const named =
          /\b[\w.-]+ is not installed on \S+ \(package (pciutils|iproute2|ethtool|systemd|nvidia-utils[^)]*)\)/;
        const removedPackages = (r: CheckResult) =>
          r.id === 'os.packages' && r.status === 'fail' && r.summary === 'missing: pciutils, ethtool, iproute2'; // true, and what os.install-base puts back
        const wrong = results.filter(
          (r) =>
            r.status !== 'pass' &&
            r.status !== 'skip' &&
            !removedPackages(r) &&
            !(r.status === 'error' && named.test(r.summary)),
        );
        expect(wrong.map((r) => `${r.host ?? 'cluster'} ${r.id} ${r.status}: ${r.summary}`)).toEqual([]);
        expect(results.filter((r) => r.status === 'error').length).toBeGreaterThan(20);
        expect(ungroundedVerdicts(results)).toEqual([]);
      }, 120_000);
  });
}
