/**
 * Which units a boot starts and in what order: the core static daemons, then every unit an
 * [Install] link in /etc/systemd/system/*.wants|*.requires enables, ordered by After=.
 */
import type { Systemd } from './manager.js';
import type { UnitRuntime } from './types.js';
import { unitBool, unitList } from './unit-file.js';

const BOOT_STATIC = ['systemd-journald.service', 'systemd-udevd.service', 'dbus.service', 'systemd-logind.service'];

/** Units enabled by [Install] symlinks in /etc/systemd/system/*.wants|*.requires. */
export async function enabledUnits(sd: Systemd): Promise<string[]> {
  const fs = sd.sys.shell.fsAs(0);
  const out: string[] = [];
  let dirs: string[];
  try {
    dirs = (await fs.readdir('/etc/systemd/system')).filter((d) => /\.(wants|requires)$/.test(d)).sort();
  } catch {
    return out;
  }
  for (const d of dirs) {
    for (const n of (await fs.readdir(`/etc/systemd/system/${d}`).catch(() => [] as string[])).sort())
      if (!out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * Starts what a boot starts: core static units, then enabled ones ordered by After=. `cold`: the
 * lab's initial boot — oneshots are recorded as having run at boot (the scenario set their
 * effects), daemons start.
 */
export async function bootUnits(sd: Systemd, cold: boolean): Promise<void> {
  const names = [...BOOT_STATIC, ...(await enabledUnits(sd)).filter((n) => !BOOT_STATIC.includes(n))];
  const loaded: UnitRuntime[] = [];
  for (const n of names) {
    const u = await sd.load(n);
    if (u.loadState === 'loaded') loaded.push(u);
  }
  let step = 0;
  for (const u of orderByAfter(loaded)) {
    if (u.active !== 'inactive' && u.active !== 'failed') continue;
    // The initial boot happened minutes ago: its events carry boot-time stamps.
    if (cold) sd.sys.pinTime(sd.sys.boot.at + 4200 + 137 * step++);
    if (cold && u.kind === 'service' && sd.serviceType(u) === 'oneshot') {
      const at = sd.sys.now();
      sd.log(u.name, `Starting ${u.description}...`, at);
      u.invocations++;
      if (unitBool(u.file, 'Service', 'RemainAfterExit', false)) sd.setState(u, 'active', 'exited');
      else sd.log(u.name, `${u.name}: Deactivated successfully.`, at);
      sd.log(u.name, `Finished ${u.description}.`, at);
      for (const k of ['stateChangeAt', 'activeEnterAt', 'inactiveExitAt'] as const) if (u[k] !== undefined) u[k] = at;
      continue;
    }
    try {
      await sd.start(u.name);
    } finally {
      if (cold) sd.sys.pinTime(undefined);
    }
  }
  sd.sys.pinTime(undefined);
}

/** Orders units so that each comes after the units its After= names (stable otherwise). */
function orderByAfter(units: UnitRuntime[]): UnitRuntime[] {
  const out: UnitRuntime[] = [];
  const seen = new Set<string>();
  const byName = new Map(units.map((u) => [u.name, u]));
  const visit = (u: UnitRuntime, depth: number): void => {
    if (seen.has(u.name) || depth > 50) return;
    seen.add(u.name);
    for (const a of unitList(u.file, 'Unit', 'After')) {
      const dep = byName.get(a);
      if (dep) visit(dep, depth + 1);
    }
    out.push(u);
  };
  for (const u of units) visit(u, 0);
  return out;
}
