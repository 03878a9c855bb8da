/**
 * The offline APT archive: every package version the lab's repositories serve, with what apt and
 * dpkg need to install it as on a real jammy server — dependencies, conflicts, sizes, the files
 * it writes, the systemd units it ships (and whether its postinst enables/starts them), the
 * kernel modules it builds, and what its maintainer scripts print. The data lives in
 * archive-ubuntu.ts (jammy pockets), archive-nvidia.ts (Ubuntu NVIDIA drivers, CUDA repository)
 * and archive-doca.ts (DOCA-Host repository); this module indexes it.
 *
 * A dependency on a name the archive does not list (libc6, libgnutls30, …) counts as satisfied:
 * the lab's dpkg database holds a minimal server's notable packages, not all ~600 of them.
 */
import { basePackages } from './archive-base.js';
import { DOCA_HOST, DOCA_PACKAGES } from './archive-doca.js';
import { NVIDIA_PACKAGES } from './archive-nvidia.js';
import { UBUNTU_PACKAGES } from './archive-ubuntu.js';
import { compareVersions, satisfies, type Relation } from './version.js';
import type { ArchivePackage, PackageFile } from './archive-types.js';

export interface DepAlternative {
  name: string;
  rel?: Relation;
  version?: string;
}

/** `a (>= 1) | b` → alternatives. */
export function parseDep(dep: string): DepAlternative[] {
  return dep.split('|').map((alt) => {
    const m = /^\s*([^\s(]+)\s*(?:\(\s*(=|>=|<=|>>|<<)\s*([^)\s]+)\s*\))?\s*$/.exec(alt);
    if (!m) throw new Error(`lab apt: bad dependency "${dep}"`);
    return { name: m[1] as string, ...(m[2] ? { rel: m[2] as Relation, version: m[3] as string } : {}) };
  });
}

export function altSatisfiedBy(
  alt: DepAlternative,
  name: string,
  version: string,
  provides: readonly string[] = [],
): boolean {
  if (alt.name === name) return !alt.rel || satisfies(version, alt.rel, alt.version as string);
  // A versioned dependency is never satisfied by a virtual package (Debian policy 7.5).
  return !alt.rel && provides.includes(alt.name);
}

/** The archive's tables, filled by the data modules at import time. */
const byName = new Map<string, ArchivePackage[]>();
const providers = new Map<string, string[]>();

export function register(pkgs: readonly ArchivePackage[]): void {
  for (const p of pkgs) {
    const list = byName.get(p.name) ?? [];
    if (list.some((q) => q.version === p.version)) throw new Error(`lab apt: ${p.name} ${p.version} listed twice`);
    list.push(p);
    list.sort((a, b) => compareVersions(b.version, a.version));
    byName.set(p.name, list);
    for (const v of p.provides ?? []) {
      const names = providers.get(v) ?? [];
      if (!names.includes(p.name)) names.push(p.name);
      providers.set(v, names);
    }
  }
}

/** Every version of a package, newest first (empty when the archive does not know it). */
export function versionsOf(name: string): readonly ArchivePackage[] {
  return byName.get(name) ?? [];
}

export function findVersion(name: string, version: string): ArchivePackage | undefined {
  return byName.get(name)?.find((p) => p.version === version);
}

/** Real packages providing a virtual name. */
export function providersOf(virtual: string): readonly string[] {
  return providers.get(virtual) ?? [];
}

export function isKnown(name: string): boolean {
  return byName.has(name) || providers.has(name);
}

export function allNames(): string[] {
  return [...byName.keys()].sort();
}

/** Multi-Arch: same packages print with their architecture in dpkg's and apt's per-package lines. */
export function qualifiedName(name: string, arch = 'amd64'): string {
  const p = byName.get(name)?.[0];
  return p?.multiArch === 'same' ? `${name}:${arch}` : name;
}

export function fileOf(f: PackageFile | string): PackageFile {
  return typeof f === 'string' ? { content: f } : f;
}

register(basePackages());
register(UBUNTU_PACKAGES);
register(NVIDIA_PACKAGES);
register(DOCA_PACKAGES);
register([DOCA_HOST]);
