/**
 * `check` against the H200 box — a real Ubuntu 24.04 host with a GPU and none of the cluster's tools (no
 * sudo, lspci, iproute2, systemd, rdma-core) — held to "verdicts rest on evidence". The box answered over
 * real SSH (bench/device/run.sh); every command and its output were kept (check-execs.jsonl), and this
 * test replays them through today's engine and stages, so a fixed check turns it green without another
 * trip to the device. check.json beside them is what the CLI printed there, for reading.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { validateCluster } from '../../src/config/store.js';
import { Engine } from '../../src/engine/runner.js';
import { jsonReport } from '../../src/engine/run-output.js';
import { STAGES } from '../../checks/stages.js';
import { readFileVia } from '../../src/transport/files.js';
import type { Command, RunOptions } from '../../src/transport/types.js';
import { FakeHost } from '../helpers/fake-host.js';
import { ungroundedVerdicts, verdictLabel, type CheckJson } from '../helpers/evidence.js';
import { deviceBox, deviceFixture, unnamedMissingTools } from './helpers.js';

interface Exec {
  line: string;
  stdin: string;
  stdout: string;
  stderr: string;
  code: number | null;
}

const NOT_RECORDED = 'l20-device-replay: this command never ran on the H200 box (re-run bench/device/run.sh there)';
const STAGE_ORDER = [
  'inventory',
  'os',
  'nic-stack',
  'network',
  'qos',
  'rdma-link',
  'gpu-driver',
  'gpudirect',
  'nccl',
  'ray',
  'vllm',
];

const execsOf = (fixture: string): Exec[] =>
  deviceFixture(fixture)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Exec);

/** Runs every stage's checks against the box's recorded answers; lists what the box was never asked. */
async function replayCheck(fixture: string) {
  const execs = execsOf(fixture);
  const config = validateCluster(JSON.parse(deviceFixture('inventory.json')), 'inventory.json');
  const unrecorded = new Set<string>();
  const host = new FakeHost('h200', (line: string, command: Command) => {
    const stdin = 'script' in command ? command.script : '';
    // A command that ended before reading its whole script (sudo: command not found) kept only the part
    // that had arrived: that answer stands for the whole script.
    const e =
      execs.find((x) => x.line === line && x.stdin === stdin) ??
      execs.find((x) => x.line === line && stdin.startsWith(x.stdin) && x.code !== 0);
    if (!e) {
      unrecorded.add(line);
      return { stderr: `${NOT_RECORDED}\n`, exitCode: 255 };
    }
    return { stdout: e.stdout, stderr: e.stderr, exitCode: e.code ?? 255 };
  });
  // The transport reads files with `cat`; the recording holds those answers too.
  Object.assign(host, { readFile: (path: string, o?: Pick<RunOptions, 'sudo'>) => readFileVia(host, path, o) });
  const outcomes = await new Engine([host], { config }).runStages(STAGES);
  const report = jsonReport([{ name: 'h200', address: host.address }], outcomes);
  const checks: CheckJson[] = report.stages.flatMap((s) => s.checks);
  return { checks, stages: report.stages.map((s) => s.id), unrecorded: [...unrecorded] };
}

// The os stage relates the host's clock to ours: ours is set to the box's at capture time.
beforeAll(() => {
  const clock = execsOf('check-execs.jsonl').find((e) => e.line === 'LC_ALL=C date +%s.%N');
  expect(clock, "the recording holds the os stage's clock read").toBeDefined();
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Number(clock!.stdout.trim()) * 1000);
});
afterAll(() => {
  vi.useRealTimers();
});

