/**
 * Kills during the armed network steps (issue 16 item 3): the rollback timers network.apply and
 * network.firewall arm survive the client, so a kill leaves them waiting. Each seed kills an apply at a
 * moment of its own — before a timer is armed, after it is armed, during the apply, before the confirm,
 * after the confirm, between the firewall's two arms, after `ufw --force enable` — then resumes it (or,
 * every other seed, rolls it back) through the CLI's own code (journalGate, repairBeforeResume,
 * runRollback) and lets the lab's clock run past every window. After a resume: no rollback timer left
 * on any host, the fabric file and addresses in place, the firewall enabled; after a rollback: the
 * netplan files and ufw state from before the step.
 *
 * The kill is in-process, on one lab for all seeds: at the chosen engine event the journal stops being
 * written and every SSH connection of the run is dropped (the lab sees the client go, as after SIGKILL)
 * while the run's pending commands never return. The journal names as its writer a child process that
 * was really SIGKILLed. One real `kill -9` of the CLI (test/e2e/crash-journal.test.ts covers the rest)
 * is not needed here: what a kill leaves on the hosts is the dropped session and the armed timer.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import {
  ApplyJournal,
  journalTarget,
  processIdentity,
  type JournalFile,
  type JournalProcess,
} from '../../src/engine/journal.js';
import type { TimerAction } from '../../src/engine/journal-rollback.js';
import { journalGate, openApplyJournal, repairBeforeResume, runRollback } from '../../src/commands/apply-journal.js';
import { networkStage } from '../../checks/network/index.js';
import { FABRIC_FILE } from '../../checks/network/probes.js';
import { hostsFromConfig } from '../../src/target.js';
import type { EngineEvent } from '../../src/engine/events.js';
import type { AnyStageDef } from '../../src/engine/types.js';
import type { Command, Host, RunOptions } from '../../src/transport/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, shellOn } from '../lab/helpers.js';

const only = (...ids: string[]): AnyStageDef => ({
  ...networkStage,
  steps: (networkStage.steps ?? []).filter((s) => ids.includes(s.id)),
});

/** A Host that, once killed, drops its connection and never answers again (the run's awaits hang: a dead process). */
class Killable implements Host {
  killed = false;
  constructor(private readonly inner: Host) {}
  get name() {
    return this.inner.name;
  }
  get address() {
    return this.inner.address;
  }
  private guard<T>(p: () => Promise<T>): Promise<T> {
    if (this.killed) return new Promise<T>(() => undefined);
    const never = new Promise<T>(() => undefined);
    return p().then(
      (v) => (this.killed ? never : v),
      (e: unknown) => (this.killed ? never : Promise.reject(e)),
    );
  }
  connect() {
    return this.guard(() => this.inner.connect());
  }
  run(c: Command, o?: RunOptions) {
    return this.guard(() => this.inner.run(c, o));
  }
  readFile(p: string, o?: { sudo?: boolean }) {
    return this.guard(() => this.inner.readFile(p, o));
  }
  writeFileAtomic(...a: Parameters<Host['writeFileAtomic']>) {
    return this.guard(() => this.inner.writeFileAtomic(...a));
  }
  onStateChange(l: Parameters<Host['onStateChange']>[0]) {
    return this.inner.onStateChange(l);
  }
  probeFreshConnection(ms: number) {
    return this.guard(() => this.inner.probeFreshConnection!(ms));
  }
  knownHostKeys() {
    return this.inner.knownHostKeys?.() ?? [];
  }
  kill(): Promise<void> {
    this.killed = true;
    return this.inner.close();
  }
  close() {
    return this.inner.close();
  }
}

type Moment = (e: EngineEvent, seen: { applied: Set<string> }) => boolean;
const isCmd = (e: EngineEvent, re: RegExp): e is Extract<EngineEvent, { type: 'cmd.start' }> =>
  e.type === 'cmd.start' && re.test(e.commandLine);
const on =
  (h: string, re: RegExp): Moment =>
  (e) =>
    isCmd(e, re) && e.host === h;
const journaled =
  (h: string): Moment =>
  (e) =>
    e.type === 'timer.armed' && e.host === h;

