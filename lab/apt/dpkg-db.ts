/**
 * What dpkg does to a machine: unpack (files, links, unit files; status `iU`), configure (`ii`,
 * postinst: units enabled and started), remove (prerm stops units, files go, conffiles stay as
 * `rc` until purge). Each operation returns the lines dpkg and the maintainer scripts print.
 * apt-get and `dpkg -i` drive these steps one by one so state and output advance together.
 *
 * Other parts of the lab that react to packages (kernel modules, drivers) subscribe with
 * onPackagesChanged(); scenarios that start from an installed state use installInModel().
 */
import type { IFileSystem } from 'just-bash';
import type { InstalledPackage, Machine } from '../model/types.js';
import { SYSTEM_FILES } from './archive-base.js';
import { fileOf, findVersion, qualifiedName, versionsOf } from './archive.js';
import type { ArchivePackage } from './archive-types.js';
import { disableUnit, enableUnit, serviceBackend } from './services.js';
import { aptState } from './state.js';

export interface PackageChange {
  machine: Machine;
  installed: ArchivePackage[];
  removed: Array<{ name: string; version: string; purged: boolean }>;
}

type Listener = (change: PackageChange) => void;
const listeners: Listener[] = [];

/** Called after every dpkg operation that changed the package set. */
export function onPackagesChanged(fn: Listener): void {
  listeners.push(fn);
}

function notify(change: PackageChange): void {
  for (const fn of listeners) fn(change);
}

/** The archive entry describing an installed package (its exact version, else the newest). */
export function describe(p: { name: string; version: string }): ArchivePackage | undefined {
  return findVersion(p.name, p.version) ?? versionsOf(p.name)[0];
}

/**
 * The path without the merged-/usr links (/lib -> usr/lib, /bin, /sbin, /lib64): the in-memory
 * file system does not follow a symlink in the middle of a path it creates.
 */
export function canonical(path: string): string {
  return path.replace(/^\/(lib|lib64|bin|sbin)(\/|$)/, '/usr/$1$2');
}

async function writeFile(fs: IFileSystem, path: string, content: string, mode: number): Promise<void> {
  path = canonical(path);
  await fs.mkdir(path.slice(0, path.lastIndexOf('/')) || '/', { recursive: true });
  await fs.writeFile(path, content);
  await fs.chmod(path, mode);
}

const setStatus = (m: Machine, p: ArchivePackage, abbrev: 'iH ' | 'iU ' | 'ii '): void => {
  const old = m.packages.get(p.name);
  // The selection (first letter) survives reinstalls and upgrades: a held package stays `h`.
  const want = old && old.status[0] === 'h' ? 'h' : 'i';
  const rec: InstalledPackage = { name: p.name, version: p.version, arch: p.arch, status: `${want}${abbrev[1]} ` };
  m.packages.set(p.name, rec);
  m.revision++;
};

/**
 * dpkg marks a package half-installed (`iH`) before its files land (src/main/archives.c): a run cut
 * off while unpacking leaves it so; `dpkg --configure -a` does not touch it, a reinstall finishes it.
 */
export function markHalfInstalled(m: Machine, p: ArchivePackage): void {
  setStatus(m, p, 'iH ');
}

/** dpkg --unpack: files land, the package is `iU` (unpacked, not configured). */
export async function unpack(m: Machine, fs: IFileSystem, p: ArchivePackage): Promise<void> {
  for (const [path, f] of Object.entries(p.files ?? {})) {
    const file = fileOf(f);
    // A conffile the admin already has is kept (dpkg asks only when both sides changed).
    if (file.conffile && (await fs.exists(canonical(path)))) continue;
    await writeFile(fs, path, file.content, file.mode ?? 0o644);
  }
  for (const [link, target] of Object.entries(p.links ?? {})) {
    const path = canonical(link);
    await fs.mkdir(path.slice(0, path.lastIndexOf('/')), { recursive: true });
    await fs.rm(path, { force: true });
    await fs.symlink(target, path);
  }
  for (const u of p.units ?? []) await writeFile(fs, `/lib/systemd/system/${u.name}`, u.content, 0o644);
  setStatus(m, p, 'iU ');
}

/** dpkg --configure: the postinst runs (its messages, units enabled and started); `ii`. */
export async function configure(m: Machine, fs: IFileSystem, p: ArchivePackage): Promise<string[]> {
  const kernel = m.os.kernelRelease;
  const lines = (p.setup ?? []).map((l) => l.replaceAll('{kernel}', kernel));
  for (const u of p.units ?? []) {
    if (u.enable) lines.push(...(await enableUnit(fs, u)));
  }
  setStatus(m, p, 'ii ');
  for (const u of p.units ?? []) if (u.start) await serviceBackend().start(m, u.name);
  notify({ machine: m, installed: [p], removed: [] });
  return lines;
}

