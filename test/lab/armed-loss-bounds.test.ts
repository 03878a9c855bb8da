/**
 * Bounds during the armed network steps (issue 16, item 8): a host whose SSH server is killed while
 * network.apply runs — before its timer is armed, armed before the apply, during the proof — is declared
 * lost within its keepalive bound (interval × (count + 1) + 1 s, Host.lostBoundMs), the other host is
 * rolled back (or disarmed) at once, without waiting for the lost one, and the lost host's own timer
 * restores it later, at the time the tool said.
 *
 * Short keepalives (500 ms × 3: a 3 s bound) keep the test fast; the bound it asserts is the function of
 * those settings the product uses. Figures: one line per kill, `bounds: …` (docs/RELIABILITY.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkStage } from '../../checks/network/index.js';
import type { NetworkFacts } from '../../checks/network/facts.js';
import type { ReachCluster } from '../../checks/network/reach.js';
import { ROLLBACK_WINDOW_S } from '../../checks/network/armed.js';
import { osStage } from '../../checks/os/index.js';
import { Engine } from '../../src/engine/runner.js';
import type { StepExecutor } from '../../src/engine/steps.js';
import type { StageDef, StepResult } from '../../src/engine/types.js';
import { startLab, type Lab } from '../../lab/index.js';
import { labInventory } from '../../src/target.js';
import { SshHost } from '../../src/transport/ssh.js';
import type { Command } from '../../src/transport/types.js';
import type { ClusterConfig } from '../../src/config/schema.js';
import { UFW_WINDOW_S } from '../../checks/network/firewall.js';
import { newRecording, RecordingHost, type SentCommand } from '../helpers/recording-host.js';
import { applier, connect, end, exec, text } from './helpers.js';

const only = (...ids: string[]): StageDef<NetworkFacts, ReachCluster> => ({
  ...networkStage,
  steps: (networkStage.steps ?? []).filter((s) => ids.includes(s.id)),
});

const KEEPALIVE = { keepaliveIntervalMs: 500, keepaliveCountMax: 3 };
/** What SshHost.lostBoundMs must be for these settings: interval × (count + 1) + 1 s. */
const BOUND_MS = KEEPALIVE.keepaliveIntervalMs * (KEEPALIVE.keepaliveCountMax + 1) + 1000;

type Moment = 'before arm' | 'armed, before apply' | 'during prove';

const argvOf = (c: Command): readonly string[] => ('argv' in c ? c.argv : []);
const isSnapshot = (c: Command): boolean => 'script' in c && c.script.includes('created-devices');
const isApply = (c: Command): boolean => argvOf(c).includes('netplan generate && netplan apply');
const isRollbackNow = (c: Command): boolean => argvOf(c).join(' ').startsWith('systemctl start l20-netplan-rollback-');

/** SSH hosts for the lab's machines with the short keepalives, through a RecordingHost (and its tripwire). */
function keepaliveHosts(
  lab: Lab,
  dir: string,
  tripwire?: (c: SentCommand) => void,
): { hosts: RecordingHost[]; config: ClusterConfig } {
  const { config, files } = labInventory(lab, dir);
  const recording = newRecording();
  const hosts = config.hosts.map(
    (h) =>
      new RecordingHost(
        new SshHost({
          name: h.name,
          host: h.address,
          port: h.port!,
          user: h.user!,
          identityFiles: [files.identityFile],
          knownHostsFiles: [files.knownHostsFile],
          ...KEEPALIVE,
        }),
        recording,
        tripwire,
      ),
  );
  return { hosts, config };
}

interface Trial {
  victim: string;
  moment: Moment;
  killedAt?: number;
  appliedOnVictim?: boolean;
}

