/**
 * `npm run test:quick`: the unit tests — parsers, rules, lint, config, engine, transport units, the views —
 * which start no lab, no sshd and no terminal, and no test that reads inputs by the megabyte. A minute or so
 * while editing; `npm test` still runs everything.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/{unit,parse,doctor,lint,config,rules,engine,transport,ui,build}/**/*.test.ts',
      'test/{unit,parse,doctor,lint,config,rules,engine,transport,ui,build}/**/*.test.tsx',
    ],
    exclude: [
      // Every fixture cut at every 97th byte, random bytes, 20 MB inputs: the robustness runs.
      'test/doctor/cuts-*.test.ts',
      'test/doctor/robustness.test.ts',
      'test/doctor/gpu-variations.test.ts',
      'test/doctor/rdma-variations.test.ts',
      'test/parse/robustness.test.ts',
      'test/lint/robustness.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
  },
});
