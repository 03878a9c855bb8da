/**
 * Two projects. `parallel` runs most files four at a time: they spend much of their time waiting on
 * processes they started (sshd, tmux, the CLI, lab servers) and on SSH round trips, so four workers keep two
 * cores busy (three left a third of them idle: 1.35 of 2 cores over a whole run).
 * `serial` runs afterwards, one file at a time, for the files that hold a wall-clock bound (a hang must be
 * noticed within N seconds, a signal must land while a step is in one state): on a loaded machine those
 * measure the load, not the product. The heaviest files start first so that none is left running alone
 * at the end (test/helpers/heavy-first.ts).
 */
import { defineConfig } from 'vitest/config';
import { HeavyFirstSequencer } from './test/helpers/heavy-first.js';

/** Files that hold a wall-clock bound or race a signal against a state; run alone. */
export const SERIAL_FILES = [
  // A hang, a lost connection or a cancel must be noticed within a bound.
  'test/lab/armed-loss-bounds.test.ts',
  'test/lab/ssh.test.ts',
  'test/lab/timer-outlives-client.test.ts',
  'test/sshd/cancel.test.ts',
  'test/sshd/certificates.test.ts',
  'test/sshd/hung-and-silent.test.ts',
  'test/sshd/jump.test.ts',
  'test/sshd/openssh.test.ts',
  'test/transport/ssh.test.ts',
  'test/integration/transport-lab.test.ts',
  'test/monitor/lab-monitor.test.ts',
  'test/monitor/lab-monitor-load.test.ts',
  'test/e2e/monitor-cli.test.ts',
  // A TERM or an exit must land while a command is in one state.
  'test/checks/package-guard.test.ts',
  'test/lab/session-shells.test.ts',
  'test/lab/system-clock.test.ts',
  // Parsers must stay within a time budget on large inputs (linear, not quadratic).
  'test/doctor/gpu-variations.test.ts',
  'test/doctor/rdma-detect.test.ts',
  'test/doctor/rdma-variations.test.ts',
  'test/lint/robustness.test.ts',
  'test/reliability/special-files.test.ts',
];

const ALL_TESTS = ['test/**/*.test.ts', 'test/**/*.test.tsx'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    sequence: { sequencer: HeavyFirstSequencer },
    projects: [
      { extends: true, test: { name: 'parallel', include: ALL_TESTS, exclude: SERIAL_FILES, maxWorkers: 4 } },
      { extends: true, test: { name: 'serial', include: SERIAL_FILES, maxWorkers: 1 } },
    ],
  },
});
