/**
 * Shorthand for writing archive tables: `pkg(name, version, 'jammy-updates/main jammy-security/main',
 * section, synopsis, debBytes, installedKb, extra)`.
 */
import type { ArchivePackage } from './archive-types.js';
import type { Component, RepoId } from './repos.js';

export function pkg(
  name: string,
  version: string,
  where: string,
  section: string,
  description: string,
  size: number,
  installedKb: number,
  extra: Partial<ArchivePackage> = {},
): ArchivePackage {
  const origins = where
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => {
      const [repo, component] = w.split('/') as [RepoId, Component | undefined];
      return { repo, component: component ?? '' };
    });
  const arch = extra.arch ?? 'amd64';
  return { priority: 'optional', ...extra, name, version, arch, origins, section, description, size, installedKb };
}

/** A library: Multi-Arch: same, `libs` section. */
export function lib(
  name: string,
  version: string,
  where: string,
  description: string,
  size: number,
  installedKb: number,
  extra: Partial<ArchivePackage> = {},
): ArchivePackage {
  return pkg(name, version, where, 'libs', description, size, installedKb, {
    multiArch: 'same',
    triggers: ['libc-bin'],
    ...extra,
  });
}

/** A systemd unit file in the layout Debian's packaging writes. */
export function unit(sections: Record<string, string[]>): string {
  return `${Object.entries(sections)
    .map(([name, lines]) => `[${name}]\n${lines.join('\n')}\n`)
    .join('\n')}`;
}