/** The kill moments: which step runs, and the event after which the process dies. */
const MOMENTS: Array<{ name: string; step: 'network.apply' | 'network.firewall'; at: (host: string) => Moment }> = [
  { name: 'netplan: journaled, before systemd-run arms', step: 'network.apply', at: journaled },
  { name: 'netplan: armed, before the apply', step: 'network.apply', at: (h) => on(h, /systemctl list-timers/) },
  { name: 'netplan: during the apply', step: 'network.apply', at: (h) => on(h, /netplan generate && netplan apply/) },
  {
    name: 'netplan: applied, proving, before the confirm',
    step: 'network.apply',
    at: () => (e, seen) => {
      if (e.type === 'cmd.start' && /netplan generate && netplan apply/.test(e.commandLine)) seen.applied.add(e.host);
      return seen.applied.size === 2 && e.type === 'cmd.start' && !/netplan apply/.test(e.commandLine);
    },
  },
  { name: 'netplan: a confirm sent', step: 'network.apply', at: (h) => on(h, /systemctl stop l20-netplan-rollback-/) },
  { name: 'ufw: journaled, before systemd-run arms', step: 'network.firewall', at: journaled },
  { name: 'ufw: armed on a host, between the arms', step: 'network.firewall', at: (h) => on(h, /ufw allow in on/) },
  { name: 'ufw: enabled, before the proof', step: 'network.firewall', at: () => on('l20-n2', /ufw --force enable/) },
  { name: 'ufw: a confirm sent', step: 'network.firewall', at: (h) => on(h, /systemctl stop l20-ufw-rollback-/) },
];

const SEEDS = 20;
let runs = 0;
const runId = () => `20260101T${String(++runs).padStart(6, '0')}Z`;

