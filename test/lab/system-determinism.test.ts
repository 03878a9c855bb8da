/**
 * Same seed, same commands, same bytes: two labs at speed 'max' print identical process tables,
 * unit states, journal lines, timestamps and boot ids — also across a reboot.
 */
import { describe, expect, test } from 'vitest';
import { startLab, type LabHost } from '../../lab/index.js';
import { connect, end, exec, text, waitFor } from './helpers.js';

const COMMANDS = [
  'ps -eo pid,user,args',
  'date +%s.%N; uptime',
  'sudo systemd-run --unit=l20-det --collect /bin/sh -c "echo determinism"',
  'sudo systemctl enable --now cron; systemctl status ssh cron',
  'journalctl -o short-iso --no-pager',
  'cat /proc/sys/kernel/random/boot_id; sudo dmesg',
];

async function transcript(seed: number): Promise<string> {
  const lab = await startLab({ speed: 'max', seed });
  try {
    const host = lab.hosts[0] as LabHost;
    let out = '';
    let c = await connect(lab, host);
    for (const cmd of COMMANDS) out += `$ ${cmd}\n${JSON.stringify(text(await exec(c, cmd)))}\n`;
    await exec(c, 'sudo reboot');
    await waitFor(
      () => host.machine.system.boot.count === 1 && host.machine.system.boot.power === 'up',
      'the reboot',
      20_000,
    );
    c = await connect(lab, host);
    for (const cmd of COMMANDS) out += `$ ${cmd}\n${JSON.stringify(text(await exec(c, cmd)))}\n`;
    await end(c);
    return out;
  } finally {
    await lab.close();
  }
}

describe('determinism', () => {
  test('two labs with one seed print the same bytes; another seed differs', async () => {
    const a = await transcript(7);
    const b = await transcript(7);
    expect(b).toBe(a);
    expect(a).toContain('determinism');
    const other = await transcript(8);
    expect(other).not.toBe(a);
  });
});
