/**
 * The crash journal file: what each step event writes, atomically (a new inode per write, no
 * temporary file left, mode 0600 in a 0700 directory); removed at a normal end, kept while a step is
 * in flight; a live pid is "running", a dead one "interrupted"; a corrupt file is moved aside to
 * .corrupt and named; resume starts at the earliest interrupted stage; the CLI's wording.
 */
import { spawn } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ApplyJournal,
  findInterruptedApply,
  journalKey,
  journalPath,
  journalTarget,
  processAlive,
  processIdentity,
  resumeStages,
  writerRunning,
  type JournalFile,
  type JournalStep,
} from '../../src/engine/journal.js';
import { describeFound, journalUi } from '../../src/engine/journal-text.js';
import { globLiteral, interruptedPackageCommand } from '../../src/engine/journal-rollback.js';
import { buildCommand } from '../../src/transport/quote.js';
import type { StepUndo } from '../../src/engine/events.js';
import { checkJournalFlags, journalGate } from '../../src/commands/apply-journal.js';
import { UsageError } from '../../src/commands/common.js';
import type { Target } from '../../src/target.js';
import type { StepResult } from '../../src/engine/types.js';
import { labInventory, openTarget } from '../../src/target.js';
import { writeInventoryFile } from '../../src/config/store.js';
import { SavedConfig } from '../../src/config/store.js';
import { generateEd25519 } from '../../src/util/ssh-keys.js';
import { parsePublicKey } from '../../lab/server.js';
import { fingerprintSha256 } from '../../src/transport/known-hosts.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import { Prompts } from '../../src/engine/prompts.js';
import { TuiJournal } from '../../src/session-journal.js';

const undo: StepUndo = {
  backupDir: '/var/lib/l20-setup/backup/20261130T010000Z',
  files: [
    { path: '/etc/nccl.conf', existed: true },
    { path: '/usr/local/bin/l20-allreduce-bench.py', existed: false },
  ],
  removeFiles: [],
  rollback: [{ command: { argv: ['systemctl', 'daemon-reload'] } }],
};

function result(
  id: string,
  host: string,
  status: StepResult['status'],
  stage: StepResult['stage'] = 'nccl',
): StepResult {
  return {
    id,
    stage,
    host,
    status,
    danger: 'safe',
    summary: '',
    commands: [],
    diff: '',
    changed: status === 'applied',
  };
}