const RUNS = [
  ['check-execs.jsonl', 'as the box is'],
  ['check-sudo-shim-execs.jsonl', 'with a pass-through sudo'],
] as const;
for (const [fixture, what] of RUNS) {
  describe(`check on the H200, ${what}`, () => {
    let run: Awaited<ReturnType<typeof replayCheck>>;
    beforeAll(async () => {
      run = await replayCheck(fixture);
    });

    it('every stage ran, on commands the box answered', () => {
      expect(run.stages).toEqual(STAGE_ORDER);
      expect(run.unrecorded, NOT_RECORDED).toEqual([]);
    });

    it('no pass/warn without evidence, no placeholder, no engine guard, no empty value', () => {
      expect(ungroundedVerdicts(run.checks)).toEqual([]);
    });

    it('a verdict the box could not reach says which tool is missing', () => {
      const missing = [...deviceBox()]
        .filter(([k, v]) => k.startsWith('tool.') && v === 'missing')
        .map(([k]) => k.slice(5));
      expect(missing).toEqual(expect.arrayContaining(['lspci', 'systemctl', 'ethtool']));
      expect(unnamedMissingTools(run.checks)).toEqual([]);
    });
  });
}

describe('what check gets right on the H200', () => {
  let checks: CheckJson[];
  beforeAll(async () => {
    checks = (await replayCheck('check-execs.jsonl')).checks;
  });
  const byId = (id: string) => checks.find((c) => c.id === id);

  it('the GPU, its driver, its toolkit and its NCCL as they are', () => {
    expect(byId('gpu-driver.loaded')).toMatchObject({ status: 'pass', summary: expect.stringContaining('580.159.04') });
    expect(byId('gpu-driver.toolkit')).toMatchObject({ status: 'pass', summary: expect.stringContaining('13.0') });
    expect(byId('nccl.version')).toMatchObject({ status: 'pass', summary: expect.stringContaining('2.28.9') });
  });

  it('a missing lspci makes the inventory say "cannot tell" with the package to install', () => {
    expect(byId('inventory.gpus')).toMatchObject({
      status: 'error',
      summary: 'cannot tell: lspci is not installed on h200 (package pciutils)',
    });
  });

  it('nccl.socket-ifname agrees with NCCL, which bootstrapped on eth0 with this very conf', () => {
    // bench-ours.log: "NCCL_SOCKET_IFNAME set to =eth0", "NET/Socket : Using [0]eth0:192.0.2.2<0>". The box
    // has no `ip`, so the check cannot see the interface: it may say so, never that NCCL would fail.
    expect(deviceFixture('bench-ours.log')).toContain('NET/Socket : Using [0]eth0:');
    const c = byId('nccl.socket-ifname');
    expect(c?.status === 'pass' || /\bip is not installed\b/.test(c?.summary ?? ''), c && verdictLabel(c)).toBe(true);
  });

  it('gpu-driver.gpus agrees with nvidia-smi, and does not count GPUs with a missing lspci', () => {
    expect(deviceFixture('smi-query.txt')).toMatch(/^0, NVIDIA H200, 00000000:00:06\.0,/m);
    const c = byId('gpu-driver.gpus');
    const grounded = c?.status === 'pass' || /\blspci is not installed\b/.test(c?.summary ?? '');
    expect(grounded, c && verdictLabel(c)).toBe(true);
  });

  it('the replay reads what the box answered: OS, CPU and driver verdicts as the CLI printed them there', () => {
    // Verdicts of checks fixed since the capture differ by design; these read the box's own answers and did not.
    const report = JSON.parse(deviceFixture('check.json')) as { stages: Array<{ checks: CheckJson[] }> };
    const printed = report.stages.flatMap((s) => s.checks);
    expect(printed.length).toBeGreaterThan(80);
    for (const id of ['inventory.os', 'inventory.cpu-mem', 'gpu-driver.loaded', 'gpu-driver.branch']) {
      const then = printed.find((p) => p.id === id)!;
      expect(
        checks.find((c) => c.id === id),
        id,
      ).toMatchObject({ status: then.status, summary: then.summary });
    }
    expect(printed.find((p) => p.id === 'gpu-driver.loaded')!.summary).toContain('580.159.04');
  });
});
