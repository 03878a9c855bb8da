/**
 * `apt-get install` for scenarios, which run before a machine has a shell: the same solver picks
 * the same versions, dependencies (marked automatic) and conflict removals as the command would
 * (over the Ubuntu pockets unless told otherwise), and the dpkg database ends as the command
 * leaves it. Files follow from the database when the shell starts (packageFiles).
 */
import type { Machine } from '../model/types.js';
import { fileOf } from './archive.js';
import { describe, installInModel } from './dpkg-db.js';
import { JAMMY_SOURCES_LIST, parseSources, REPOS, type RepoId } from './repos.js';
import { planInstall, type Request } from './resolve.js';
import { aptState, type AptView } from './state.js';
import { versionsOf, providersOf } from './archive.js';
import { satisfies } from './version.js';

const UBUNTU: RepoId[] = ['jammy', 'jammy-updates', 'jammy-security', 'jammy-backports'];

/** apt's view with a fixed set of repositories (all their components enabled). */
export function staticView(repos: readonly RepoId[] = UBUNTU): AptView {
  const sources = [
    ...parseSources(JAMMY_SOURCES_LIST, '/etc/apt/sources.list'),
    ...REPOS.filter((r) => r.flat && repos.includes(r.id)).map((r) => ({
      uri: r.uri,
      suite: r.suite,
      components: [],
      repo: r,
      file: '',
    })),
  ];
  const versions = (name: string) => versionsOf(name).filter((p) => p.origins.some((o) => repos.includes(o.repo)));
  return {
    sources,
    versions,
    candidate: (name, rel, version) => versions(name).find((p) => !rel || satisfies(p.version, rel, version as string)),
    providers: (virtual) => providersOf(virtual).filter((n) => versions(n).length > 0),
  };
}

/**
 * Installs `requests` (names or `{ name, version }`) as `apt-get install -y` would; returns what
 * changed. Throws when apt would refuse (unknown package, unmet dependencies).
 */
export function aptInstallInModel(
  m: Machine,
  requests: ReadonlyArray<string | Request>,
  opts: { repos?: readonly RepoId[]; recommends?: boolean } = {},
): { installed: string[]; removed: string[] } {
  const reqs = requests.map((r) => (typeof r === 'string' ? { name: r } : r));
  const plan = planInstall(m, staticView(opts.repos), reqs, { recommends: opts.recommends ?? true });
  if (plan.errors.length > 0 || plan.unmet.length > 0)
    throw new Error(`lab apt: ${[...plan.errors, ...plan.unmet].join('; ')}`);
  for (const name of plan.remove) removeInModel(m, name);
  installInModel(
    m,
    plan.order.map((p) => ({ name: p.name, version: p.version, auto: plan.auto.has(p.name) })),
  );
  return { installed: plan.order.map((p) => p.name), removed: plan.remove };
}

/**
 * Removes a package as `dpkg --remove` does (before the shell exists): `rc` while it has conffiles,
 * else gone from the database. Nothing checks what depends on it (`--force-depends`).
 */
export function removeInModel(m: Machine, name: string): void {
  const rec = m.packages.get(name);
  if (!rec) return;
  const keeps = Object.values(describe(rec)?.files ?? {}).some((f) => fileOf(f).conffile);
  if (keeps) m.packages.set(name, { ...rec, status: 'rc ' });
  else m.packages.delete(name);
  aptState(m).auto.delete(name);
  m.revision++;
}