/** dpkg --remove / --purge. Returns what deb-systemd-helper prints when a purge drops enable links. */
export async function removePackage(
  m: Machine,
  fs: IFileSystem,
  name: string,
  purge: boolean,
): Promise<{ purging: string[] }> {
  const rec = m.packages.get(name);
  if (!rec) return { purging: [] };
  const a = describe(rec);
  const purging: string[] = [];
  const wasInstalled = rec.status[1] !== 'c';
  if (wasInstalled) {
    for (const u of a?.units ?? []) {
      if (serviceBackend().isActive(m, u.name)) await serviceBackend().stop(m, u.name);
      await fs.rm(`/usr/lib/systemd/system/${u.name}`, { force: true });
    }
    for (const [path, f] of Object.entries(a?.files ?? {}))
      if (!fileOf(f).conffile) await fs.rm(canonical(path), { force: true });
    for (const path of Object.keys(a?.links ?? {})) await fs.rm(canonical(path), { force: true });
  }
  const conffiles = Object.entries(a?.files ?? {})
    .filter(([, f]) => fileOf(f).conffile)
    .map(([path]) => path);
  if (purge) {
    for (const path of conffiles) await fs.rm(canonical(path), { force: true });
    // deb-systemd-helper purge drops the enable links with the unit's state.
    for (const u of a?.units ?? []) purging.push(...(await disableUnit(fs, u)));
    m.packages.delete(name);
  } else if (conffiles.length > 0) {
    m.packages.set(name, { ...rec, status: 'rc ' });
  } else {
    m.packages.delete(name);
  }
  aptState(m).auto.delete(name);
  m.revision++;
  notify({ machine: m, installed: [], removed: [{ name, version: rec.version, purged: purge }] });
  return { purging };
}

/** `(Reading database ... N files and directories currently installed.)` with dpkg's progress. */
export function readingDatabase(m: Machine): string {
  let files = 70_911;
  for (const p of m.packages.values()) {
    if (p.status[1] === 'n' || p.status[1] === 'c') continue;
    const a = describe(p);
    files += a ? Math.max(3, Math.round(a.installedKb / 40)) : 0;
  }
  let s = '(Reading database ... ';
  for (let pct = 5; pct <= 100; pct += 5) s += `\r(Reading database ... ${pct}%`;
  return `${s}\r(Reading database ... ${files} files and directories currently installed.)\n`;
}

/** Versions of trigger-owning packages a minimal server has but the lab's dpkg list omits. */
const TRIGGER_OWNERS: Record<string, string> = {
  'man-db': '2.10.2-1',
  'libc-bin': '2.35-0ubuntu3.8',
  mailcap: '3.70+nmu1ubuntu1',
  'hicolor-icon-theme': '0.17-2',
};

/** `Processing triggers for …` lines (and what the trigger prints) for the packages just handled. */
export function triggerLines(m: Machine, pkgs: readonly ArchivePackage[]): string[] {
  const order = ['dbus', 'mailcap', 'hicolor-icon-theme', 'man-db', 'libc-bin', 'initramfs-tools'];
  const wanted = new Set(pkgs.flatMap((p) => p.triggers ?? []));
  const lines: string[] = [];
  for (const t of order.filter((x) => wanted.has(x))) {
    const version = m.packages.get(t)?.version ?? TRIGGER_OWNERS[t];
    if (!version) continue;
    lines.push(`Processing triggers for ${qualifiedName(t)} (${version}) ...`);
    if (t === 'initramfs-tools') lines.push(`update-initramfs: Generating /boot/initrd.img-${m.os.kernelRelease}`);
  }
  return lines;
}

/**
 * The files the installed packages put on disk (plus the installer's sources.list and
 * limits.conf), for the root file system a machine's shell starts with (fs/rootfs.ts).
 */
export function packageFiles(m: Machine): Record<string, { content: string; mode: number }> {
  const out: Record<string, { content: string; mode: number }> = {};
  for (const [path, f] of Object.entries(SYSTEM_FILES)) out[path] = { content: f.content, mode: f.mode ?? 0o644 };
  for (const p of m.packages.values()) {
    if (p.status[1] !== 'i' && p.status[1] !== 'c') continue;
    const a = describe(p);
    for (const [path, f] of Object.entries(a?.files ?? {})) {
      const file = fileOf(f);
      if (p.status[1] === 'c' && !file.conffile) continue;
      out[canonical(path)] = { content: file.content, mode: file.mode ?? 0o644 };
    }
    if (p.status[1] === 'i')
      for (const u of a?.units ?? []) out[`/usr/lib/systemd/system/${u.name}`] = { content: u.content, mode: 0o644 };
  }
  return out;
}

/**
 * Puts packages into a machine before its shell exists (scenarios): dpkg records them `ii` (and
 * `auto` ones as automatically installed); their files come with the shell's root file system
 * (packageFiles). Enable links are the systemd model's business at that point (units of
 * installed packages: services.installedUnits).
 */
export function installInModel(
  m: Machine,
  pkgs: ReadonlyArray<string | { name: string; version: string; auto?: boolean }>,
): void {
  for (const spec of pkgs) {
    const s = typeof spec === 'string' ? { name: spec, version: undefined } : spec;
    const a = s.version ? findVersion(s.name, s.version) : versionsOf(s.name)[0];
    if (!a) throw new Error(`lab apt: ${s.name}${s.version ? ` ${s.version}` : ''} is not in the lab's archive`);
    m.packages.set(a.name, { name: a.name, version: a.version, arch: a.arch, status: 'ii ' });
    if (typeof spec !== 'string' && spec.auto) aptState(m).auto.add(a.name);
  }
  m.revision++;
}
