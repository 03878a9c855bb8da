/**
 * Transient units outlive the client that made them, as under systemd: an OpenSSH client that armed a
 * `systemd-run --on-active=` timer and started a `systemd-run --wait` service is killed with SIGKILL;
 * the service runs to its end, the timer keeps waiting (systemctl list-timers, is-active from a new
 * connection) and fires when the lab's clock reaches it (real time here: speed 1). The crash journal's
 * stale-timer handling (test/reliability/kill-armed.test.ts) relies on exactly this.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { shellOn } from './helpers.js';

/** Polls an async condition (the next look follows the last answer) until it holds. */
async function until(cond: () => boolean | Promise<boolean>, what: () => string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 20)); // between looks, not a fixed wait
  }
}

describe('a timer armed by a killed client', () => {
  let t: LabTarget;
  beforeAll(async () => {
    // Real time: the service's sleep and the timer's window pass as they would on a host (a few seconds).
    t = await labTarget({ scenario: 'fresh', speed: 1 });
  }, 60_000);
  afterAll(() => t?.close());

  it('still waits after SIGKILL of the ssh client, fires on the lab clock; the --wait service ends alone', async () => {
    const h = t.lab.hosts[0]!;
    const log = '/var/log/l20-kill-probe.log';
    const remote = [
      'sudo systemd-run --unit=l20-kill-probe --on-active=8 --timer-property=AccuracySec=1s ' +
        `/bin/sh -c 'echo fired >> ${log}'`,
      `sudo systemd-run --unit=l20-kill-apply --wait /bin/sh -c 'sleep 2; echo applied >> ${log}'`,
    ].join(' && ');
    const ssh = spawn(
      'ssh',
      [
        '-i',
        t.identityFile,
        '-o',
        `UserKnownHostsFile=${t.knownHostsFile}`,
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        'BatchMode=yes',
        '-o',
        'IdentitiesOnly=yes',
        '-F',
        '/dev/null',
        '-p',
        String(h.port),
        `${h.user}@${h.address}`,
        remote,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    ssh.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((r) => ssh.once('exit', (_c, s) => r(s)));
    ssh.once('error', (e) => {
      throw new Error(`ssh (package openssh-client) could not be started: ${e.message}`);
    });
    // The lab's systemd-run prints its lines when it returns: the unit's state tells when the client waits on it.
    const sd = h.machine.system.systemd;
    const running = () => sd.units.get('l20-kill-apply.service')?.active === 'active';
    await until(
      () => running() || ssh.exitCode !== null,
      () => `ssh to arm the timer and start the service: ${err}`,
    );
    expect(ssh.exitCode, err).toBeNull();
    ssh.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    expect(await shellOn(t, 0, 'systemctl is-active l20-kill-probe.timer')).toBe('active\n');
    const timers = await shellOn(t, 0, 'systemctl list-timers --all');
    expect(timers).toMatch(/l20-kill-probe\.timer +l20-kill-probe\.service/);
    const logged = () => shellOn(t, 0, `sudo cat ${log} 2>/dev/null`);
    await until(
      async () => (await logged()) === 'applied\n',
      () => 'the --wait service to end on its own',
    );
    await until(
      async () => (await logged()) === 'applied\nfired\n',
      () => 'the timer to fire',
    );
    expect(await shellOn(t, 0, 'systemctl list-timers --all')).not.toContain('l20-kill-probe');
  }, 60_000);
});
