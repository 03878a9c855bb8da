/**
 * Rebooting a lab host over SSH: the session ends with the connection, the port refuses
 * connections while the machine boots, and it comes back with a new boot id, its persisted
 * configuration applied (modules-load.d, enabled units) and its runtime state gone (modules loaded
 * by hand, /run, /tmp, processes), boot hooks having run.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLab, type Lab, type LabHost } from '../../lab/index.js';
import { registerBootHook } from '../../lab/system/boot.js';
import { collect, connect, end, openExec, sh, waitFor } from './helpers.js';

let lab: Lab;
let host: LabHost;

const hookCalls: string[] = [];
registerBootHook('shutdown', 'lab-test', ({ machine, cold }) => {
  hookCalls.push(`shutdown ${machine.hostname} cold=${cold}`);
});
registerBootHook('modules', 'lab-test', ({ machine }) => {
  hookCalls.push(`modules ${machine.hostname} dummy=${machine.modules.includes('dummy')}`);
});

beforeAll(async () => {
  // 90 s of boot at speed 45: about two seconds of refused connections.
  lab = await startLab({ speed: 45 });
  host = lab.hosts[0] as LabHost;
});

afterAll(() => lab.close());

describe('reboot', () => {
  test('non-root callers are refused', async () => {
    const c = await connect(lab, host);
    expect(await sh(c, 'reboot')).toEqual({
      out: '',
      code: 1,
      err: 'Failed to set wall message, ignoring: Interactive authentication required.\nFailed to reboot system via logind: Interactive authentication required.\nFailed to open initctl fifo: Permission denied\nFailed to talk to init daemon.\n',
    });
    expect((await sh(c, 'systemctl reboot')).err).toContain(
      'Failed to reboot system via logind: Interactive authentication required.\n',
    );
    await end(c);
  });

  test('sudo reboot: the session drops, SSH is refused while booting, the machine comes back', async () => {
    const c = await connect(lab, host);
    await sh(c, 'sudo install -D -m 644 /dev/stdin /etc/modules-load.d/lab.conf', '# lab test\ndummy\n');
    await sh(
      c,
      'sudo install -D -m 755 /dev/stdin /usr/local/sbin/l20-boot-seen',
      '#!/bin/sh\ncat /proc/sys/kernel/random/boot_id > /var/lib/l20-boot.seen\n',
    );
    await sh(
      c,
      'sudo install -D -m 644 /dev/stdin /etc/systemd/system/l20-boot-seen.service',
      '[Unit]\nDescription=Record the boot id\n\n[Service]\nType=oneshot\nExecStart=/usr/local/sbin/l20-boot-seen\n\n[Install]\nWantedBy=multi-user.target\n',
    );
    expect((await sh(c, 'sudo systemctl enable l20-boot-seen.service')).code).toBe(0);
    await sh(c, 'sudo modprobe rdma_ucm; touch /tmp/scratch; sudo touch /run/l20-runtime');
    const oldBoot = (await sh(c, 'cat /proc/sys/kernel/random/boot_id')).out;
    expect(oldBoot).toMatch(/^[0-9a-f-]{36}\n$/);

    const ch = await openExec(c, 'sudo reboot');
    const closedConn = new Promise<void>((resolve) => c.once('close', () => resolve()));
    const r = await collect(ch);
    // The connection went away under the command: no exit status.
    expect(r.code).toBeNull();
    expect(r.signal).toBeNull();
    await closedConn;
    await waitFor(() => host.machine.system.boot.power === 'down', 'the host to go down');
    await expect(connect(lab, host)).rejects.toThrow(/ECONNREFUSED/);

    await waitFor(() => host.machine.system.boot.power === 'up', 'the host to boot', 30_000);
    const c2 = await connect(lab, host);
    const newBoot = (await sh(c2, 'cat /proc/sys/kernel/random/boot_id')).out;
    expect(newBoot).toMatch(/^[0-9a-f-]{36}\n$/);
    expect(newBoot).not.toBe(oldBoot);
    expect((await sh(c2, 'cat /var/lib/l20-boot.seen')).out).toBe(newBoot);
    expect((await sh(c2, 'systemctl show -p ActiveState,Result --value l20-boot-seen')).out).toBe(
      'success\ninactive\n',
    );
    const lsmod = (await sh(c2, 'lsmod')).out;
    expect(lsmod).toMatch(/\ndummy +16384 {2}0\n/);
    expect(lsmod).not.toContain('rdma_ucm');
    expect((await sh(c2, 'ls /tmp/scratch /run/l20-runtime')).code).not.toBe(0);
    expect((await sh(c2, 'uptime -p')).out).toMatch(/^up [0-9]+ minutes?\n$/);
    const newSshd = (await sh(c2, 'pgrep -x sshd')).out;
    expect(newSshd).toMatch(/^\d+\n$/);
    expect((await sh(c2, 'systemctl is-active ssh cron')).out).toBe('active\nactive\n');
    // The journal is persistent: the earlier boot's entries stay, -b shows this boot's only.
    const all = (await sh(c2, 'journalctl -u ssh -o short --no-pager')).out;
    expect(all.match(/^-- Boot [0-9a-f]{32} --$/gm)).toEqual([`-- Boot ${newBoot.trim().replace(/-/g, '')} --`]);
    expect((await sh(c2, 'journalctl -b -u ssh -o cat -q')).out).toBe(
      'Starting OpenBSD Secure Shell server...\nStarted OpenBSD Secure Shell server.\n',
    );
    expect(hookCalls).toEqual(['shutdown l20-n1 cold=false', 'modules l20-n1 dummy=true']);
    // The other host never went down.
    expect(lab.hosts[1]?.machine.system.boot.count).toBe(0);
    await end(c2);
  });

  test('sudo systemctl reboot through the transport: the run fails as the connection is lost', async () => {
    const { hostsFromConfig, labInventory } = await import('../../src/target.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'l20-reboot-'));
    const { config } = labInventory(lab, dir);
    const [h] = hostsFromConfig(config);
    try {
      const before = (await h!.run({ argv: ['cat', '/proc/sys/kernel/random/boot_id'] })).stdout;
      await expect(h!.run({ argv: ['systemctl', 'reboot'] }, { sudo: true })).rejects.toThrow(/connection|closed/i);
      await waitFor(
        () => host.machine.system.boot.power === 'up' && host.machine.system.boot.count === 2,
        'the second boot',
        30_000,
      );
      const after = (await h!.run({ argv: ['cat', '/proc/sys/kernel/random/boot_id'] })).stdout;
      expect(after).not.toBe(before);
    } finally {
      await h!.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
