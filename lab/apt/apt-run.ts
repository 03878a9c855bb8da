/**
 * Carrying out an apt plan the way jammy's apt-get prints it: the package lists and summary, the
 * confirmation prompt, `Get:` lines as the archives download, then dpkg — removals, `Selecting
 * previously unselected package`, `Preparing to unpack`, `Unpacking`, `Setting up` (with what the
 * maintainer scripts print), `Processing triggers`. The model changes as each line is printed:
 * files appear at `Unpacking`, the package is usable after its `Setting up`.
 */
import type { Machine } from '../model/types.js';
import { stdinBytes } from '../shell/nested.js';
import { MIRROR_BYTES_PER_S, packageTiming, type AptIo } from './apt-io.js';
import { qualifiedName } from './archive.js';
import type { ArchivePackage } from './archive-types.js';
import {
  configure,
  describe,
  markHalfInstalled,
  readingDatabase,
  removePackage,
  triggerLines,
  unpack,
} from './dpkg-db.js';
import { showList, sizeToStr, timeToStr } from './format.js';
import { repo } from './repos.js';
import { garbage, type Plan } from './resolve.js';
import { aptState, leaveDpkgJournal } from './state.js';

export interface RunOptions {
  assumeYes: boolean;
  allowHeld: boolean;
  allowDowngrades: boolean;
  purge: boolean;
  quiet: number;
  simulate: boolean;
  downloadOnly: boolean;
  /** Packages named on the command line (installed as manual, the rest as auto). */
  requested: ReadonlySet<string>;
  /** Installed packages with a newer candidate that this run leaves alone. */
  notUpgraded: number;
  /** Print the `no longer required` notice (not when this run autoremoves them anyway). */
  autoremoveHint: boolean;
}

const NONINTERACTIVE_DEBCONF = [
  'debconf: unable to initialize frontend: Dialog',
  'debconf: (Dialog frontend will not work on a dumb terminal, an emacs shell buffer, or without a controlling terminal.)',
  'debconf: falling back to frontend: Readline',
  'debconf: unable to initialize frontend: Readline',
  'debconf: (This frontend requires a controlling tty.)',
  'debconf: falling back to frontend: Teletype',
  'dpkg-preconfigure: unable to re-open stdin: ',
];

function debName(p: ArchivePackage, index: number, count: number): string {
  const file = `${p.name}_${p.version.replace(/:/g, '%3a')}_${p.arch}.deb`;
  if (count === 1) return `.../${file}`;
  return `.../${String(index).padStart(String(count - 1).length, '0')}-${file}`;
}

function originLine(p: ArchivePackage): string {
  const o = p.origins[0];
  if (!o) return '';
  const r = repo(o.repo);
  return r.flat ? `${r.uri}${r.suite === '/' ? '  ' : ` ${r.suite} `}` : `${r.uri} ${r.suite}/${o.component} amd64 `;
}

/** Reads the answer to `Do you want to continue? [Y/n]` from stdin (EOF = no). */
function confirmed(io: AptIo): boolean {
  const text = stdinBytes(io.env.ctx);
  if (text === '') return false;
  const answer = (text.split('\n')[0] ?? '').trim();
  return answer === '' || /^y(es)?$/i.test(answer);
}