/** A pid that certainly belongs to no process: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

let dir: string;
const now = () => new Date(Date.UTC(2026, 10, 30, 1, 33, 16));
const open = (extra: Partial<ConstructorParameters<typeof ApplyJournal>[0]> = {}) =>
  new ApplyJournal({
    key: 'k1',
    runId: '20261130T013300Z',
    source: '/tmp/inv.json',
    hosts: [
      { name: 'l20-n1', address: '127.0.0.1:2201' },
      { name: 'l20-n2', address: '127.0.0.1:2202' },
    ],
    stages: ['nccl', 'ray', 'vllm'],
    dir,
    now,
    ...extra,
  });
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as JournalFile;
const start = (step: string, host: string) => ({
  type: 'step.start' as const,
  stage: 'network' as const,
  step,
  host,
  danger: 'network' as const,
  undo,
});

beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'l20-journal-')), 'journal');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

describe('ApplyJournal', () => {
  it('records step.start with its undo, the running command, the result; every write atomic, 0600 in a 0700 directory', () => {
    const j = open();
    const path = journalPath('k1', dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(read(path)).toMatchObject({
      version: 1,
      pid: process.pid,
      runId: '20261130T013300Z',
      stages: ['nccl', 'ray', 'vllm'],
      stage: null,
      inFlight: [],
      done: [],
    });

    // A reader holding the old file keeps reading it whole: a write replaces the file (rename), never rewrites it in place.
    const before = readFileSync(path, 'utf8');
    const held = openSync(path, 'r');
    j.handle({ type: 'stage.state', stage: 'nccl', state: 'running' });
    j.handle({ type: 'step.start', stage: 'nccl', step: 'nccl.bench-tools', host: 'l20-n1', danger: 'safe', undo });
    expect(readFileSync(held, 'utf8')).toBe(before);
    closeSync(held);
    j.handle({
      type: 'cmd.start',
      host: 'l20-n1',
      runId: 'r1',
      stage: 'nccl',
      probe: 'nccl.bench-tools',
      commandLine: 'sudo -n -- /opt/l20/venv/bin/pip install vllm==0.11.0',
      sudo: true,
    });
    // A probe of another stage or host is not the step's command.
    j.handle({
      type: 'cmd.start',
      host: 'l20-n2',
      runId: 'r2',
      stage: 'nccl',
      probe: 'nccl-conf',
      commandLine: 'cat /etc/nccl.conf',
      sudo: false,
    });
    const mid = read(path);
    expect(mid.stage).toBe('nccl');
    expect(mid.inFlight).toEqual([
      {
        runId: '20261130T013300Z',
        host: 'l20-n1',
        stage: 'nccl',
        step: 'nccl.bench-tools',
        danger: 'safe',
        startedAt: '2026-11-30T01:33:16.000Z',
        undo,
        command: 'sudo -n -- /opt/l20/venv/bin/pip install vllm==0.11.0',
      },
    ]);
    // No temporary file is left next to it.
    expect(readdirSync(dir)).toEqual(['k1.json']);

    j.handle({ type: 'step.result', result: result('nccl.bench-tools', 'l20-n1', 'applied') });
    j.handle({ type: 'step.result', result: result('nccl.bench-tools', 'l20-n2', 'skipped') });
    const after = read(path);
    expect(after.inFlight).toEqual([]);
    // A skip that ends nothing in flight changes no host: it reaches the disk with the next write, not one of its own.
    expect(after.done).toEqual([{ host: 'l20-n1', stage: 'nccl', step: 'nccl.bench-tools', status: 'applied' }]);
    expect(j.snapshot.done).toEqual([
      { host: 'l20-n1', stage: 'nccl', step: 'nccl.bench-tools', status: 'applied' },
      { host: 'l20-n2', stage: 'nccl', step: 'nccl.bench-tools', status: 'skipped' },
    ]);
    j.finish();
    expect(existsSync(path)).toBe(false);
  });

  it('a failed step (rolled back by the executor) is no longer in flight: a run ending with failures removes the journal', () => {
    const j = open();
    j.handle({ type: 'step.start', stage: 'nccl', step: 'nccl.conf', host: 'l20-n2', danger: 'safe', undo });
    j.handle({ type: 'step.result', result: result('nccl.conf', 'l20-n2', 'failed') });
    j.finish();
    expect(existsSync(journalPath('k1', dir))).toBe(false);
  });

  it('a step that ended unsettled (its connection lost for good, nothing rolled back) stays in flight: the journal is kept', () => {
    const j = open();
    j.handle({ type: 'step.start', stage: 'nccl', step: 'nccl.conf', host: 'l20-n2', danger: 'safe', undo });
    j.handle({ type: 'step.result', result: { ...result('nccl.conf', 'l20-n2', 'failed'), unsettled: true } });
    j.finish();
    const kept = read(journalPath('k1', dir));
    expect(kept.inFlight.map((x) => `${x.host} ${x.step}`)).toEqual(['l20-n2 nccl.conf']);
    expect(kept.inFlight[0]?.undo).toEqual(undo);
  });

  it('keeps the file while a step is in flight at finish; the furthest stage reached stays (re-checks of earlier stages do not move it back)', () => {
    const j = open();
    j.handle({ type: 'stage.state', stage: 'ray', state: 'running' });
    j.handle({ type: 'stage.state', stage: 'nccl', state: 'running' });
    j.handle({ type: 'step.start', stage: 'ray', step: 'ray.units', host: 'l20-n1', danger: 'disruptive', undo });
    j.finish();
    const kept = read(journalPath('k1', dir));
    expect(kept.stage).toBe('ray');
    expect(kept.inFlight.map((x) => x.step)).toEqual(['ray.units']);
  });

  it("carries an interrupted run's steps until this run finishes the same step on the same host", () => {
    const carried: JournalStep = {
      runId: '20261130T010000Z',
      host: 'l20-n2',
      stage: 'nccl',
      step: 'nccl.bench-tools',
      danger: 'safe',
      startedAt: '2026-11-30T01:00:00.000Z',
      undo,
    };
    const j = open({ carry: [carried] });
    const path = journalPath('k1', dir);
    expect(read(path).inFlight).toEqual([carried]);
    j.handle({ type: 'step.result', result: result('nccl.bench-tools', 'l20-n1', 'skipped') });
    expect(read(path).inFlight).toEqual([carried]);
    j.handle({ type: 'step.result', result: result('nccl.bench-tools', 'l20-n2', 'skipped') });
    expect(read(path).inFlight).toEqual([]);
    j.finish();
    expect(existsSync(path)).toBe(false);
  });
});

describe('carried steps survive what does not settle them', () => {
  it('a new attempt of the carried step that fails (or is not run) keeps the carried undo beside it; the rollback order is newest first', () => {
    const carried: JournalStep = {
      runId: '20261130T010000Z',
      host: 'l20-n1',
      stage: 'nccl',
      step: 'nccl.bench-tools',
      danger: 'safe',
      startedAt: '2026-11-30T01:00:00.000Z',
      undo,
    };
    const j = open({ carry: [carried, { ...carried, host: 'l20-n2' }] });
    j.handle({
      type: 'step.start',
      stage: 'nccl',
      step: 'nccl.bench-tools',
      host: 'l20-n1',
      danger: 'safe',
      undo: { ...undo, backupDir: '/var/lib/l20-setup/backup/20261130T013300Z' },
    });
    expect(j.snapshot.inFlight.map((x) => `${x.host} ${x.runId}`)).toEqual([
      'l20-n1 20261130T010000Z',
      'l20-n2 20261130T010000Z',
      'l20-n1 20261130T013300Z',
    ]);
    j.handle({ type: 'step.result', result: result('nccl.bench-tools', 'l20-n1', 'failed') });
    j.handle({
      type: 'step.result',
      result: { ...result('nccl.bench-tools', 'l20-n2', 'skipped'), summary: 'not run: l20-n2 could not be probed' },
    });
    expect(j.snapshot.inFlight.map((x) => `${x.host} ${x.runId}`)).toEqual([
      'l20-n1 20261130T010000Z',
      'l20-n2 20261130T010000Z',
    ]);
    j.finish();
    expect(read(journalPath('k1', dir)).inFlight).toHaveLength(2);
  });
});

describe('findInterruptedApply', () => {
  it('none without a file; running while the writer lives; interrupted once its pid is gone', async () => {
    expect(findInterruptedApply('k1', dir)).toBeUndefined();
    const j = open();
    j.handle({ type: 'step.start', stage: 'nccl', step: 'nccl.bench-tools', host: 'l20-n1', danger: 'safe', undo });
    expect(processAlive(process.pid)).toBe(true);
    const live = findInterruptedApply('k1', dir);
    expect(live?.state).toBe('running');

    const path = journalPath('k1', dir);
    const pid = await deadPid();
    expect(processAlive(pid)).toBe(false);
    writeFileSync(path, JSON.stringify({ ...read(path), pid }));
    const found = findInterruptedApply('k1', dir);
    expect(found?.state).toBe('interrupted');
    if (found?.state !== 'interrupted') throw new Error('unreachable');
    expect(found.journal.inFlight[0]?.undo).toEqual(undo);
  });

  it('a corrupt file is named, moved aside to .corrupt (kept), never deleted; a second one gets its own name', () => {
    const path = journalPath('k1', dir);
    open();
    writeFileSync(path, '{"version": 1, "runId": "x", "pid": 12');
    const a = findInterruptedApply('k1', dir);
    expect(a).toMatchObject({ state: 'corrupt', path, movedTo: `${path}.corrupt` });
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(`${path}.corrupt`, 'utf8')).toBe('{"version": 1, "runId": "x", "pid": 12');
    expect(describeFound(a!, '--inventory inv.json').join('\n')).toContain(`the crash journal ${path} is unreadable`);

    writeFileSync(path, JSON.stringify({ version: 2, runId: 'x' }));
    const b = findInterruptedApply('k1', dir);
    if (b?.state !== 'corrupt') throw new Error(`expected corrupt, got ${b?.state}`);
    expect(b.problem).toMatch(/version/);
    expect(b.movedTo).toMatch(/k1\.json\.\d{8}T\d+Z\.corrupt$/);
    expect(readdirSync(dir).sort()).toEqual(['k1.json.corrupt', b.movedTo.split('/').pop()].sort());
  });
});

describe('journal keys, resume stages and wording', () => {
  it('one key per set of hosts, by their key fingerprints (any order), else addresses; never by the inventory', () => {
    const n1 = { name: 'l20-n1', address: '10.0.0.1:22', keys: ['SHA256:aaa'] };
    const n2 = { name: 'l20-n2', address: '10.0.0.2:22', keys: ['SHA256:bbb', 'SHA256:ccc'] };
    // Other names, other addresses (an alias, a tunnel), the same keys: the same hosts, the same journal.
    const same = [
      { ...n2, name: 'b', address: 'gpu2:22', keys: ['SHA256:ccc', 'SHA256:bbb'] },
      { ...n1, name: 'a' },
    ];
    expect(journalKey([n1, n2])).toBe(journalKey(same));
    expect(journalKey([n1, n2])).not.toBe(journalKey([n1, { ...n2, keys: ['SHA256:ddd'] }]));
    expect(journalKey([n1])).not.toBe(journalKey([n1, n2]));
    // No key known yet: the address stands in.
    expect(journalKey([{ name: 'x', address: 'a:22' }])).toBe(journalKey([{ name: 'y', address: 'a:22' }]));
    expect(journalKey([{ name: 'x', address: 'a:22' }])).not.toBe(journalKey([{ name: 'x', address: 'a:2222' }]));
    expect(journalKey([n1])).toMatch(/^[0-9a-f]{20}$/);
  });

  it('resume starts at the earliest stage with a step in flight, else where it stopped, else the first asked for', () => {
    const step = (stage: JournalStep['stage']): JournalStep => ({
      runId: 'R',
      host: 'h',
      stage,
      step: `${stage}.x`,
      danger: 'safe',
      startedAt: '',
      undo: null,
    });
    const all = ['inventory', 'os', 'nic-stack', 'network', 'qos'] as const;
    expect(resumeStages({ stages: [...all], stage: 'qos', inFlight: [step('qos'), step('network')] })).toEqual([
      'network',
      'qos',
    ]);
    expect(resumeStages({ stages: [...all], stage: 'nic-stack', inFlight: [] })).toEqual([
      'nic-stack',
      'network',
      'qos',
    ]);
    expect(resumeStages({ stages: ['os', 'qos'], stage: null, inFlight: [] })).toEqual(['os', 'qos']);
  });

  it('the CLI message names each host, step, stage and time, what undoing takes, and both ways on', () => {
    const journal: JournalFile = {
      version: 1,
      runId: '20261130T013300Z',
      pid: 4242,
      startedAt: '2026-11-30T01:33:00.000Z',
      updatedAt: '2026-11-30T01:33:20.000Z',
      source: '/tmp/inv.json',
      hosts: [],
      stages: ['nccl', 'ray', 'vllm'],
      stage: 'nccl',
      done: [],
      armed: [],
      inFlight: [
        {
          runId: '20261130T013300Z',
          host: 'l20-n1',
          stage: 'nccl',
          step: 'nccl.bench-tools',
          danger: 'safe',
          startedAt: '2026-11-30T01:33:16.000Z',
          undo,
          command: 'sudo -n -- pip install x',
        },
      ],
    };
    const text = describeFound(
      { state: 'interrupted', path: '/s/journal/k.json', journal },
      '--inventory inv.json',
    ).join('\n');
    expect(text).toContain(
      'l20-n1  nccl.bench-tools (stage nccl, safe) in flight since 2026-11-30 01:33:16 UTC — running: sudo -n -- pip install x',
    );
    expect(text).toContain('writes /etc/nccl.conf, /usr/local/bin/l20-allreduce-bench.py (new); 1 rollback command(s)');
    expect(text).toContain(
      'l20-setup apply --resume --inventory inv.json --yes [--allow-reboot]   re-runs nccl and the stages after it (ray, vllm)',
    );
    expect(text).toContain('l20-setup apply --rollback --inventory inv.json');
    const running = describeFound({ state: 'running', path: '/s/journal/k.json', journal }, '').join('\n');
    expect(running).toContain('an apply is running on these hosts (run 20261130T013300Z, pid 4242');
    expect(running).not.toContain('--rollback');
    expect(journalUi(journal)).toMatchObject({
      phase: 'ask',
      resumeStages: ['nccl', 'ray', 'vllm'],
      inFlight: [{ host: 'l20-n1', step: 'nccl.bench-tools', since: '2026-11-30 01:33:16 UTC' }],
    });
  });

  it('glob-escapes names for find -name; tells package commands from others', () => {
    expect(globLiteral('we[ir]d*.conf?')).toBe('we[[]ir]d[*].conf[?]');
    expect(globLiteral('plain.conf')).toBe('plain.conf');
    expect(
      interruptedPackageCommand({
        command: 'sudo -n -- env LC_ALL=C env DEBIAN_FRONTEND=noninteractive apt-get install -y chrony',
      }),
    ).toBe(true);
    // The line as the transport sends it now: the sudo wrapper (src/transport/quote.ts) before the command.
    const sudoLine = (argv: string[]) => buildCommand({ argv }, { sudo: true }).line;
    expect(
      interruptedPackageCommand({
        command: sudoLine(['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', 'chrony']),
      }),
    ).toBe(true);
    expect(interruptedPackageCommand({ command: sudoLine(['/opt/l20/venv/bin/pip', 'install', 'vllm']) })).toBe(false);
    expect(interruptedPackageCommand({ command: 'sudo -n -- /usr/bin/dpkg -i x.deb' })).toBe(true);
    expect(interruptedPackageCommand({ command: 'sudo -n -- /opt/l20/venv/bin/pip install vllm' })).toBe(false);
    expect(interruptedPackageCommand({})).toBe(false);
  });
});

describe('the CLI gate (journalGate)', () => {
  // The gate reads only the hosts' names and addresses.
  const target = {
    source: '/tmp/l20-gate-inv.json',
    hosts: [{ name: 'l20-n1', address: '127.0.0.1:2201' }] as unknown as Target['hosts'],
  };
  const gate = async (values: Parameters<typeof journalGate>[0], mode: Parameters<typeof journalGate>[1]) => {
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = join(dir, '..', 'state');
    let err = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
    try {
      return { gate: journalGate(values, mode, target), err };
    } finally {
      spy.mockRestore();
      if (saved === undefined) delete process.env.XDG_STATE_HOME;
      else process.env.XDG_STATE_HOME = saved;
    }
  };
  const leave = async (pid: number) => {
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = join(dir, '..', 'state');
    try {
      const j = new ApplyJournal({
        key: journalTarget(target).key,
        runId: 'R1',
        source: target.source,
        hosts: [{ name: 'l20-n1', address: '127.0.0.1:2201' }],
        stages: ['os', 'qos'],
        now,
      });
      j.handle({ type: 'step.start', stage: 'os', step: 'os.memlock', host: 'l20-n1', danger: 'safe', undo });
      writeFileSync(j.path, JSON.stringify({ ...j.snapshot, pid }));
    } finally {
      if (saved === undefined) delete process.env.XDG_STATE_HOME;
      else process.env.XDG_STATE_HOME = saved;
    }
  };

  it('no journal: everything runs; --resume and --rollback have nothing to do (exit 0)', async () => {
    expect((await gate({}, 'apply')).gate).toEqual({ kind: 'run' });
    expect(await gate({ resume: true }, 'apply')).toMatchObject({
      gate: { kind: 'exit', code: 0 },
      err: expect.stringContaining('nothing to resume'),
    });
    expect(await gate({ rollback: true }, 'apply')).toMatchObject({
      gate: { kind: 'exit', code: 0 },
      err: expect.stringContaining('nothing to roll back'),
    });
  });

  it('an apply running in another process: apply refuses (exit 2), plan warns and runs; never a rollback', async () => {
    await leave(process.pid);
    const apply = await gate({ inventory: 'inv.json' }, 'apply');
    expect(apply.gate).toEqual({ kind: 'exit', code: 2 });
    expect(apply.err).toContain(`an apply is running on these hosts (run R1, pid ${process.pid}`);
    expect(apply.err).toContain(`wait for pid ${process.pid} to finish`);
    expect((await gate({ rollback: true }, 'apply')).gate).toEqual({ kind: 'exit', code: 2 });
    const plan = await gate({}, 'plan');
    expect(plan.gate).toEqual({ kind: 'run' });
    expect(plan.err).toContain('an apply is running');
  });

  it("interrupted: apply refuses (exit 2); --resume runs from the step's stage carrying it; --rollback rolls it back; check warns", async () => {
    await leave(await deadPid());
    const refused = await gate({ inventory: 'inv.json', yes: true }, 'apply');
    expect(refused.gate).toEqual({ kind: 'exit', code: 2 });
    expect(refused.err).toContain('l20-n1  os.memlock (stage os, safe) in flight since 2026-11-30 01:33:16 UTC');
    expect(refused.err).toContain(
      'l20-setup apply --resume --inventory inv.json --yes [--allow-reboot]   re-runs os and the stages after it (qos)',
    );
    const resume = await gate({ resume: true }, 'apply');
    if (resume.gate.kind !== 'run') throw new Error(`expected run, got ${resume.gate.kind}`);
    expect(resume.gate.stages?.map((s) => s.id)).toEqual(['os', 'qos']);
    expect(resume.gate.carry?.map((x) => `${x.host} ${x.step}`)).toEqual(['l20-n1 os.memlock']);
    expect((await gate({ rollback: true }, 'apply')).gate.kind).toBe('rollback');
    const check = await gate({}, 'check');
    expect(check.gate).toEqual({ kind: 'run' });
    expect(check.err).toContain('was interrupted');
  });

  it('flags: only apply takes them, one at a time, without --stage', () => {
    expect(() => checkJournalFlags({ resume: true }, 'check')).toThrow(UsageError);
    expect(() => checkJournalFlags({ resume: true, rollback: true }, 'apply')).toThrow('pick one');
    expect(() => checkJournalFlags({ rollback: true, stage: ['os'] }, 'apply')).toThrow('leave out --stage');
    expect(() => checkJournalFlags({ resume: true }, 'apply')).not.toThrow();
  });
});

describe('"still running" is the same process, not the same pid', () => {
  const leave = (pid: number, identity?: JournalFile['process']) => {
    const j = open({ process: { pid, ...(identity ? { identity } : {}) } });
    j.handle({ type: 'step.start', stage: 'nccl', step: 'nccl.conf', host: 'l20-n1', danger: 'safe', undo });
  };
  const ours = processIdentity()!;

  it("records the writer's boot id, start time and command line (Linux /proc)", () => {
    open();
    const j = read(journalPath('k1', dir));
    expect(j.pid).toBe(process.pid);
    expect(j.process?.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(j.process?.startTime).toMatch(/^\d+$/);
    expect(j.process?.cmdline?.[0]).toBe(process.execPath);
    expect(findInterruptedApply('k1', dir)?.state).toBe('running');
  });

  it('pid 1 (a reboot reused it), or our own pid with another start time, boot or command line: interrupted', () => {
    leave(1, { ...ours, startTime: '1' });
    expect(findInterruptedApply('k1', dir)?.state).toBe('interrupted');
    leave(process.pid, { ...ours, startTime: String(Number(ours.startTime) + 1) });
    expect(findInterruptedApply('k1', dir)?.state).toBe('interrupted');
    leave(process.pid, { ...ours, bootId: '00000000-0000-4000-8000-000000000000' });
    expect(findInterruptedApply('k1', dir)?.state).toBe('interrupted');
    leave(process.pid, { ...ours, cmdline: ['/usr/bin/other', 'program'] });
    expect(findInterruptedApply('k1', dir)?.state).toBe('interrupted');
    expect(writerRunning({ pid: process.pid, process: ours })).toBe(true);
  });

  it('a journal of an earlier release (pid only) falls back to the pid', async () => {
    leave(process.pid);
    const path = journalPath('k1', dir);
    const { process: _identity, ...old } = read(path);
    writeFileSync(path, JSON.stringify({ ...old, pid: process.pid }));
    expect(findInterruptedApply('k1', dir)?.state).toBe('running');
    writeFileSync(path, JSON.stringify({ ...old, pid: await deadPid() }));
    expect(findInterruptedApply('k1', dir)?.state).toBe('interrupted');
  });
});

describe('the journal is found by the hosts, from any inventory naming them', () => {
  const lab = (ports: number[]) => {
    const hosts = ports.map((port, i) => {
      const blob = parsePublicKey(generateEd25519(`n${i}`).public).getPublicSSH();
      return {
        name: `l20-n${i + 1}`,
        address: '127.0.0.1',
        port,
        user: 'l20',
        hostKeyType: 'ssh-ed25519',
        hostKeyBlob: blob,
        hostKeyFingerprint: fingerprintSha256(blob),
      };
    });
    return { hosts, clientPrivateKey: generateEd25519('client').private };
  };

  it('a copy of the inventory, the saved one, the TUI, other addresses of the keys find it; others not', async () => {
    const base = join(dir, '..');
    const env = { XDG_STATE_HOME: process.env.XDG_STATE_HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    process.env.XDG_STATE_HOME = join(base, 'state');
    process.env.XDG_CONFIG_HOME = join(base, 'config');
    const targets: Target[] = [];
    let err = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
    try {
      const { config } = labInventory(lab([2201, 2202]), base);
      await writeInventoryFile(join(base, 'inv.json'), config);
      copyFileSync(join(base, 'inv.json'), join(base, 'copy.json'));
      new SavedConfig().save(config);
      // The same keys pinned, no known_hosts, other addresses (an alias, a tunnel): the same hosts.
      const elsewhere = {
        ...config,
        hosts: config.hosts.map(({ knownHostsFile: _k, ...h }, i) => ({ ...h, address: 'localhost', port: 3301 + i })),
      };
      await writeInventoryFile(join(base, 'elsewhere.json'), elsewhere);
      const { config: other } = labInventory(lab([2201, 2202]), mkdtempSync(join(base, 'other-')));
      await writeInventoryFile(join(base, 'other.json'), other);
      for (const inventory of ['inv.json', 'copy.json', 'elsewhere.json', 'other.json']) {
        targets.push((await openTarget({ inventory: join(base, inventory) }))!);
      }
      targets.push((await openTarget({}))!);
      const [inv, copy, moved, stranger, saved] = targets as [Target, Target, Target, Target, Target];
      expect(saved.source).toBe(new SavedConfig().path);

      const where = journalTarget(inv);
      expect(where.hosts.map((h) => h.keys)).toEqual(config.hosts.map((h) => [h.hostKeyFingerprint]));
      const left = new ApplyJournal({
        key: where.key,
        runId: 'R1',
        source: inv.source,
        hosts: where.hosts,
        stages: ['network'],
        now,
        process: { pid: await deadPid() },
      });
      left.handle(start('network.apply', 'l20-n1'));
      for (const t of [inv, copy, moved, saved]) {
        err = '';
        expect(journalGate({}, 'apply', t), t.source).toEqual({ kind: 'exit', code: 2 });
        expect(err).toContain('an apply on these hosts was interrupted (run R1');
        const resume = journalGate({ resume: true }, 'apply', t);
        expect(resume.kind === 'run' && resume.path).toBe(left.path);
      }
      err = '';
      expect(journalGate({}, 'apply', stranger)).toEqual({ kind: 'run' });
      expect(err).toBe('');

      // The TUI (after connecting) puts it to the operator (its modal) from the saved inventory.
      const store = new AppStore(appState(saved.config.hosts));
      const prompts = new Prompts(store.dispatch);
      new TuiJournal(store, prompts, () => undefined).check(saved);
      const modal = store.getState().ui.prompts.find((p) => p.kind === 'journal');
      expect(modal).toMatchObject({ journal: { runId: 'R1', inFlight: [{ host: 'l20-n1', step: 'network.apply' }] } });
      // No timer armed yet: a plain apply from the TUI may go ahead.
      const tui = new TuiJournal(store, prompts, () => undefined);
      tui.check(saved);
      expect(tui.refuseWhileTimersWait()).toBe(false);
      // A timer the interrupted run armed refuses a plain apply until it would have fired.
      const unit = 'l20-netplan-rollback-R1';
      left.handle({
        type: 'timer.armed',
        stage: 'network',
        step: 'network.apply',
        host: 'l20-n1',
        timer: { unit, undoes: 'restores /etc/netplan', command: ['true'], windowS: 180 },
      });
      tui.check(saved);
      const firesAt = Date.parse(read(left.path).armed[0]!.firesAt);
      expect(tui.refuseWhileTimersWait(firesAt - 1000)).toBe(true);
      expect(store.getState().ui.notice).toContain(`left ${unit}.timer on l20-n1 armed, which would undo this apply`);
      expect(tui.refuseWhileTimersWait(firesAt + 1000)).toBe(false);
    } finally {
      spy.mockRestore();
      await Promise.all(targets.map((t) => t.close()));
      for (const [k, v] of Object.entries(env)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

describe('armed rollback timers in the journal', () => {
  const timer = {
    unit: 'l20-ufw-rollback-20261130T013300Z',
    undoes: 'ufw --force disable (the firewall off)',
    command: ['ufw', '--force', 'disable'],
    windowS: 120,
  };
  const line =
    `l20-n2  rollback timer ${timer.unit}.timer (network.firewall) — ufw --force disable ` +
    '(the firewall off); fires 2026-11-30 01:35:16 UTC unless confirmed';

  it('on disk the moment the step says it arms one; gone when the step settles; kept when it ends unsettled', () => {
    const j = open();
    j.handle(start('network.firewall', 'l20-n1'));
    j.handle({ type: 'timer.armed', stage: 'network', step: 'network.firewall', host: 'l20-n1', timer });
    expect(read(j.path).armed).toEqual([
      {
        runId: '20261130T013300Z',
        host: 'l20-n1',
        stage: 'network',
        step: 'network.firewall',
        ...timer,
        armedAt: '2026-11-30T01:33:16.000Z',
        firesAt: '2026-11-30T01:35:16.000Z',
      },
    ]);
    const lost = { ...result('network.firewall', 'l20-n1', 'failed', 'network'), unsettled: true };
    j.handle({ type: 'step.result', result: lost });
    expect(read(j.path).armed.map((a) => a.unit)).toEqual([timer.unit]);
    j.finish();
    expect(existsSync(j.path)).toBe(true);

    const k = open({ key: 'k2' });
    k.handle(start('network.firewall', 'l20-n1'));
    k.handle({ type: 'timer.armed', stage: 'network', step: 'network.firewall', host: 'l20-n1', timer });
    k.handle({ type: 'step.result', result: result('network.firewall', 'l20-n1', 'applied', 'network') });
    expect(read(k.path).armed).toEqual([]);
    k.finish();
    expect(existsSync(k.path)).toBe(false);
  });

  it('the CLI and the TUI modal name each timer, its host, what it undoes and when it fires', () => {
    const j = open();
    j.handle({ ...start('network.firewall', 'l20-n2'), undo: { ...undo, files: [], rollback: [] } });
    j.handle({ type: 'timer.armed', stage: 'network', step: 'network.firewall', host: 'l20-n2', timer });
    const journal = read(j.path);
    const text = describeFound({ state: 'interrupted', path: j.path, journal }, '').join('\n');
    expect(text).toContain(`      rollback timer ${timer.unit}.timer (below)\n`);
    const heading = 'rollback timers it armed (may still wait; --resume stops them, --rollback runs them now):';
    expect(text).toContain(`${heading}\n    ${line}`);
    expect(journalUi(journal).timers).toEqual([line]);
  });
});

describe('a journal file is data, not commands', () => {
  it('a timer unit that would read as an option to systemctl: the file is corrupt (moved aside, never run)', () => {
    const j = open();
    j.handle(start('network.firewall', 'l20-n1'));
    const timer = { unit: '--force', undoes: 'x', command: ['true'], windowS: 1 };
    j.handle({ type: 'timer.armed', stage: 'network', step: 'network.firewall', host: 'l20-n1', timer });
    const found = findInterruptedApply('k1', dir);
    expect(found).toMatchObject({ state: 'corrupt', problem: expect.stringContaining('armed.0.unit') });
  });
});
