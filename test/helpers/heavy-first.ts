/**
 * Test order for a clean clone, where vitest has no timings cached and would start files in glob order:
 * the files that take half a minute or more start first, longest first, so the workers finish together
 * instead of one of them starting a long file last. With a cache, vitest's own order (failed first,
 * then longest) applies to the rest. Durations: `npx vitest run --reporter=json` on this 2-core machine.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const HEAVY_FILES = [
  'test/e2e/crash-journal.test.ts',
  'test/checks/units-oracle.test.ts',
  'test/reliability/kill-armed.test.ts',
  'test/reliability/faults-apply.test.ts',
  'test/topology/through-bastions.test.ts',
  'test/e2e/acceptance.test.ts',
  'test/lab/network-stage.test.ts',
  'test/reliability/fuzz-inventory.test.ts',
  'test/doctor/cuts-3.test.ts',
  'test/integration/scenarios-1.test.ts',
  'test/doctor/cuts-2.test.ts',
  'test/troubleshoot/scenarios-2.test.ts',
  'test/integration/scenarios-2.test.ts',
  'test/realhost/conformance.test.ts',
  'test/doctor/cuts-1.test.ts',
  'test/troubleshoot/scenarios-1.test.ts',
  'test/e2e/secrets-planted.test.ts',
  'test/lab/no-peermem.test.ts',
  'test/integration/scenarios-3.test.ts',
  'test/bundle/bundle-cli.test.ts',
];

export class HeavyFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const i = HEAVY_FILES.indexOf(relative(spec.project.config.root, spec.moduleId));
      return i === -1 ? HEAVY_FILES.length : i;
    };
    return sorted
      .map((spec, order) => ({ spec, order }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.order - b.order)
      .map(({ spec }) => spec);
  }
}
