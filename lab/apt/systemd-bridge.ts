/**
 * Packages meet the lab's systemd (system/systemd): maintainer scripts start and stop units
 * through it (after the daemon-reload dh_installsystemd's snippets do), the daemons the archive's
 * packages ship are service programs, and at the lab's initial boot the units of packages a
 * scenario installed get the enable links their postinst would have made, so they start as on a
 * server that has been running since the install.
 */
import type { Machine } from '../model/types.js';
import { registerBootHook } from '../system/boot.js';
import { daemonProgram, registerServiceProgram } from '../system/systemd/programs.js';
import { enableUnit, installedUnits, setServiceBackend } from './services.js';

setServiceBackend({
  async start(m: Machine, unit: string) {
    await m.system.systemd.reload();
    await m.system.systemd.start(unit);
  },
  async stop(m: Machine, unit: string) {
    await m.system.systemd.stop(unit);
  },
  isActive(m: Machine, unit: string) {
    return m.system.systemd.units.get(unit)?.active === 'active';
  },
});

// Daemons of the archive's packages (chrony keeps a second process, as chronyd does after fork).
registerServiceProgram(daemonProgram('chronyd', ['/usr/sbin/chronyd'], { children: (argv) => [[...argv]] }));
registerServiceProgram(
  daemonProgram('lldpd', ['/usr/sbin/lldpd'], { children: () => [['lldpd: monitor.'], ['lldpd: no neighbor.']] }),
);
registerServiceProgram(
  daemonProgram('ntpd', ['/usr/lib/ntp/ntp-systemd-wrapper'], {
    children: () => [['/usr/sbin/ntpd', '-p', '/var/run/ntpd.pid', '-g', '-u', '113:120']],
  }),
);

registerBootHook(
  'kernel',
  'apt-package-units',
  async ({ machine: m, system }) => {
    const rootFs = system.shell.fsAs(0);
    for (const u of installedUnits(m)) if (u.enable) await enableUnit(rootFs, u);
  },
  { cold: true },
);
