/**
 * The seam between packages and systemd. A package's postinst enables units by symlinks in the
 * file system (what `systemctl is-enabled` reads) and starts them through the service backend;
 * its prerm stops them. The backend is the lab's systemd model once it registers itself with
 * setServiceBackend(); until then a minimal one records active units per machine, where a
 * unit a package ships with `start` counts as running from boot on.
 */
import type { IFileSystem } from 'just-bash';
import type { Machine } from '../model/types.js';
import { findVersion, versionsOf } from './archive.js';
import type { UnitSpec } from './archive-types.js';

export interface ServiceBackend {
  start(m: Machine, unit: string): Promise<void> | void;
  stop(m: Machine, unit: string): Promise<void> | void;
  isActive(m: Machine, unit: string): boolean;
}

/** Units shipped by the installed packages (the version installed, else the newest known). */
export function installedUnits(m: Machine): Array<UnitSpec & { pkg: string }> {
  const out: Array<UnitSpec & { pkg: string }> = [];
  for (const p of m.packages.values()) {
    if (p.status[1] !== 'i') continue;
    const a = findVersion(p.name, p.version) ?? versionsOf(p.name)[0];
    for (const u of a?.units ?? []) out.push({ ...u, pkg: p.name });
  }
  return out;
}

const overrides = new WeakMap<Machine, Map<string, boolean>>();

const fallback: ServiceBackend = {
  start(m, unit) {
    const o = overrides.get(m) ?? new Map<string, boolean>();
    o.set(unit, true);
    overrides.set(m, o);
  },
  stop(m, unit) {
    const o = overrides.get(m) ?? new Map<string, boolean>();
    o.set(unit, false);
    overrides.set(m, o);
  },
  isActive(m, unit) {
    const shipped = installedUnits(m).find((u) => u.name === unit);
    if (!shipped) return false;
    return overrides.get(m)?.get(unit) ?? shipped.start === true;
  },
};

let backend: ServiceBackend = fallback;

/** The lab's systemd registers itself here; package scripts then drive real unit state. */
export function setServiceBackend(b: ServiceBackend): void {
  backend = b;
}

export function serviceBackend(): ServiceBackend {
  return backend;
}

export const unitName = (u: string): string => (u.includes('.') ? u : `${u}.service`);

/** `[Install]` directives of a unit file. */
function installSection(content: string): { wantedBy: string[]; requiredBy: string[]; alias: string[] } {
  const out = { wantedBy: [] as string[], requiredBy: [] as string[], alias: [] as string[] };
  let inInstall = false;
  for (const raw of content.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('[')) inInstall = line === '[Install]';
    else if (inInstall) {
      const m = /^(WantedBy|RequiredBy|Alias)=(.*)$/.exec(line);
      if (!m) continue;
      const words = (m[2] ?? '').split(/\s+/).filter(Boolean);
      if (m[1] === 'WantedBy') out.wantedBy.push(...words);
      else if (m[1] === 'RequiredBy') out.requiredBy.push(...words);
      else out.alias.push(...words);
    }
  }
  return out;
}

/** The symlinks `systemctl enable` creates for a unit: [link path, target]. */
export function enableLinks(u: UnitSpec): Array<[path: string, target: string]> {
  const target = `/lib/systemd/system/${u.name}`;
  const inst = installSection(u.content);
  return [
    ...inst.alias.map((a): [string, string] => [`/etc/systemd/system/${a}`, target]),
    ...inst.wantedBy.map((w): [string, string] => [`/etc/systemd/system/${w}.wants/${u.name}`, target]),
    ...inst.requiredBy.map((w): [string, string] => [`/etc/systemd/system/${w}.requires/${u.name}`, target]),
  ];
}

async function exists(fs: IFileSystem, path: string): Promise<boolean> {
  try {
    await fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Creates the enable links that are missing; returns systemctl's `Created symlink …` lines. */
export async function enableUnit(fs: IFileSystem, u: UnitSpec): Promise<string[]> {
  const lines: string[] = [];
  for (const [path, target] of enableLinks(u)) {
    if (await exists(fs, path)) continue;
    await fs.mkdir(path.slice(0, path.lastIndexOf('/')), { recursive: true });
    await fs.symlink(target, path);
    lines.push(`Created symlink ${path} → ${target}.`);
  }
  return lines;
}

/** Removes a unit's enable links; returns `Removed …` lines. */
export async function disableUnit(fs: IFileSystem, u: UnitSpec): Promise<string[]> {
  const lines: string[] = [];
  for (const [path] of enableLinks(u)) {
    if (!(await exists(fs, path))) continue;
    await fs.rm(path);
    lines.push(`Removed ${path}.`);
  }
  return lines;
}