export async function executePlan(io: AptIo, plan: Plan, opts: RunOptions): Promise<number> {
  const m: Machine = io.env.machine;
  const st = aptState(m);
  const say = async (t: string): Promise<void> => (opts.quiet >= 2 ? undefined : io.out(t));
  const installs = plan.order;
  const newNames = installs
    .filter((p) => plan.fresh.has(p.name))
    .map((p) => p.name)
    .sort();
  const upgrades = installs
    .filter((p) => plan.replacing.has(p.name))
    .map((p) => p.name)
    .sort();
  const additional = installs
    .filter((p) => !opts.requested.has(p.name))
    .map((p) => p.name)
    .sort();

  const orphans = garbage(m, new Set(plan.remove), installs).filter((n) => !plan.remove.includes(n));
  if (orphans.length > 0 && opts.autoremoveHint) {
    const one = orphans.length === 1;
    const sudo = io.env.ctx.env.get('SUDO_USER') ? 'sudo ' : '';
    await say(
      showList(
        one
          ? 'The following package was automatically installed and is no longer required:'
          : 'The following packages were automatically installed and are no longer required:',
        orphans,
      ),
    );
    await say(`Use '${sudo}apt autoremove' to remove ${one ? 'it' : 'them'}.\n`);
  }
  await say(showList('The following additional packages will be installed:', additional));
  await say(showList('Suggested packages:', plan.suggested));
  await say(showList('Recommended packages:', plan.recommended));
  await say(
    showList(
      'The following packages will be REMOVED:',
      plan.remove.map((n) => (opts.purge ? `${n}*` : n)),
    ),
  );
  await say(showList('The following NEW packages will be installed:', newNames));
  await say(showList('The following held packages will be changed:', plan.heldChanged));
  await say(
    showList(
      'The following packages will be upgraded:',
      upgrades.filter((n) => !plan.downgrades.includes(n)),
    ),
  );
  await say(showList('The following packages will be DOWNGRADED:', [...plan.downgrades].sort()));
  const upgradedCount = upgrades.length - plan.downgrades.length;
  await say(
    `${upgradedCount} upgraded, ${newNames.length} newly installed, ${plan.downgrades.length > 0 ? `${plan.downgrades.length} downgraded, ` : ''}${plan.remove.length} to remove and ${opts.notUpgraded} not upgraded.\n`,
  );
  if (installs.length === 0 && plan.remove.length === 0) return 0;

  if (plan.heldChanged.length > 0 && !opts.allowHeld && opts.assumeYes) {
    await io.err('E: Held packages were changed and -y was used without --allow-change-held-packages.\n');
    return 100;
  }
  if (plan.downgrades.length > 0 && !opts.allowDowngrades && opts.assumeYes) {
    await io.err('E: Packages were downgraded and -y was used without --allow-downgrades.\n');
    return 100;
  }

  const download = installs.reduce((s, p) => s + p.size, 0);
  const addedKb =
    installs.reduce(
      (s, p) =>
        s +
        p.installedKb -
        (plan.replacing.has(p.name)
          ? (describe({ name: p.name, version: plan.replacing.get(p.name) as string })?.installedKb ?? 0)
          : 0),
      0,
    ) -
    plan.remove.reduce((s, n) => s + (describe(m.packages.get(n) ?? { name: n, version: '' })?.installedKb ?? 0), 0);
  if (download > 0) await say(`Need to get ${sizeToStr(download, io.grouping)} of archives.\n`);
  if (addedKb >= 0)
    await say(
      `After this operation, ${sizeToStr(addedKb * 1000, io.grouping)} of additional disk space will be used.\n`,
    );
  else await say(`After this operation, ${sizeToStr(-addedKb * 1000, io.grouping)} disk space will be freed.\n`);

  if (opts.simulate) {
    for (const n of plan.remove) await io.out(`Remv ${n} [${m.packages.get(n)?.version ?? ''}]\n`);
    for (const p of installs)
      await io.out(
        `Inst ${p.name} ${plan.replacing.has(p.name) ? `[${plan.replacing.get(p.name)}] ` : ''}(${p.version} ${p.origins[0] ? `Ubuntu:22.04/${p.origins[0].repo}` : 'now'} [${p.arch}])\n`,
      );
    for (const p of installs)
      await io.out(
        `Conf ${p.name} (${p.version} ${p.origins[0] ? `Ubuntu:22.04/${p.origins[0].repo}` : 'now'} [${p.arch}])\n`,
      );
    return 0;
  }

  const mustAsk =
    !opts.assumeYes &&
    (additional.length > 0 || plan.remove.length > 0 || plan.heldChanged.length > 0 || plan.downgrades.length > 0);
  if (mustAsk) {
    await io.out('Do you want to continue? [Y/n] ');
    if (!confirmed(io)) {
      await io.out('Abort.\n');
      return 1;
    }
  }

  // Download.
  let n = 0;
  let downloadMs = 0;
  for (const p of installs) {
    const ms = Math.round((p.size / MIRROR_BYTES_PER_S) * 1000) + 60;
    if (!(await io.sleep(ms))) return 100;
    downloadMs += ms;
    n++;
    await say(`Get:${n} ${originLine(p)}${p.name} ${p.arch} ${p.version} [${sizeToStr(p.size, io.grouping)}]\n`);
  }
  if (download > 0) {
    const secs = Math.max(1, Math.round(downloadMs / 1000));
    await say(
      `Fetched ${sizeToStr(download, io.grouping)} in ${timeToStr(secs)} (${sizeToStr(download / secs, io.grouping)}/s)\n`,
    );
  }
  if (opts.downloadOnly) {
    await say('Download complete and in download only mode\n');
    return 0;
  }
  const frontend = io.env.ctx.env.get('DEBIAN_FRONTEND');
  if (installs.some((p) => p.debconf) && frontend !== 'noninteractive') {
    await say('Preconfiguring packages ...\n');
    await io.err(`${NONINTERACTIVE_DEBCONF.join('\n')}\n`);
  }

  // dpkg: cut off here (channel closed, signal), it leaves its journal for the packages it had touched.
  const touched: string[] = [];
  const fail = async (): Promise<number> => {
    await leaveDpkgJournal(m, touched);
    return 100;
  };
  if (plan.remove.length > 0) {
    await io.out(readingDatabase(m));
    for (const name of plan.remove) {
      const rec = m.packages.get(name);
      if (!rec) continue;
      await io.out(`Removing ${qualifiedName(name)} (${rec.version}) ...\n`);
      touched.push(name);
      if (!(await io.sleep(700))) return fail();
      const { purging } = await removePackage(m, io.env.ctx.fs, name, opts.purge);
      if (opts.purge) {
        await io.out(`Purging configuration files for ${qualifiedName(name)} (${rec.version}) ...\n`);
        for (const l of purging) await io.out(`${l}\n`);
      }
    }
  }
  for (const [i, p] of installs.entries()) {
    const t = packageTiming(p, m.seed, m.hostname, opts.requested.has(p.name));
    const q = qualifiedName(p.name);
    if (plan.fresh.has(p.name)) await io.out(`Selecting previously unselected package ${q}.\n`);
    if (i === 0) await io.out(readingDatabase(m));
    await io.out(`Preparing to unpack ${debName(p, i, installs.length)} ...\n`);
    markHalfInstalled(m, p);
    touched.push(p.name);
    if (!(await io.sleep(t.unpack))) return fail();
    const old = plan.replacing.get(p.name);
    await io.out(old ? `Unpacking ${q} (${p.version}) over (${old}) ...\n` : `Unpacking ${q} (${p.version}) ...\n`);
    await unpack(m, io.env.ctx.fs, p);
  }
  for (const p of installs) {
    const t = packageTiming(p, m.seed, m.hostname, opts.requested.has(p.name));
    await io.out(`Setting up ${qualifiedName(p.name)} (${p.version}) ...\n`);
    if (!(await io.sleep(t.setup))) return fail();
    const lines = await configure(m, io.env.ctx.fs, p);
    if (lines.length > 0) await io.out(`${lines.join('\n')}\n`);
    if (plan.auto.has(p.name)) st.auto.add(p.name);
    if (opts.requested.has(p.name)) st.auto.delete(p.name);
  }
  const removedPkgs = plan.remove
    .map((n) => describe({ name: n, version: '' }))
    .filter((x): x is ArchivePackage => x !== undefined);
  for (const l of triggerLines(m, [...installs, ...removedPkgs])) {
    await io.out(`${l}\n`);
    if (!(await io.sleep(300))) return fail();
  }
  await io.env.syncCommands?.();
  return 0;
}
