/**
 * The system layer's commands. Tools (with the dpkg packages that ship them, so they come and go
 * like every other modelled command) for systemd, kmod, util-linux and procps; and shell-level
 * commands that replace just-bash built-ins or are bash builtins (stat, install, chown, chmod, dd,
 * kill), which every machine has.
 */
import type { Command } from 'just-bash';
import type { Machine } from '../model/types.js';
import { fail } from '../shell/args.js';
import type { Tool } from '../tools/types.js';
import { reboot, requestReboot } from './boot.js';
import { fileCommands } from './file-commands.js';
import { KMOD_TOOLS } from './kmod-commands.js';
import { PROC_TOOLS, killCommand } from './proc-commands.js';
import { journalctl } from './systemd/journalctl.js';
import { systemctl } from './systemd/systemctl.js';
import { systemdRun } from './systemd/systemd-run.js';
import { systemdTime } from './journal.js';
import { parseTimespan } from './systemd/unit-file.js';

const systemctlTool: Tool = {
  name: 'systemctl',
  path: '/usr/bin/systemctl',
  packages: ['systemd'],
  run: (args, { machine, ctx, root }) => systemctl(machine.system, args, ctx, root),
};
const systemdRunTool: Tool = {
  name: 'systemd-run',
  path: '/usr/bin/systemd-run',
  packages: ['systemd'],
  run: (args, { machine, ctx, root }) => systemdRun(machine.system, args, ctx, root),
};
const journalctlTool: Tool = {
  name: 'journalctl',
  path: '/usr/bin/journalctl',
  packages: ['systemd'],
  run: (args, { machine, ctx }) => journalctl(machine.system, args, ctx),
};

/** What systemd 249's reboot/shutdown print to a non-root caller over SSH (no polkit agent). */
const NOT_ROOT = (what: string): string =>
  `Failed to set wall message, ignoring: Interactive authentication required.\nFailed to ${what} system via logind: Interactive authentication required.\nFailed to open initctl fifo: Permission denied\nFailed to talk to init daemon.\n`;

const rebootTool: Tool = {
  name: 'reboot',
  path: '/usr/sbin/reboot',
  packages: ['systemd-sysv'],
  run: (_args, { machine, ctx, root }) => (root ? requestReboot(machine.system, ctx) : fail(1, NOT_ROOT('reboot'))),
};

/** shutdown -r now|+M|hh:mm: now reboots at once, later times arm a timer; -c cancels. */
const pendingShutdown = new WeakMap<Machine, { cancel(): void }>();
const shutdownTool: Tool = {
  name: 'shutdown',
  path: '/usr/sbin/shutdown',
  packages: ['systemd-sysv'],
  run(args, { machine: m, ctx, root }) {
    const cancel = args.includes('-c');
    const rebootFlag = args.some((a) => a === '-r' || a === '--reboot');
    const when = args.find((a) => !a.startsWith('-')) ?? '+1';
    if (!root) return fail(1, NOT_ROOT(rebootFlag ? 'reboot' : 'power off'));
    if (cancel) {
      pendingShutdown.get(m)?.cancel();
      pendingShutdown.delete(m);
      return { stdout: '', stderr: '', exitCode: 0 };
    }
    if (!rebootFlag)
      return fail(
        1,
        'l20-setup lab: only `shutdown -r` (reboot) is modelled; a powered-off lab host would never come back\n',
      );
    let delayMs: number | undefined;
    if (when === 'now' || when === '+0') delayMs = 0;
    else if (/^\+\d+$/.test(when)) delayMs = Number(when.slice(1)) * 60000;
    else if (/^\d{1,2}:\d{2}$/.test(when)) {
      const [h, mi] = when.split(':').map(Number) as [number, number];
      const now = new Date(m.clock.now());
      let t = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), h, mi);
      if (t <= now.getTime()) t += 86400000;
      delayMs = t - now.getTime();
    } else delayMs = parseTimespan(when);
    if (delayMs === undefined) return fail(1, `Failed to parse time specification: ${when}\n`);
    if (delayMs === 0) return requestReboot(m.system, ctx);
    const due = m.clock.now() + delayMs;
    pendingShutdown.get(m)?.cancel();
    const timer = m.clock.at(due, () => {
      pendingShutdown.delete(m);
      void reboot(m.system);
    });
    pendingShutdown.set(m, timer);
    return {
      stdout: '',
      stderr: `Shutdown scheduled for ${systemdTime(due)}, use 'shutdown -c' to cancel.\n`,
      exitCode: 0,
    };
  },
};

/** Tools to list in tools/index.ts TOOLS. */
export const SYSTEM_TOOLS: readonly Tool[] = [
  systemctlTool,
  systemdRunTool,
  journalctlTool,
  rebootTool,
  shutdownTool,
  ...KMOD_TOOLS,
  ...PROC_TOOLS,
];

/** Commands every machine's shell has (shell.ts registers them with its core commands). */
export function systemCommands(m: Machine): Command[] {
  return [...fileCommands(m), killCommand(m)];
}
