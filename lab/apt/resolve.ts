/**
 * apt's solver, as far as the lab's archive needs it: requested packages at their candidate (or
 * `pkg=version`), missing dependencies pulled in (first installable alternative, virtual names
 * through a provider, Recommends unless --no-install-recommends), installed packages upgraded when
 * a versioned dependency asks for it, conflicting packages removed together with whatever depends
 * on them, and the packages that become garbage (`no longer required`).
 */
import type { Machine } from '../model/types.js';
import { altSatisfiedBy, isKnown, parseDep, type DepAlternative } from './archive.js';
import type { ArchivePackage } from './archive-types.js';
import { describe } from './dpkg-db.js';
import { aptState, installedVersion, isHeld, type AptView } from './state.js';
import { compareVersions } from './version.js';

export interface Request {
  name: string;
  version?: string;
}

export interface Plan {
  /** Packages to unpack and configure, dependencies first. */
  order: ArchivePackage[];
  /** Of those, the ones not installed before. */
  fresh: Set<string>;
  /** Upgrades and downgrades: name → version installed now. */
  replacing: Map<string, string>;
  remove: string[];
  /** Requested packages already at the wanted version. */
  already: Array<{ name: string; version: string }>;
  /** Requested packages that were automatically installed (`set to manually installed`). */
  manual: string[];
  /** Pulled in as dependencies (apt-mark auto). */
  auto: Set<string>;
  suggested: string[];
  recommended: string[];
  heldChanged: string[];
  downgrades: string[];
  /** apt's error lines (each without the `E: ` prefix) and the unmet-dependency report. */
  errors: string[];
  unmet: string[];
}

export function emptyPlan(): Plan {
  return {
    order: [],
    fresh: new Set(),
    replacing: new Map(),
    remove: [],
    already: [],
    manual: [],
    auto: new Set(),
    suggested: [],
    recommended: [],
    heldChanged: [],
    downgrades: [],
    errors: [],
    unmet: [],
  };
}

interface Options {
  recommends: boolean;
  reinstall?: boolean;
}

/** Providers of a name that are installed, or a real package of that name. */
function installedSatisfies(m: Machine, alt: DepAlternative, removing: ReadonlySet<string>): boolean {
  for (const p of m.packages.values()) {
    if (removing.has(p.name) || installedVersion(m, p.name) === undefined) continue;
    if (altSatisfiedBy(alt, p.name, p.version, describe(p)?.provides ?? [])) return true;
  }
  return false;
}

