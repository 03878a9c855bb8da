/**
 * apt's view of one machine: its bookkeeping (Machine.apt), the package versions it can see —
 * those of repositories that a sources line enables and whose index `apt-get update` fetched —
 * and candidates (the highest visible version; apt's default pins are all 500).
 */
import type { IFileSystem } from 'just-bash';
import type { AptState, InstalledPackage, Machine } from '../model/types.js';
import { providersOf, versionsOf } from './archive.js';
import type { ArchivePackage } from './archive-types.js';
import { lineCovers, readSources, type RepoId, type SourceLine } from './repos.js';
import { satisfies, type Relation } from './version.js';

/** The Ubuntu pockets a fresh install has indices for (fetched by the installer). */
const INSTALLER_LISTS: RepoId[] = ['jammy', 'jammy-updates', 'jammy-backports', 'jammy-security'];

export function aptState(m: Machine): AptState {
  m.apt ??= { lists: new Set(INSTALLER_LISTS), fresh: new Set(), auto: new Set(), nextSystemId: 112 };
  return m.apt;
}

/**
 * dpkg's journal (dpkg(1) FILES, lib/dpkg/dbmodify.c): each status change is first written to
 * /var/lib/dpkg/updates/NNNN and merged into `status` when the run ends. A run cut off leaves those
 * files; apt then refuses to start ("dpkg was interrupted"; debsystem.cc CheckUpdates: any file whose
 * name is all digits), until a dpkg run that writes the database (`dpkg --configure -a`) merges them.
 */
export const DPKG_UPDATES_DIR = '/var/lib/dpkg/updates';

/** The journal entries a cut-off dpkg run left (file names, all digits). */
export async function dpkgJournal(fs: IFileSystem): Promise<string[]> {
  if (!(await fs.exists(DPKG_UPDATES_DIR))) return [];
  return (await fs.readdir(DPKG_UPDATES_DIR)).filter((n) => /^\d+$/.test(n)).sort();
}

/**
 * What a dpkg run killed mid-way leaves behind: the status entries of the packages it was changing. dpkg
 * wrote them before the signal; they are written here through the machine's root file system, since the
 * killed command's own view refuses writes once it is aborted.
 */
export async function leaveDpkgJournal(m: Machine, names: readonly string[]): Promise<void> {
  const fs = m.system.shell.fsAs(0);
  await fs.mkdir(DPKG_UPDATES_DIR, { recursive: true });
  const start = (await dpkgJournal(fs)).length;
  const words: Record<string, string> = { U: 'unpacked', H: 'half-installed', F: 'half-configured', i: 'installed' };
  for (const [i, name] of names.entries()) {
    const rec = m.packages.get(name);
    if (!rec) continue;
    const status = `install ok ${words[rec.status[1] ?? 'U'] ?? 'unpacked'}`;
    const stanza = `Package: ${name}\nStatus: ${status}\nArchitecture: ${rec.arch}\nVersion: ${rec.version}\n\n`;
    await fs.writeFile(`${DPKG_UPDATES_DIR}/${String(start + i).padStart(4, '0')}`, stanza);
  }
}

/** A dpkg run that opens the database for writing merges the journal into `status`. */
export async function mergeDpkgJournal(fs: IFileSystem): Promise<void> {
  for (const n of await dpkgJournal(fs)) await fs.rm(`${DPKG_UPDATES_DIR}/${n}`, { force: true });
}

/** dpkg's record of a package, if it has one (any state: `ii`, `rc`, `hi`, `iU` …). */
export function dpkgRecord(m: Machine, name: string): InstalledPackage | undefined {
  return m.packages.get(name);
}

/** Unpacked or configured (what satisfies a dependency for apt: `ii`, `hi`, `iU`, `iF`). */
export function installedVersion(m: Machine, name: string): string | undefined {
  const p = m.packages.get(name);
  return p && 'iUFWt'.includes(p.status[1] ?? 'n') ? p.version : undefined;
}

export function isHeld(m: Machine, name: string): boolean {
  return m.packages.get(name)?.status[0] === 'h';
}

/** What apt can install on this machine right now. */
export interface AptView {
  sources: SourceLine[];
  /** Visible versions of a package, newest first. */
  versions(name: string): ArchivePackage[];
  candidate(name: string, rel?: Relation, version?: string): ArchivePackage | undefined;
  /** Real packages providing `virtual` that have a visible version. */
  providers(virtual: string): string[];
}

export async function aptView(m: Machine, fs: IFileSystem): Promise<AptView> {
  const st = aptState(m);
  const sources = await readSources(fs);
  const visible = (p: ArchivePackage): boolean =>
    p.origins.some((o) => st.lists.has(o.repo) && sources.some((l) => lineCovers(l, o.repo, o.component)));
  const versions = (name: string): ArchivePackage[] => versionsOf(name).filter(visible);
  return {
    sources,
    versions,
    candidate(name, rel, version) {
      return versions(name).find((p) => !rel || satisfies(p.version, rel, version as string));
    },
    providers: (virtual) => providersOf(virtual).filter((n) => versions(n).length > 0),
  };
}