describe('kills during the armed network steps, then --resume or --rollback', () => {
  let t: LabTarget;
  let stateDir: string;
  let dead: { pid: number; identity: JournalProcess };
  const saved = process.env.XDG_STATE_HOME;
  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'l20-kill-armed-'));
    process.env.XDG_STATE_HOME = stateDir;
    t = await labTarget({ scenario: 'ready' });
    // The writer the journals name: a process that really died by SIGKILL (its identity recorded while it ran).
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await new Promise((r) => child.once('spawn', r));
    const identity = processIdentity(child.pid!)!;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    dead = { pid: child.pid!, identity };
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    rmSync(stateDir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = saved;
  });

  const both = (cmd: string) => Promise.all([shellOn(t, 0, cmd), shellOn(t, 1, cmd)]);
  /** What a rollback must bring back: the netplan files and ufw's state (after `## `, what else was asked). */
  const SNAPSHOT = `cd /etc/netplan && for f in *.yaml; do echo "== $f"; cat "$f"; done; ufw status | head -1`;
  const snapshot = (extra = '') => both(`sudo sh -c '${SNAPSHOT}; echo "## "; ${extra}'`);
  const timersLeft = async () => (await hostsNow()).timers;
  const hostsNow = async () => {
    const out = await snapshot(`systemctl list-timers --all; cat ${FABRIC_FILE}; ip -4 -o addr show dev ens1f0`);
    return {
      files: out.map((s) => s.slice(0, s.indexOf('## '))),
      timers: out.flatMap((s, i) =>
        (s.match(/l20-(netplan|ufw)-rollback-\S+\.timer/g) ?? []).map((u) => `l20-n${i + 1} ${u}`),
      ),
      fabric: out.map((s) => s.slice(s.indexOf('## '))),
    };
  };
  /** Lets the lab's clock run past every rollback window (180 s, 120 s): a timer left waiting fires now. */
  const pastEveryWindow = () => t.lab.hosts[0]!.machine.clock.advance(400_000);

  /** Applies the step's stage part and kills the run at the moment; the journal it left. */
  async function killed(
    seed: number,
    moment: (typeof MOMENTS)[number],
    host: string,
  ): Promise<{ journal: JournalFile; reached: boolean }> {
    const hosts = hostsFromConfig(t.config).map((h) => new Killable(h));
    const engine = new Engine(hosts, { config: t.config, runId: runId() });
    const target = { source: `kill-armed seed ${seed}`, hosts };
    const where = journalTarget(target);
    const journal = new ApplyJournal({
      key: where.key,
      runId: engine.context.runId,
      source: target.source,
      hosts: where.hosts,
      stages: ['network'],
      process: dead,
    });
    const at = moment.at(host);
    const seen = { applied: new Set<string>() };
    let reached = false;
    const dropped = new Promise<void>((resolve) => {
      const off = engine.subscribe((e) => {
        if (reached) return;
        journal.handle(e);
        if (!at(e, seen)) return;
        reached = true;
        off();
        void Promise.all(hosts.map((h) => h.kill())).then(() => resolve());
      });
      const steps = moment.step === 'network.apply' ? only('network.write', 'network.apply') : only('network.firewall');
      void applier(engine)
        .applyStage(steps)
        .then(
          () => resolve(),
          () => resolve(),
        );
    });
    await dropped;
    const j = journalGate({}, 'check', target);
    expect(j.kind).toBe('run');
    return { journal: journal.snapshot as JournalFile, reached };
  }

  it(`${SEEDS} seeded kills: every stale timer found and handled; 0 regressions after resume or rollback`, async () => {
    const figures = { kills: 0, timersStale: 0, handled: 0, resumed: 0, rolledBack: 0, regressions: [] as string[] };
    let err = '';
    let out = '';
    const spyErr = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
    const spyOut = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
    try {
      for (let seed = 0; seed < SEEDS; seed++) {
        // Every moment on both hosts, each followed by a resume in one round and a rollback in the next.
        const round = Math.floor(seed / MOMENTS.length);
        const moment = MOMENTS[seed % MOMENTS.length]!;
        const host = (seed + round) % 2 === 0 ? 'l20-n1' : 'l20-n2';
        const rollback = (seed + round) % 2 === 1;
        const what = `seed ${seed} (${moment.name} on ${host}, then ${rollback ? '--rollback' : '--resume'})`;
        // The step must have work to do: the fabric file gone and an address with it (network.write writes
        // it again, keeping the files before it for network.apply's rollback), or ufw off (network.firewall).
        if (moment.step === 'network.apply') await both(`sudo rm -f ${FABRIC_FILE} && sudo ip addr flush dev ens1f0`);
        else await both('sudo ufw --force disable');
        const before = (await snapshot()).map((s) => s.slice(0, s.indexOf('## ')));
        const { journal, reached } = await killed(seed, moment, host);
        expect(reached, `${what}: the moment was reached`).toBe(true);
        figures.kills++;
        expect(journal.armed.length > 0 || !/journaled/.test(moment.name), `${what}: the timer journaled`).toBe(true);

        const hosts = hostsFromConfig(t.config);
        const engine = new Engine(hosts, { config: t.config, runId: runId() });
        const target = { source: `kill-armed seed ${seed} (again)`, hosts };
        err = '';
        out = '';
        let timers: TimerAction[] = [];
        try {
          if (rollback) {
            const gate = journalGate({ rollback: true }, 'apply', target);
            if (gate.kind !== 'rollback') throw new Error(`${what}: gate ${gate.kind}\n${err}`);
            const code = await runRollback(engine, gate.found, true);
            expect(code, `${what}: ${out}`).toBe(0);
            timers = (JSON.parse(out) as { rollback: { timers: TimerAction[] } }).rollback.timers;
            figures.rolledBack++;
          } else {
            const gate = journalGate({ resume: true }, 'apply', target);
            if (gate.kind !== 'run' || !gate.resumed) throw new Error(`${what}: gate ${gate.kind}\n${err}`);
            const repaired = await repairBeforeResume(engine, gate.resumed);
            expect(repaired.ok, `${what}: ${err}`).toBe(true);
            timers = repaired.timers;
            const applying = gate.stages ?? [];
            expect(applying.map((s) => s.id)).toEqual(['network']);
            const j = openApplyJournal(engine, target, applying, gate.carry, gate.path);
            const run = await applier(engine)
              .applyStages(applying)
              .finally(() => j.finish());
            const failed = run.outcomes
              .flatMap((o) => o.steps ?? [])
              .filter((s) => s.status === 'failed')
              .map((s) => `${s.host} ${s.id}: ${s.error}`);
            expect(failed, what).toEqual([]);
            figures.resumed++;
          }
        } finally {
          await Promise.all(hosts.map((h) => h.close()));
        }
        // Every waiting timer the kill left was found (the journal knew it) and handled.
        const stale = timers.filter((x) => x.found === 'waiting' || x.found === 'firing');
        figures.timersStale += stale.length;
        figures.handled += stale.filter((x) => x.ok && ['stopped', 'honoured', 'waited'].includes(x.done)).length;
        expect(
          timers.every((x) => x.ok),
          `${what}: ${err}${out}`,
        ).toBe(true);
        err = '';
        expect(journalGate({}, 'check', target).kind, `${what}: the journal is gone`).toBe('run');
        expect(err, `${what}: the journal is gone`).toBe('');

        await pastEveryWindow();
        const { files: after, timers: left, fabric } = await hostsNow();
        if (left.length) figures.regressions.push(`${what}: timers left ${left.join(', ')}`);
        if (rollback) {
          const ufwOff = after.every((s) => s.includes('Status: inactive'));
          if (moment.step === 'network.firewall' && !ufwOff) figures.regressions.push(`${what}: ufw not back off`);
          if (after.join() !== before.join()) {
            const diff = `${before.join('\n')}\n--\n${after.join('\n')}`;
            figures.regressions.push(`${what}: not the state before the step:\n${diff}`);
          }
        } else {
          const ufwOn = after.every((s) => s.includes('Status: active'));
          if (!ufwOn) figures.regressions.push(`${what}: the firewall is not enabled: ${after.join(' | ')}`);
          const inPlace = fabric.every((s) => /design A/.test(s) && /inet 192\.168\.101\.\d\/24/.test(s));
          if (!inPlace) figures.regressions.push(`${what}: the fabric is not in place: ${fabric.join(' | ')}`);
        }
      }
    } finally {
      spyErr.mockRestore();
      spyOut.mockRestore();
    }
    const shown = { ...figures, regressions: figures.regressions.length };
    process.stdout.write(`kill-armed figures: ${JSON.stringify(shown)}\n`);
    expect(figures.regressions).toEqual([]);
    expect(figures.kills).toBe(SEEDS);
    expect(figures.timersStale).toBeGreaterThanOrEqual(SEEDS / 2);
    expect(figures.handled).toBe(figures.timersStale);
  }, 240_000);

  it('a timer whose host cannot be reached: --resume refuses, the journal stays; once it answers, resumes', async () => {
    await both(`sudo rm -f ${FABRIC_FILE} && sudo ip addr flush dev ens1f0`);
    const moment = MOMENTS.find((m) => m.name === 'netplan: armed, before the apply')!;
    let err = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((x) => ((err += String(x)), true));
    try {
      const { journal } = await killed(99, moment, 'l20-n2');
      // Both hosts arm in parallel: the journal holds one timer each, in whichever order they were armed.
      expect(journal.armed.map((a) => a.host).sort()).toEqual(['l20-n1', 'l20-n2']);
      // Node 2 by a port nothing listens on: the same host key, so the same journal, but no answer.
      const lost = { ...t.config, hosts: t.config.hosts.map((h, i) => (i === 1 ? { ...h, port: 1 } : h)) };
      const hosts = hostsFromConfig(lost);
      const engine = new Engine(hosts, { config: lost, runId: runId() });
      const gate = journalGate({ resume: true }, 'apply', { source: 'lost', hosts });
      if (gate.kind !== 'run' || !gate.resumed) throw new Error(`gate ${gate.kind}\n${err}`);
      const refused = await repairBeforeResume(engine, gate.resumed).finally(() =>
        Promise.all(hosts.map((h) => h.close())),
      );
      expect(refused.ok).toBe(false);
      expect(refused.timers.map((x) => `${x.host} ${x.done} ${x.unreachable ? 'unreachable' : 'reached'}`)).toEqual([
        'l20-n1 stopped reached',
        'l20-n2 none unreachable',
      ]);
      expect(err).toContain('not resuming: a rollback timer of the interrupted run may still wait');
      expect(journalGate({}, 'check', { source: 'lost', hosts }).kind).toBe('run');
      expect(err).toContain('an apply on these hosts was interrupted');
      expect(await timersLeft()).toEqual([`l20-n2 l20-netplan-rollback-${journal.runId}.timer`]);

      const back = hostsFromConfig(t.config);
      const again = new Engine(back, { config: t.config, runId: runId() });
      const retry = journalGate({ resume: true }, 'apply', { source: 'back', hosts: back });
      if (retry.kind !== 'run' || !retry.resumed) throw new Error(`gate ${retry.kind}\n${err}`);
      const repaired = await repairBeforeResume(again, retry.resumed);
      expect(repaired.timers.map((x) => `${x.host} ${x.found} ${x.done}`)).toEqual([
        'l20-n1 idle none',
        'l20-n2 waiting stopped',
      ]);
      const j = openApplyJournal(again, { source: 'back', hosts: back }, retry.stages ?? [], retry.carry, retry.path);
      const run = await applier(again)
        .applyStages(retry.stages ?? [])
        .finally(() => j.finish());
      await Promise.all(back.map((h) => h.close()));
      expect(run.outcomes.flatMap((o) => o.steps ?? []).filter((x) => x.status === 'failed')).toEqual([]);
      expect(await timersLeft()).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  }, 60_000);
});