describe('a host killed during network.apply is declared lost within its keepalive bound', () => {
  let lab: Lab;
  let dir: string;
  let hosts: RecordingHost[];
  let engine: Engine;
  let ex: StepExecutor;
  let trial: Trial | undefined;
  /** When each command was sent, for "the other host's rollback did not wait". */
  const sent: Array<{ at: number; c: SentCommand }> = [];
  const figures: string[] = [];

  const labHost = (name: string) => lab.hosts.find((h) => h.name === name)!;
  const kill = (t: Trial): void => {
    t.killedAt = Date.now();
    labHost(t.victim).faults.suspend();
  };
  const tripwire = (c: SentCommand): void => {
    sent.push({ at: Date.now(), c });
    const t = trial;
    if (!t || t.killedAt !== undefined || c.host !== t.victim) return;
    if (t.moment === 'before arm' && isSnapshot(c.command)) kill(t);
    else if (t.moment === 'armed, before apply' && isApply(c.command)) kill(t);
    else if (t.moment === 'during prove' && t.appliedOnVictim) kill(t);
    else if (t.moment === 'during prove' && isApply(c.command)) t.appliedOnVictim = true;
  };

  beforeAll(async () => {
    lab = await startLab({ speed: 'max', scenario: 'fresh' });
    dir = mkdtempSync(join(tmpdir(), 'l20-bounds-'));
    let config: ClusterConfig;
    ({ hosts, config } = keepaliveHosts(lab, dir, tripwire));
    engine = new Engine(hosts, { config });
    ex = applier(engine);
    await ex.applyStage(osStage);
  }, 120_000);
  afterAll(async () => {
    console.log(figures.join('\n'));
    await Promise.all(hosts.map((h) => h.close()));
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the transport states the bound its keepalive settings give', () => {
    expect(hosts.map((h) => h.lostBoundMs)).toEqual([BOUND_MS, BOUND_MS]);
    expect(new SshHost({ name: 'x', host: 'h', user: 'u', knownHostsFiles: [] }).lostBoundMs).toBe(5000 * 4 + 1000);
  });

  const cases: Array<[Moment, string]> = [
    ['before arm', 'l20-n2'],
    ['armed, before apply', 'l20-n2'],
    ['during prove', 'l20-n2'],
    ['before arm', 'l20-n1'],
    ['armed, before apply', 'l20-n1'],
    ['during prove', 'l20-n1'],
  ];
  it.each(cases)(
    'killed %s on %s: lost within the bound, the other host settled at once',
    async (moment, victim) => {
      const other = victim === 'l20-n1' ? 'l20-n2' : 'l20-n1';
      const w = await ex.applyStage(only('network.discover-cabling', 'network.write'));
      expect(w.steps?.filter((s) => s.status === 'failed')).toEqual([]);
      const t: Trial = { victim, moment };
      let lostAt: number | undefined;
      let lostLine = '';
      const off = engine.subscribe((e) => {
        if (e.type === 'step.note' && e.host === victim && e.line.startsWith('lost:') && lostAt === undefined) {
          lostAt = Date.now();
          lostLine = e.line;
        }
      });
      trial = t;
      const from = sent.length;
      const startedAt = Date.now();
      let o: Awaited<ReturnType<StepExecutor['applyStage']>>;
      let endedAt: number;
      try {
        o = await ex.applyStage(only('network.apply'));
        endedAt = Date.now();
      } finally {
        trial = undefined;
        off();
        // The lost host's SSH server comes back (after the run, whatever it asserted) for the next kill.
        if (t.killedAt !== undefined) await labHost(victim).faults.resume();
      }

      expect(t.killedAt, 'the tripwire fired').toBeDefined();
      const steps = (o.steps ?? []).filter((s) => s.id === 'network.apply');
      expect(steps.map((s) => [s.host, s.status]).sort()).toEqual([
        ['l20-n1', 'failed'],
        ['l20-n2', 'failed'],
      ]);
      // Declared lost within the keepalive bound (plus the backoff's last step and a second of scheduling).
      expect(lostAt, `a 'lost:' note for ${victim}`).toBeDefined();
      const toLost = lostAt! - t.killedAt!;
      const toEnd = endedAt - t.killedAt!;
      expect(toLost).toBeLessThanOrEqual(BOUND_MS + 1500);
      expect(toEnd).toBeLessThanOrEqual(BOUND_MS + 5000);
      const victimError = steps.find((s) => s.host === victim)?.error ?? '';
      const otherError = steps.find((s) => s.host === other)?.error ?? '';
      expect(victimError).toContain(lostLine);
      if (moment === 'before arm') {
        expect(lostLine).toMatch(/no rollback timer was armed there, and its network configuration was not changed/);
        expect(otherError).toMatch(/timers stopped, configuration unchanged/);
      } else {
        const fate = new RegExp(
          'its rollback timer l20-netplan-rollback-\\S+\\.timer restores the configuration ' +
            'before this step at (\\S+) UTC',
        );
        const due = fate.exec(lostLine)?.[1];
        // It was armed between the run's start and the kill: it fires ROLLBACK_WINDOW_S later.
        const seconds = (a: number, b: number): string[] =>
          Array.from({ length: Math.floor(b / 1000) - Math.floor(a / 1000) + 1 }, (_, i) =>
            new Date((Math.floor(a / 1000) + i) * 1000).toISOString().slice(11, 19),
          );
        expect(seconds(startedAt + ROLLBACK_WINDOW_S * 1000, t.killedAt! + ROLLBACK_WINDOW_S * 1000)).toContain(due);
        expect(otherError).toMatch(/rolled back at once \(the rollback service ran, Result=success\)/);
        // The other host's rollback did not wait for the lost one to be declared lost.
        const rollback = sent.slice(from).find((s) => s.c.host === other && isRollbackNow(s.c.command));
        expect(rollback?.at).toBeLessThan(lostAt!);
      }
      const settled = moment === 'before arm' ? 'disarmed' : 'rolled back';
      figures.push(
        `bounds: sshd of ${victim} killed ${moment}: declared lost after ${(toLost / 1000).toFixed(1)} s, ` +
          `run over after ${(toEnd / 1000).toFixed(1)} s (bound ${(BOUND_MS / 1000).toFixed(1)} s: keepalive ` +
          `${KEEPALIVE.keepaliveIntervalMs} ms × ${KEEPALIVE.keepaliveCountMax}); ${other} ${settled} at once`,
      );

      // Its own timer, when due, leaves the lost host as before network.write.
      await lab.cluster.clock.advance((ROLLBACK_WINDOW_S + 5) * 1000);
      for (const h of lab.hosts) {
        const c = await connect(lab, h);
        expect(text(await exec(c, 'systemctl list-timers --all')).out).not.toContain('l20-netplan-rollback');
        if (moment !== 'before arm') expect(text(await exec(c, 'sudo ls /etc/netplan')).out).toBe('01-netcfg.yaml\n');
        await end(c);
      }
    },
    60_000,
  );
});