export function planInstall(m: Machine, view: AptView, requests: readonly Request[], opts: Options): Plan {
  const plan = emptyPlan();
  const chosen = new Map<string, ArchivePackage>();
  const requested = new Set(requests.map((r) => r.name));
  const queue: ArchivePackage[] = [];
  const choose = (p: ArchivePackage, auto: boolean): void => {
    if (chosen.has(p.name)) return;
    chosen.set(p.name, p);
    if (auto && installedVersion(m, p.name) === undefined) plan.auto.add(p.name);
    queue.push(p);
  };

  for (const r of requests) {
    const all = view.versions(r.name);
    if (all.length === 0) {
      const providers = view.providers(r.name);
      if (providers.length > 0) {
        plan.errors.push(
          `Package ${r.name} is a virtual package provided by:\n${providers.map((p) => `  ${p} ${view.candidate(p)?.version ?? ''}`).join('\n')}\nYou should explicitly select one to install.`,
        );
        plan.errors.push(`Package '${r.name}' has no installation candidate`);
      } else plan.errors.push(`Unable to locate package ${r.name}`);
      continue;
    }
    const want = r.version ? all.find((p) => p.version === r.version) : all[0];
    if (!want) {
      plan.errors.push(`Version '${r.version}' for '${r.name}' was not found`);
      continue;
    }
    const have = installedVersion(m, r.name);
    if (have === want.version && !opts.reinstall) {
      plan.already.push({ name: r.name, version: have });
      if (aptState(m).auto.has(r.name)) plan.manual.push(r.name);
      continue;
    }
    choose(want, false);
  }
  if (plan.errors.length > 0) return plan;

  const removing = new Set<string>();
  const satisfiedNow = (alt: DepAlternative): boolean => {
    const c = chosen.get(alt.name);
    if (c && altSatisfiedBy(alt, c.name, c.version, c.provides ?? [])) return true;
    for (const p of chosen.values())
      if (p.name !== alt.name && altSatisfiedBy(alt, p.name, p.version, p.provides ?? [])) return true;
    // An installed package being replaced by a chosen version no longer counts with its old version.
    if (chosen.has(alt.name)) return false;
    return installedSatisfies(m, alt, removing);
  };

  while (queue.length > 0) {
    const p = queue.shift() as ArchivePackage;
    const groups: Array<[string, boolean]> = [...(p.depends ?? []).map((d): [string, boolean] => [d, true])];
    if (opts.recommends && installedVersion(m, p.name) === undefined)
      groups.push(...(p.recommends ?? []).map((d): [string, boolean] => [d, false]));
    for (const [dep, hard] of groups) {
      const alts = parseDep(dep);
      // Names the lab's archive does not list belong to the (unmodelled) rest of the base system.
      if (alts.some((a) => !isKnown(a.name))) continue;
      if (alts.some(satisfiedNow)) continue;
      let picked: ArchivePackage | undefined;
      for (const a of alts) {
        picked = view.candidate(a.name, a.rel, a.version);
        if (!picked && !a.rel) {
          const prov = view.providers(a.name)[0];
          if (prov) picked = view.candidate(prov);
        }
        if (picked) break;
      }
      if (picked) choose(picked, true);
      else if (hard) {
        const a = alts[0] as DepAlternative;
        const why =
          view.versions(a.name).length > 0 || view.providers(a.name).length > 0
            ? 'but it is not going to be installed'
            : 'but it is not installable';
        plan.unmet.push(` ${p.name} : Depends: ${a.name}${a.rel ? ` (${a.rel} ${a.version})` : ''} ${why}`);
      }
    }
    if (installedVersion(m, p.name) === undefined) {
      for (const s of p.suggests ?? []) {
        const name = parseDep(s)[0]?.name as string;
        if (!installedVersion(m, name) && !plan.suggested.includes(name)) plan.suggested.push(name);
      }
      if (!opts.recommends) {
        for (const r of p.recommends ?? []) {
          const name = parseDep(r)[0]?.name as string;
          if (!installedVersion(m, name) && !plan.recommended.includes(name)) plan.recommended.push(name);
        }
      }
    }
  }
  if (plan.unmet.length > 0) return plan;

  // Conflicts: installed packages a chosen one conflicts with (or that conflict with it) go.
  for (const p of chosen.values()) {
    for (const inst of m.packages.values()) {
      if (inst.name === p.name || chosen.has(inst.name) || installedVersion(m, inst.name) === undefined) continue;
      const other = describe(inst);
      const hit =
        (p.conflicts ?? []).some((c) => c === inst.name || (other?.provides ?? []).includes(c)) ||
        (other?.conflicts ?? []).some((c) => c === p.name || (p.provides ?? []).includes(c));
      if (hit) removing.add(inst.name);
    }
  }
  cascadeRemovals(m, removing, chosen);

  for (const name of [...plan.auto]) if (!chosen.has(name)) plan.auto.delete(name);
  for (const p of chosen.values()) {
    const have = installedVersion(m, p.name);
    if (have === undefined) plan.fresh.add(p.name);
    else {
      plan.replacing.set(p.name, have);
      if (compareVersions(p.version, have) < 0) plan.downgrades.push(p.name);
      if (isHeld(m, p.name)) plan.heldChanged.push(p.name);
    }
  }
  plan.remove = [...removing].sort();
  for (const r of plan.remove) if (isHeld(m, r)) plan.heldChanged.push(r);
  plan.heldChanged.sort();
  plan.order = installOrder([...chosen.values()], requested);
  plan.suggested = plan.suggested.filter((s) => !chosen.has(s)).sort();
  plan.recommended = plan.recommended.filter((s) => !chosen.has(s)).sort();
  return plan;
}

