/**
 * apt's view of one machine: its bookkeeping (Machine.apt), the package versions it can see —
 * those of repositories that a sources line enables and whose index `apt-get update` fetched —
 * and candidates (the highest visible version; apt's default pins are all 500).
 */
import type { IFileSystem } from 'just-bash';
import type { AptState, InstalledPackage, Machine } from '../model/types.js';
import { providersOf, versionsOf, type ArchivePackage } from './archive.js';
import { lineCovers, readSources, type RepoId, type SourceLine } from './repos.js';
import { satisfies, type Relation } from './version.js';

/** The Ubuntu pockets a fresh install has indices for (fetched by the installer). */
const INSTALLER_LISTS: RepoId[] = ['jammy', 'jammy-updates', 'jammy-backports', 'jammy-security'];

export function aptState(m: Machine): AptState {
  m.apt ??= { lists: new Set(INSTALLER_LISTS), fresh: new Set(), auto: new Set(), interrupted: false, nextSystemId: 112 };
  return m.apt;
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
