/**
 * apt at a finite lab speed: output streams while packages install (docs/STAGES.md §4.5: a few
 * seconds per package, scaled by the speed), a second apt or dpkg meets the lock, and a run cut
 * off in the middle leaves dpkg interrupted until `dpkg --configure -a`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab, LabHost } from '../../lab/index.js';
import { closeLab, collect, openExec, openLab, sh, waitFor } from './helpers.js';

let lab: Lab;
let host: LabHost;
let c: Client;
const run = (cmd: string) => sh(c, `LC_ALL=C ${cmd}`);

beforeAll(async () => {
  ({ lab, host, conn: c } = await openLab({ speed: 25, hosts: 1 }));
});

afterAll(() => closeLab(lab, c));

describe('apt-get at speed 25', () => {
  test('output arrives in pieces while the packages install, and a second apt meets the lock', async () => {
    const startSim = host.machine.clock.now();
    const ch = await openExec(c, 'sudo apt-get install -y lldpd');
    const arrivals: Array<{ at: number; text: string }> = [];
    ch.on('data', (d: Buffer) => arrivals.push({ at: Date.now(), text: d.toString() }));
    const done = collect(ch);
    // The apt lock is taken while it runs: a second apt-get and dpkg are refused.
    ch.end();
    await waitFor(() => host.machine.apt?.lock !== undefined, 'apt-get to take the lock');
    const second = await run('sudo apt-get install -y jq');
    expect(second.err).toMatch(
      /^E: Could not get lock \/var\/lib\/dpkg\/lock-frontend\. It is held by process \d+ \(apt-get\)\nN: Be aware that removing the lock file is not a solution and may break your system\.\nE: Unable to acquire the dpkg frontend lock \(\/var\/lib\/dpkg\/lock-frontend\), is another process using it\?\n$/,
    );
    expect(second.code).toBe(100);
    const dpkg = await run('sudo dpkg -i /tmp/x.deb');
    expect(dpkg.err).toMatch(/^dpkg: error: dpkg frontend lock was locked by another process with pid \d+\n/);
    expect(dpkg.code).toBe(2);

    const r = await done;
    const finished = Date.now();
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toContain('Setting up lldpd (1.0.13-1) ...\n');
    // Streamed: several pieces, the first well before the end.
    expect(arrivals.length).toBeGreaterThan(3);
    expect(arrivals[0]?.text).toContain('Reading package lists...');
    expect(finished - (arrivals[0]?.at ?? finished)).toBeGreaterThan(100);
    const setupLldpd = arrivals.findIndex((a) => a.text.includes('Setting up lldpd'));
    const firstGet = arrivals.findIndex((a) => a.text.includes('Get:1 '));
    expect(firstGet).toBeGreaterThanOrEqual(0);
    expect(setupLldpd).toBeGreaterThan(firstGet);
    expect(host.machine.clock.now() - startSim).toBeGreaterThan(5_000);
    expect(host.machine.apt?.lock).toBeUndefined();
  });

  test('the install takes modelled seconds per package', async () => {
    // At full speed the clock moves only by modelled waits, so this measures apt's own durations; at 25× the
    // clock also runs with the wall time a loaded machine spends on the commands.
    const { lab: fast, host, conn: c } = await openLab({ speed: 'max', hosts: 1 });
    try {
      const startSim = host.machine.clock.now();
      const r = await sh(c, 'LC_ALL=C sudo apt-get install -y lldpd');
      expect(r.code, r.err).toBe(0);
      // Six packages: 0.5–1.5 s per pulled-in library, 2–6 s for lldpd, plus reading lists and triggers.
      const simulated = host.machine.clock.now() - startSim;
      expect(simulated).toBeGreaterThan(5_000);
      expect(simulated).toBeLessThan(20_000);
    } finally {
      await closeLab(fast, c);
    }
  });

  test('a run cut off while configuring leaves dpkg interrupted until dpkg --configure -a', async () => {
    // Slow enough that the signal surely lands while chrony's postinst runs.
    const { lab: slow, host, conn: c } = await openLab({ speed: 4, hosts: 1 });
    const run = (cmd: string) => sh(c, `LC_ALL=C ${cmd}`);
    const ch = await openExec(c, 'sudo apt-get install -y chrony');
    const done = collect(ch);
    // No EOF (signals need an open channel): the lab starts the command after 2 s of silence.
    await waitFor(() => host.machine.packages.get('chrony')?.status === 'iU ', 'chrony to be unpacked', 15_000);
    ch.signal('TERM');
    const r = await done;
    expect(r.signal).toBe('SIGTERM');
    expect(host.machine.apt?.lock).toBeUndefined();
    expect((await run("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' chrony")).out).toBe('iU  chrony\n');
    expect(await run('sudo apt-get install -y jq')).toEqual({
      out: '',
      err: "E: dpkg was interrupted, you must manually run 'sudo dpkg --configure -a' to correct the problem. \n",
      code: 100,
    });
    const fix = await run('sudo dpkg --configure -a');
    expect(fix.out).toBe(
      'Setting up chrony (4.2-2ubuntu2.1) ...\n\nCreating config file /etc/chrony/chrony.conf with new version\n\nCreating config file /etc/chrony/chrony.keys with new version\ndpkg-statoverride: warning: --update given but /var/log/chrony does not exist\nCreated symlink /etc/systemd/system/chronyd.service → /lib/systemd/system/chrony.service.\nCreated symlink /etc/systemd/system/multi-user.target.wants/chrony.service → /lib/systemd/system/chrony.service.\n',
    );
    expect((await run("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' chrony")).out).toBe('ii  chrony\n');
    expect((await run('sudo apt-get install -y -qq jq')).code).toBe(0);
    await closeLab(slow, c);
  });

  test('cut off while unpacking: the journal stays, the audit says half-installed, apt-get -f finishes', async () => {
    const ch = await openExec(c, 'sudo apt-get install -y jq');
    const done = collect(ch);
    await waitFor(() => host.machine.packages.get('jq')?.status === 'iH ', 'jq to be unpacking', 15_000);
    ch.signal('TERM');
    expect((await done).signal).toBe('SIGTERM');
    // dpkg's journal (what apt looks for) and dpkg's own audit, in dpkg 1.21's words and layout.
    expect((await run('ls /var/lib/dpkg/updates')).out).toMatch(/^(\d{4}\n)+$/);
    const audit = await run('dpkg --audit');
    expect(audit.code).toBe(0);
    const row = ' jq                   lightweight and flexible command-line JSON processor\n';
    expect(audit.out).toContain(
      'The following packages are only half installed, due to problems during\n' +
        'installation.  The installation can probably be completed by retrying it;\n' +
        `the packages can be removed using dselect or dpkg --remove:\n${row}\n`,
    );
    // As root without sudo, apt names the command plainly (debsystem.cc: "sudo " only when SUDO_USER is set).
    expect((await run('sudo env -u SUDO_USER apt-get install -y curl')).err).toBe(
      "E: dpkg was interrupted, you must manually run 'dpkg --configure -a' to correct the problem. \n",
    );
    // configure -a merges the journal; a half-installed package is not its business: it stays in the audit.
    expect((await run('sudo dpkg --configure -a')).code).toBe(0);
    expect((await run('ls /var/lib/dpkg/updates')).out).toBe('');
    expect((await run('dpkg --audit')).out).toContain(row);
    const fixed = await run('sudo apt-get -f install -y');
    expect(fixed.code).toBe(0);
    expect(fixed.out).toContain('Setting up jq (1.6-2.1ubuntu3) ...\n');
    expect(await run('dpkg --audit')).toEqual({ out: '', err: '', code: 0 });
    expect((await run("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' jq")).out).toBe('ii  jq\n');
  });
});