/** Removing packages also removes installed packages that then have an unsatisfiable Depends. */
export function cascadeRemovals(
  m: Machine,
  removing: Set<string>,
  chosen: ReadonlyMap<string, ArchivePackage> = new Map(),
): void {
  let grew = true;
  while (grew) {
    grew = false;
    for (const inst of m.packages.values()) {
      if (removing.has(inst.name) || chosen.has(inst.name) || installedVersion(m, inst.name) === undefined) continue;
      const a = describe(inst);
      for (const dep of a?.depends ?? []) {
        const alts = parseDep(dep);
        if (alts.some((x) => !isKnown(x.name))) continue;
        const ok = alts.some(
          (alt) =>
            [...chosen.values()].some((c) => altSatisfiedBy(alt, c.name, c.version, c.provides ?? [])) ||
            installedSatisfies(m, alt, removing),
        );
        if (!ok) {
          removing.add(inst.name);
          grew = true;
          break;
        }
      }
    }
  }
}

/** Dependencies before dependants; otherwise requested order, then name order. */
function installOrder(pkgs: ArchivePackage[], requested: ReadonlySet<string>): ArchivePackage[] {
  const byName = new Map(pkgs.map((p) => [p.name, p]));
  const done = new Set<string>();
  const out: ArchivePackage[] = [];
  const visit = (p: ArchivePackage, stack: Set<string>): void => {
    if (done.has(p.name) || stack.has(p.name)) return;
    stack.add(p.name);
    for (const dep of p.depends ?? []) {
      for (const alt of parseDep(dep)) {
        const d = byName.get(alt.name) ?? pkgs.find((x) => (x.provides ?? []).includes(alt.name));
        if (d) visit(d, stack);
      }
    }
    stack.delete(p.name);
    done.add(p.name);
    out.push(p);
  };
  const sorted = [...pkgs].sort(
    (a, b) => Number(requested.has(b.name)) - Number(requested.has(a.name)) || a.name.localeCompare(b.name),
  );
  for (const p of sorted.filter((x) => !requested.has(x.name))) visit(p, new Set());
  for (const p of sorted.filter((x) => requested.has(x.name))) visit(p, new Set());
  return out;
}

/**
 * Automatically installed packages nothing manually installed needs any more (after `removing`
 * goes and `adding` arrives): what apt reports as `no longer required` and autoremove removes.
 */
export function garbage(
  m: Machine,
  removing: ReadonlySet<string> = new Set(),
  adding: readonly ArchivePackage[] = [],
): string[] {
  const st = aptState(m);
  const present = new Map<string, ArchivePackage | undefined>();
  for (const p of m.packages.values())
    if (!removing.has(p.name) && installedVersion(m, p.name) !== undefined) present.set(p.name, describe(p));
  for (const a of adding) present.set(a.name, a);
  const reached = new Set<string>();
  const walk = (name: string): void => {
    if (reached.has(name)) return;
    reached.add(name);
    const a = present.get(name);
    for (const dep of [...(a?.depends ?? []), ...(a?.recommends ?? [])]) {
      for (const alt of parseDep(dep)) {
        if (present.has(alt.name)) walk(alt.name);
        for (const [n, pa] of present) if ((pa?.provides ?? []).includes(alt.name)) walk(n);
      }
    }
  };
  for (const name of present.keys()) if (!st.auto.has(name)) walk(name);
  return [...present.keys()].filter((n) => st.auto.has(n) && !reached.has(n)).sort();
}

/** Installed packages with a newer candidate (apt's `not upgraded` count), not counting `except`. */
export function upgradable(m: Machine, view: AptView, except: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  for (const p of m.packages.values()) {
    if (except.has(p.name) || installedVersion(m, p.name) === undefined) continue;
    const c = view.candidate(p.name);
    if (c && compareVersions(c.version, p.version) > 0) out.push(p.name);
  }
  return out.sort();
}