describe('a host killed after network.firewall enabled ufw on it is declared lost within its keepalive bound', () => {
  let lab: Lab;
  let dir: string;
  let hosts: RecordingHost[];
  let engine: Engine;
  beforeAll(async () => {
    lab = await startLab({ speed: 'max', scenario: 'ready' });
    dir = mkdtempSync(join(tmpdir(), 'l20-bounds-'));
    let config: ClusterConfig;
    ({ hosts, config } = keepaliveHosts(lab, dir));
    engine = new Engine(hosts, { config });
    for (const h of lab.hosts) {
      const c = await connect(lab, h);
      const disabled = text(await exec(c, 'sudo ufw --force disable')).out;
      expect(disabled).toBe('Firewall stopped and disabled on system startup\n');
      await end(c);
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.close()));
    await lab.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the other host is disabled again at once; the lost one is left to its timer, which disables ufw', async () => {
    const n2 = lab.hosts.find((h) => h.name === 'l20-n2')!;
    let enable: string | undefined;
    let killedAt: number | undefined;
    let lostAt: number | undefined;
    const off = engine.subscribe((e) => {
      const enabling = e.type === 'cmd.start' && e.host === 'l20-n2' && e.commandLine.includes('ufw --force enable');
      if (enabling) enable = e.runId;
      if (e.type === 'cmd.exit' && e.runId === enable && killedAt === undefined) {
        killedAt = Date.now();
        n2.faults.suspend();
      }
      if (e.type === 'step.note' && e.host === 'l20-n2' && e.line.startsWith('lost:')) lostAt ??= Date.now();
    });
    let steps: StepResult[];
    let endedAt: number;
    try {
      const o = await applier(engine).applyStage(only('network.firewall'));
      endedAt = Date.now();
      steps = (o.steps ?? []).filter((s) => s.id === 'network.firewall');
    } finally {
      off();
      await n2.faults.resume();
    }
    expect(killedAt, 'killed after ufw --force enable on l20-n2').toBeDefined();
    expect(steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    expect(steps.find((s) => s.host === 'l20-n1')?.error).toMatch(/disabled again at once/);
    expect(steps.find((s) => s.host === 'l20-n2')?.error).toMatch(
      new RegExp(
        `lost: no new SSH connection within ${(BOUND_MS / 1000).toFixed(1)} s \\(its keepalive bound\\); ` +
          'its rollback timer l20-ufw-rollback-\\S+\\.timer disables the firewall by \\d\\d:\\d\\d:\\d\\d UTC',
      ),
    );
    expect(lostAt! - killedAt!).toBeLessThanOrEqual(BOUND_MS + 1500);
    expect(endedAt - killedAt!).toBeLessThanOrEqual(BOUND_MS + 5000);
    const toLost = ((lostAt! - killedAt!) / 1000).toFixed(1);
    console.log(
      `bounds: sshd of l20-n2 killed after ufw enable: declared lost after ${toLost} s, ` +
        `run over after ${((endedAt - killedAt!) / 1000).toFixed(1)} s (bound ${(BOUND_MS / 1000).toFixed(1)} s); ` +
        'l20-n1 disabled at once',
    );
    // Its own timer, when due, disables ufw there.
    await lab.cluster.clock.advance((UFW_WINDOW_S + 5) * 1000);
    for (const h of lab.hosts) {
      const c = await connect(lab, h);
      expect(text(await exec(c, 'sudo ufw status')).out).toBe('Status: inactive\n');
      await end(c);
    }
  }, 60_000);
  it('a step that fails mid-sequence names the host it could not undo and leaves that one to its timer', async () => {
    const [n1, n2] = ['l20-n1', 'l20-n2'].map((n) => lab.hosts.find((h) => h.name === n)!);
    let cutAt: number | undefined;
    // Both hosts go when l20-n2's timer is about to be armed: l20-n1 has enabled ufw under its timer by then.
    const off = engine.subscribe((e) => {
      if (cutAt !== undefined || e.type !== 'cmd.start' || e.host !== 'l20-n2') return;
      if (!e.commandLine.includes('systemd-run')) return;
      cutAt = Date.now();
      n1!.faults.suspend();
      n2!.faults.suspend();
    });
    let steps: StepResult[];
    try {
      steps = ((await applier(engine).applyStage(only('network.firewall'))).steps ?? []).filter(
        (s) => s.id === 'network.firewall',
      );
    } finally {
      off();
      await Promise.all([n1!.faults.resume(), n2!.faults.resume()]);
    }
    expect(cutAt, 'cut when l20-n2 was about to arm').toBeDefined();
    expect(steps.map((s) => s.status)).toEqual(['failed', 'failed']);
    for (const s of steps) {
      expect(s.error).toMatch(
        new RegExp(
          'l20-n1: lost; its rollback timer l20-ufw-rollback-\\S+\\.timer ' +
            'disables the firewall by \\d\\d:\\d\\d:\\d\\d UTC',
        ),
      );
      expect(s.error).not.toMatch(/disabled again/);
    }
    const c1 = await connect(lab, n1!);
    expect(text(await exec(c1, 'sudo ufw status')).out).toMatch(/^Status: active/);
    await end(c1);
    await lab.cluster.clock.advance((UFW_WINDOW_S + 5) * 1000);
    const c2 = await connect(lab, n1!);
    expect(text(await exec(c2, 'sudo ufw status')).out).toBe('Status: inactive\n');
    await end(c2);
  }, 60_000);
});
