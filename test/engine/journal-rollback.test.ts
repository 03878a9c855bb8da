/**
 * Rolling back an interrupted step on the lab over real SSH, from the undo its step.start recorded:
 * a file it wrote with a backup is restored (content and mode), a file it created is removed, a file
 * it had not written yet stays, PATH.l20tmp.* leftovers go (names with glob characters too, other
 * files stay), a moved file comes back, the rollback commands run; a killed apt-get is finished with
 * dpkg --configure -a. Another host's files are not touched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import {
  handleStaleTimers,
  repairInterrupted,
  rollbackComplete,
  rollbackInterrupted,
  rollbackLines,
} from '../../src/engine/journal-rollback.js';
import type { JournalArmed, JournalStep } from '../../src/engine/journal.js';
import { FakeHost } from '../helpers/fake-host.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

const BACKUP = '/var/lib/l20-setup/backup/20261130T013300Z';
const SETUP = `set -e
mkdir -p /etc/l20j "${BACKUP}/etc/l20j"
printf 'old A\\n' > "${BACKUP}/etc/l20j/a.conf"; chmod 640 "${BACKUP}/etc/l20j/a.conf"
printf 'new A\\n' > /etc/l20j/a.conf; chmod 644 /etc/l20j/a.conf
printf 'new B\\n' > /etc/l20j/b.conf
printf 'kept C\\n' > /etc/l20j/c.conf
printf 'tmp\\n' > /etc/l20j/a.conf.l20tmp.0123456789ab
printf 'tmp\\n' > '/etc/l20j/we[ir]d.conf.l20tmp.abcdef'
printf 'other\\n' > /etc/l20j/c.conf.l20tmpx
printf 'E\\n' > "${BACKUP}/etc/l20j/e.conf"
`;

const entry = (host: string): JournalStep => ({
  runId: '20261130T013300Z',
  host,
  stage: 'os',
  step: 'test.step',
  danger: 'safe',
  startedAt: '2026-11-30T01:33:16.000Z',
  command: 'sudo -n -- systemctl restart something',
  undo: {
    backupDir: BACKUP,
    files: [
      { path: '/etc/l20j/a.conf', existed: true },
      { path: '/etc/l20j/b.conf', existed: false },
      { path: '/etc/l20j/c.conf', existed: true },
      { path: '/etc/l20j/d.conf', existed: false },
      { path: '/etc/l20j/we[ir]d.conf', existed: false },
    ],
    removeFiles: ['/etc/l20j/e.conf'],
    rollback: [{ command: { argv: ['touch', '/etc/l20j/rolled-back'] } }],
  },
});

describe('rollback of an interrupted step on the lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh' });
  });
  afterAll(async () => t.close());

  const sh = async (host: number, script: string) => {
    const r = await t.hosts[host]!.run({ script }, { sudo: true });
    if (r.exitCode !== 0) throw new Error(`setup failed: ${r.stderr}`);
    return r.stdout;
  };

  it('restores, removes, leaves, cleans leftovers, moves back and runs the rollback commands — on its host only', async () => {
    await t.hosts[0]!.connect();
    await t.hosts[1]!.connect();
    await sh(0, SETUP);
    await sh(1, 'mkdir -p /etc/l20j; printf "new B\\n" > /etc/l20j/b.conf');
    const engine = new Engine(t.hosts, { config: t.config });
    const results = await rollbackInterrupted(engine, { inFlight: [entry('l20-n1')] });

    expect(results.map((r) => [r.host, r.step, r.unreachable])).toEqual([['l20-n1', 'test.step', undefined]]);
    const actions = results[0]!.actions.map((a) => `${a.kind} ${a.what} ${a.ok}`);
    expect(actions).toEqual([
      'absent /etc/l20j/we[ir]d.conf true',
      'leftover /etc/l20j/we[ir]d.conf.l20tmp.abcdef true',
      'absent /etc/l20j/d.conf true',
      'untouched /etc/l20j/c.conf true',
      'removed /etc/l20j/b.conf true',
      'restored /etc/l20j/a.conf true',
      'leftover /etc/l20j/a.conf.l20tmp.0123456789ab true',
      'moved-back /etc/l20j/e.conf true',
      'command sudo touch /etc/l20j/rolled-back true',
    ]);
    expect(rollbackComplete(results)).toBe(true);
    expect(rollbackLines(results)[0]).toBe('l20-n1  test.step (os)');

    const after = await sh(
      0,
      `cd /etc/l20j; for f in *; do printf '%s:%s\\n' "$f" "$(cat "$f")"; done; stat -c %a a.conf; if [ -e "${BACKUP}/etc/l20j/e.conf" ]; then echo backup-still-there; else echo backup-moved; fi`,
    );
    expect(after.split('\n')).toEqual([
      'a.conf:old A',
      'c.conf:kept C',
      'c.conf.l20tmpx:other',
      'e.conf:E',
      'rolled-back:',
      '640',
      'backup-moved',
      '',
    ]);
    // The other host had no step in flight: its files are as they were.
    expect(await sh(1, 'cat /etc/l20j/b.conf')).toBe('new B\n');
  });

  it('a host that cannot be reached is reported and left alone; the rollback is not complete', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const results = await rollbackInterrupted(engine, { inFlight: [{ ...entry('l20-n9'), undo: null }] });
    expect(results).toEqual([
      expect.objectContaining({ host: 'l20-n9', unreachable: 'l20-n9 is not in this inventory' }),
    ]);
    expect(rollbackComplete(results)).toBe(false);
  });

  it('an apt-get killed mid-install: dpkg --configure -a finishes it, so apt installs again', async () => {
    // What a dpkg run killed mid-way leaves: its journal in /var/lib/dpkg/updates (apt checks for it).
    const journalEntry = "printf 'Package: jq\\nStatus: install ok unpacked\\n\\n' > /var/lib/dpkg/updates/0000\n";
    const planted = await t.hosts[1]!.run(
      { script: `mkdir -p /var/lib/dpkg/updates\n${journalEntry}` },
      { sudo: true },
    );
    expect(planted.exitCode).toBe(0);
    const refused = await t.hosts[1]!.run({ argv: ['apt-get', 'install', '-y', 'jq'] }, { sudo: true });
    expect(refused.stderr).toContain('dpkg was interrupted');
    const killed: JournalStep = {
      runId: '20261130T013300Z',
      host: 'l20-n2',
      stage: 'os',
      step: 'os.install-base',
      danger: 'safe',
      startedAt: '2026-11-30T01:33:16.000Z',
      undo: null,
      command: 'sudo -n -- env LC_ALL=C env DEBIAN_FRONTEND=noninteractive apt-get install -y chrony jq',
    };
    const engine = new Engine(t.hosts, { config: t.config });
    const repaired = await repairInterrupted(engine, {
      inFlight: [killed, { ...killed, host: 'l20-n1', command: 'sudo -n -- pip install x' }],
    });
    expect(repaired.map((r) => [r.host, r.actions.map((a) => `${a.kind} ${a.what} ${a.ok}`)])).toEqual([
      ['l20-n2', ['repaired dpkg --configure -a true']],
    ]);
    expect((await t.hosts[1]!.run({ argv: ['ls', '-A', '/var/lib/dpkg/updates'] })).stdout).toBe('');
    const again = await t.hosts[1]!.run(
      { argv: ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', 'jq'] },
      { sudo: true },
    );
    expect(again.exitCode).toBe(0);
  });
});

describe('stale rollback timers', () => {
  const armed = (host: string, unit: string): JournalArmed => ({
    runId: '20261130T013300Z',
    host,
    stage: 'network',
    step: 'network.apply',
    unit,
    undoes: 'the netplan snapshot',
    command: ['true'],
    windowS: 120,
    armedAt: '2026-11-30T01:33:16.000Z',
    firesAt: '2026-11-30T01:35:16.000Z',
  });

  it("are reported in the inventory's host order, whichever host journaled its timer first", async () => {
    const hosts = ['l20-n1', 'l20-n2', 'l20-n3'].map((name) => {
      const h = new FakeHost(name, () => undefined);
      h.connectError = new Error(`${name}: no route to host`);
      return h;
    });
    const engine = new Engine(hosts);
    const journal = { armed: [armed('l20-n3', 'c'), armed('gone', 'x'), armed('l20-n1', 'a'), armed('l20-n2', 'b')] };
    const actions = await handleStaleTimers(engine, journal, 'resume');
    expect(actions.map((a) => `${a.host} ${a.unit} ${a.found}`)).toEqual([
      'l20-n1 a unknown',
      'l20-n2 b unknown',
      'l20-n3 c unknown',
      'gone x unknown',
    ]);
    expect(actions.map((a) => a.unreachable)).toEqual([
      'l20-n1: no route to host',
      'l20-n2: no route to host',
      'l20-n3: no route to host',
      'gone is not in this inventory',
    ]);
  });
});
