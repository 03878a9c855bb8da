/**
 * systemd in the lab through real SSH: unit files from the file system, enable/disable links,
 * oneshot units running their script through the interpreter (and changing the machine), the
 * "changed on disk" warning until daemon-reload, failures and their Result=, long-running
 * service programs with processes and limits, systemd-run services and timers on the simulated
 * clock, journalctl, and the polkit refusal without sudo.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab, LabHost } from '../../lab/index.js';
import { registerServiceProgram } from '../../lab/system/systemd/programs.js';
import { closeLab, openLab, sh, waitFor, type TextResult } from './helpers.js';

let lab: Lab;
let host: LabHost;
let conn: Client;

// A daemon for these tests: a main process with a worker child, logging once a second.
registerServiceProgram({
  name: 'test-daemon',
  matches: (argv) => argv[0] === '/opt/test/bin/daemon',
  async run(ctx) {
    ctx.spawn(['/opt/test/bin/daemon-worker', '--id', '1']);
    await ctx.out(`daemon up with ${ctx.argv.slice(1).join(' ')}\n`);
    ctx.ready();
    if (ctx.argv.includes('--crash')) return 2;
    while (await ctx.idle(1000)) await ctx.out('tick\n');
    await ctx.out('daemon stopping\n');
    return 0;
  },
});

const run = (command: string, stdin?: string): Promise<TextResult> => sh(conn, command, stdin);

async function installFile(path: string, content: string, mode = '644'): Promise<void> {
  const r = await run(`sudo -n -- install -D -m ${mode} -o root -g root /dev/stdin ${path}`, content);
  expect(r).toEqual({ out: '', err: '', code: 0 });
}

beforeAll(async () => {
  ({ lab, host, conn } = await openLab());
});

afterAll(() => closeLab(lab, conn));

const QOS_UNIT = `[Unit]
Description=L20 RoCE QoS
After=network-online.target openibd.service
Wants=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/sbin/l20-test-oneshot

[Install]
WantedBy=multi-user.target
`;

describe('systemd units', () => {
  test('a oneshot unit runs its script through the shell and stays active (exited)', async () => {
    await installFile(
      '/usr/local/sbin/l20-test-oneshot',
      '#!/bin/sh\nset -e\necho "configured $(hostname)"\necho done > /var/lib/l20-oneshot.state\n',
      '755',
    );
    await installFile('/etc/systemd/system/l20-test-oneshot.service', QOS_UNIT);
    expect(await run('LC_ALL=C systemctl is-enabled l20-test-oneshot.service')).toEqual({
      out: 'disabled\n',
      err: '',
      code: 1,
    });
    expect(await run('sudo systemctl daemon-reload')).toEqual({ out: '', err: '', code: 0 });
    expect(await run('sudo -n -- env LC_ALL=C systemctl enable l20-test-oneshot.service')).toEqual({
      out: '',
      code: 0,
      err: 'Created symlink /etc/systemd/system/multi-user.target.wants/l20-test-oneshot.service -> /etc/systemd/system/l20-test-oneshot.service.\n',
    });
    expect((await run('systemctl is-enabled l20-test-oneshot.service')).out).toBe('enabled\n');
    expect(await run('sudo systemctl restart l20-test-oneshot.service')).toEqual({ out: '', err: '', code: 0 });
    expect((await run('cat /var/lib/l20-oneshot.state')).out).toBe('done\n');
    expect(await run('systemctl show -p ActiveState,Result l20-test-oneshot.service')).toEqual({
      out: 'Result=success\nActiveState=active\n',
      err: '',
      code: 0,
    });
    expect((await run('systemctl show -p SubState --value l20-test-oneshot')).out).toBe('exited\n');
    expect((await run('systemctl is-active l20-test-oneshot')).out).toBe('active\n');
    const status = await run('systemctl status l20-test-oneshot.service');
    expect(status.code).toBe(0);
    expect(status.out).toMatch(
      /^● l20-test-oneshot\.service - L20 RoCE QoS\n {5}Loaded: loaded \(\/etc\/systemd\/system\/l20-test-oneshot\.service; enabled; vendor preset: enabled\)\n {5}Active: active \(exited\) since Mon 2025-01-06 09:\d\d:\d\d UTC; [^\n]+ ago\n {4}Process: (\d+) ExecStart=\/usr\/local\/sbin\/l20-test-oneshot \(code=exited, status=0\/SUCCESS\)\n {3}Main PID: \1 \(code=exited, status=0\/SUCCESS\)\n/,
    );
    expect((await run('journalctl -u l20-test-oneshot.service -o cat -n 3 --no-pager')).out).toMatch(
      /^-- Journal begins at [^\n]+ --\nStarting L20 RoCE QoS\.\.\.\nconfigured l20-n1\nFinished L20 RoCE QoS\.\n$/,
    );
  });

  test('an edited unit file is used only after daemon-reload', async () => {
    await installFile(
      '/etc/systemd/system/l20-test-oneshot.service',
      QOS_UNIT.replace('L20 RoCE QoS', 'L20 RoCE QoS v2'),
    );
    const warned = await run('sudo systemctl restart l20-test-oneshot.service');
    expect(warned.err).toBe(
      "Warning: The unit file, source configuration file or drop-ins of l20-test-oneshot.service changed on disk. Run 'systemctl daemon-reload' to reload units.\n",
    );
    expect((await run('systemctl show -p Description --value l20-test-oneshot')).out).toBe('L20 RoCE QoS\n');
    await run('sudo systemctl daemon-reload');
    expect((await run('sudo systemctl restart l20-test-oneshot.service')).err).toBe('');
    expect((await run('systemctl show -p Description --value l20-test-oneshot')).out).toBe('L20 RoCE QoS v2\n');
  });

  test('a failing oneshot: the job fails, the unit is failed with Result=exit-code', async () => {
    await installFile('/usr/local/sbin/l20-test-fail', '#!/bin/sh\necho "cannot configure" >&2\nexit 3\n', '755');
    await installFile(
      '/etc/systemd/system/l20-test-fail.service',
      '[Unit]\nDescription=Failing test unit\n\n[Service]\nType=oneshot\nExecStart=/usr/local/sbin/l20-test-fail\n',
    );
    expect(await run('sudo systemctl start l20-test-fail.service')).toEqual({
      out: '',
      code: 1,
      err: 'Job for l20-test-fail.service failed because the control process exited with error code.\nSee "systemctl status l20-test-fail.service" and "journalctl -xeu l20-test-fail.service" for details.\n',
    });
    expect(await run('systemctl is-failed l20-test-fail')).toEqual({ out: 'failed\n', err: '', code: 0 });
    expect(await run('systemctl is-active l20-test-fail')).toEqual({ out: 'failed\n', err: '', code: 3 });
    expect((await run('systemctl show -p Result,ExecMainStatus --value l20-test-fail')).out).toBe('exit-code\n3\n');
    const status = await run('LC_ALL=C systemctl status l20-test-fail');
    expect(status.code).toBe(3);
    expect(status.out).toMatch(
      /^x l20-test-fail\.service - Failing test unit\n[^\n]*\n {5}Active: failed \(Result: exit-code\) since /,
    );
    expect((await run('journalctl -u l20-test-fail -o cat')).out).toContain(
      "cannot configure\nl20-test-fail.service: Main process exited, code=exited, status=3/NOTIMPLEMENTED\nl20-test-fail.service: Failed with result 'exit-code'.\nFailed to start Failing test unit.\n",
    );
    expect((await run('systemctl is-enabled l20-test-fail')).out).toBe('static\n');
    await run('sudo systemctl reset-failed l20-test-fail');
    expect((await run('systemctl is-active l20-test-fail')).out).toBe('inactive\n');
  });

  test('unknown units, and verbs that need root', async () => {
    expect(await run('systemctl status nope.service')).toEqual({
      out: '',
      err: 'Unit nope.service could not be found.\n',
      code: 4,
    });
    expect(await run('systemctl is-active nope')).toEqual({ out: 'inactive\n', err: '', code: 3 });
    expect(await run('systemctl is-enabled nope')).toEqual({
      out: '',
      err: 'Failed to get unit file state for nope.service: No such file or directory\n',
      code: 1,
    });
    expect(await run('systemctl show -p LoadState,ActiveState nope')).toEqual({
      out: 'ActiveState=inactive\nLoadState=not-found\n'.split('\n').reverse().filter(Boolean).join('\n') + '\n',
      err: '',
      code: 0,
    });
    expect(await run('systemctl restart ssh')).toEqual({
      out: '',
      code: 1,
      err: "Failed to restart ssh.service: Interactive authentication required.\nSee system logs and 'systemctl status ssh.service' for details.\n",
    });
    expect(await run('systemctl daemon-reload')).toEqual({
      out: '',
      err: 'Failed to reload daemon: Interactive authentication required.\n',
      code: 1,
    });
    expect((await run('sudo systemctl enable nope')).err).toBe(
      'Failed to enable unit: Unit file nope.service does not exist.\n',
    );
  });

  test('a long-running service: processes, limits, stop, restart on failure', async () => {
    await installFile(
      '/etc/systemd/system/l20-test-daemon.service',
      `[Unit]
Description=Test daemon

[Service]
Environment=MODE=serve
ExecStart=/opt/test/bin/daemon --mode \${MODE}
LimitMEMLOCK=infinity
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
`,
    );
    expect(await run('sudo systemctl enable --now l20-test-daemon')).toEqual({
      out: '',
      code: 0,
      err: 'Created symlink /etc/systemd/system/multi-user.target.wants/l20-test-daemon.service → /etc/systemd/system/l20-test-daemon.service.\n',
    });
    const pids = (await run('pgrep -f /opt/test/bin/daemon')).out.trim().split('\n');
    expect(pids).toHaveLength(2);
    const main = (await run('systemctl show -p MainPID --value l20-test-daemon')).out.trim();
    expect((await run('pgrep -o -f /opt/test/bin/daemon')).out.trim()).toBe(main);
    expect((await run('pgrep -n -f /opt/test/bin/daemon')).out.trim()).not.toBe(main);
    expect((await run(`grep 'Max locked memory' /proc/${main}/limits`)).out).toBe(
      'Max locked memory         unlimited            unlimited            bytes     \n',
    );
    expect((await run(`ps -o pid=,args= -p ${main}`)).out).toBe(
      `${main.padStart(7)} /opt/test/bin/daemon --mode serve\n`,
    );
    const status = (await run('systemctl status l20-test-daemon')).out;
    expect(status).toContain(`   Main PID: ${main} (daemon)\n`);
    expect(status).toMatch(
      / {5}CGroup: \/system\.slice\/l20-test-daemon\.service\n {13}├─\d+ \/opt\/test\/bin\/daemon --mode serve\n {13}└─\d+ \/opt\/test\/bin\/daemon-worker --id 1\n/,
    );
    await host.machine.clock.advance(3000);
    expect((await run('journalctl -u l20-test-daemon -o cat -q')).out).toBe(
      'Started Test daemon.\ndaemon up with --mode serve\ntick\ntick\ntick\n',
    );

    // SIGKILL to the main process: Restart=on-failure brings it back with a new PID.
    expect(await run(`sudo kill -9 ${main}`)).toEqual({ out: '', err: '', code: 0 });
    await waitFor(
      () => host.machine.system.systemd.units.get('l20-test-daemon.service')?.sub === 'auto-restart',
      'the restart to be scheduled',
    );
    await host.machine.clock.advance(5000);
    await waitFor(
      () => host.machine.system.systemd.units.get('l20-test-daemon.service')?.sub === 'running',
      'the service to run again',
    );
    expect((await run('systemctl show -p NRestarts,MainPID --value l20-test-daemon')).out).not.toContain(`\n${main}\n`);
    expect((await run('systemctl show -p NRestarts --value l20-test-daemon')).out).toBe('1\n');
    expect((await run('journalctl -u l20-test-daemon -o cat -q')).out).toContain(
      'l20-test-daemon.service: Main process exited, code=killed, status=9/KILL\n',
    );

    expect(await run('sudo systemctl stop l20-test-daemon')).toEqual({ out: '', err: '', code: 0 });
    expect((await run('pgrep -f /opt/test/bin/daemon')).code).toBe(1);
    expect((await run('systemctl is-active l20-test-daemon')).out).toBe('inactive\n');
    expect((await run('journalctl -u l20-test-daemon -o cat -q -n 4')).out).toBe(
      'Stopping Test daemon...\ndaemon stopping\nl20-test-daemon.service: Deactivated successfully.\nStopped Test daemon.\n',
    );
    expect((await run('sudo systemctl disable l20-test-daemon')).err).toBe(
      'Removed /etc/systemd/system/multi-user.target.wants/l20-test-daemon.service.\n',
    );
  });

  test('systemd-run: a transient service logging to a file, collected when done', async () => {
    const r = await run(
      "sudo systemd-run --unit=l20-step-x1 --collect -p StandardOutput=append:/var/log/l20-step.log -p StandardError=inherit /bin/sh -c 'echo one; echo two >&2; exit 0'",
    );
    expect(r).toEqual({ out: '', err: 'Running as unit: l20-step-x1.service\n', code: 0 });
    await waitFor(
      () => !host.machine.system.systemd.units.has('l20-step-x1.service'),
      'the transient unit to finish and be collected',
    );
    expect((await run('cat /var/log/l20-step.log')).out).toBe('one\ntwo\n');
    expect((await run('systemctl status l20-step-x1')).code).toBe(4);
    expect((await run('systemd-run /bin/true')).err).toBe(
      'Failed to start transient service unit: Interactive authentication required.\n',
    );
  });

  test('systemd-run --on-active: a timer on the simulated clock, started early or disarmed', async () => {
    await installFile(
      '/usr/local/sbin/l20-test-rollback',
      '#!/bin/sh\necho "$(date -Is) rolled back run $1" >> /var/log/l20-rollback.log\n',
      '755',
    );
    const arm = (id: string): Promise<{ out: string; err: string; code: number | null }> =>
      run(
        `sudo systemd-run --unit=l20-rb-${id} --on-active=180 --timer-property=AccuracySec=1s /usr/local/sbin/l20-test-rollback ${id}`,
      );
    expect(await arm('a')).toEqual({
      out: '',
      err: 'Running timer as unit: l20-rb-a.timer\nWill run service as unit: l20-rb-a.service\n',
      code: 0,
    });
    expect((await run('systemctl is-active l20-rb-a.timer')).out).toBe('active\n');
    const timers = (await run('systemctl list-timers')).out;
    expect(timers).toMatch(/^NEXT +LEFT +LAST +PASSED +UNIT +ACTIVATES\n/);
    expect(timers).toMatch(
      /\nMon 2025-01-06 09:\d\d:\d\d UTC 2min 5\ds left +n\/a +n\/a +l20-rb-a\.timer +l20-rb-a\.service\n/,
    );
    await host.machine.clock.advance(181_000);
    await waitFor(() => host.machine.system.systemd.units.get('l20-rb-a.timer') === undefined, 'the timer to elapse');
    await waitFor(() => !host.machine.system.systemd.units.has('l20-rb-a.service'), 'the service to finish');
    expect((await run('cat /var/log/l20-rollback.log')).out).toMatch(
      /^2025-01-06T09:\d\d:\d\d\+00:00 rolled back run a\n$/,
    );

    // Started at once while armed; then disarmed: it does not fire again.
    await arm('b');
    expect((await run('sudo systemctl start l20-rb-b.service')).code).toBe(0);
    await waitFor(
      () => host.machine.system.systemd.units.get('l20-rb-b.service')?.active === 'inactive',
      'the early run to end',
    );
    expect(await run('sudo systemctl stop l20-rb-b.timer')).toEqual({ out: '', err: '', code: 0 });
    await host.machine.clock.advance(200_000);
    expect((await run('grep -c "run b" /var/log/l20-rollback.log')).out).toBe('1\n');
    expect((await run('systemctl list-timers')).out).not.toContain('l20-rb-b');
  });
});
