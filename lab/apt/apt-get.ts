/**
 * `apt-get` and `apt` (apt 2.4.13, jammy) without a terminal: update, install (`pkg`, `pkg=ver`),
 * reinstall, remove, purge, autoremove, upgrade/dist-upgrade/full-upgrade, check, clean; -y, -q/-qq,
 * -s, -d, --no-install-recommends, --allow-change-held-packages, --allow-downgrades, --reinstall,
 * --purge, --autoremove, -o (accepted). Root only (the dpkg frontend lock), one at a time per
 * machine (`Could not get lock`), refused after an interrupted dpkg run. `apt` adds its
 * unstable-CLI warning and the update summary.
 */
import type { ExecResult } from 'just-bash';
import type { Tool, ToolEnv } from '../tools/types.js';
import { aptIo, aptPid, type AptIo } from './apt-io.js';
import { executePlan } from './apt-run.js';
import { aptUpdate } from './apt-update.js';
import { allNames, isKnown } from './archive.js';
import { cascadeRemovals, emptyPlan, garbage, planInstall, upgradable, type Plan, type Request } from './resolve.js';
import { aptState, aptView, dpkgJournal, installedVersion, isHeld } from './state.js';

type Front = 'apt-get' | 'apt';

interface Parsed {
  command?: string;
  args: string[];
  yes: boolean;
  quiet: number;
  simulate: boolean;
  downloadOnly: boolean;
  recommends: boolean;
  allowHeld: boolean;
  allowDowngrades: boolean;
  reinstall: boolean;
  purge: boolean;
  autoremove: boolean;
  fix: boolean;
  /** `apt list` selectors. */
  list: Set<'installed' | 'upgradable' | 'all-versions' | 'manual-installed'>;
}

const FLAGS: Record<string, (p: Parsed) => void> = {
  y: (p) => {
    p.yes = true;
  },
  yes: (p) => {
    p.yes = true;
  },
  'assume-yes': (p) => {
    p.yes = true;
  },
  'force-yes': (p) => {
    p.yes = true;
  },
  q: (p) => {
    p.quiet++;
  },
  quiet: (p) => {
    p.quiet++;
  },
  s: (p) => {
    p.simulate = true;
  },
  simulate: (p) => {
    p.simulate = true;
  },
  'dry-run': (p) => {
    p.simulate = true;
  },
  'just-print': (p) => {
    p.simulate = true;
  },
  'no-act': (p) => {
    p.simulate = true;
  },
  recon: (p) => {
    p.simulate = true;
  },
  d: (p) => {
    p.downloadOnly = true;
  },
  'download-only': (p) => {
    p.downloadOnly = true;
  },
  f: (p) => {
    p.fix = true;
  },
  'fix-broken': (p) => {
    p.fix = true;
  },
  m: () => undefined,
  'fix-missing': () => undefined,
  'ignore-missing': () => undefined,
  'no-install-recommends': (p) => {
    p.recommends = false;
  },
  'install-recommends': (p) => {
    p.recommends = true;
  },
  'no-install-suggests': () => undefined,
  'install-suggests': () => undefined,
  'allow-change-held-packages': (p) => {
    p.allowHeld = true;
  },
  'allow-downgrades': (p) => {
    p.allowDowngrades = true;
  },
  'allow-remove-essential': () => undefined,
  'allow-unauthenticated': () => undefined,
  reinstall: (p) => {
    p.reinstall = true;
  },
  purge: (p) => {
    p.purge = true;
  },
  'auto-remove': (p) => {
    p.autoremove = true;
  },
  autoremove: (p) => {
    p.autoremove = true;
  },
  'no-upgrade': () => undefined,
  'only-upgrade': () => undefined,
  u: () => undefined,
  'show-upgraded': () => undefined,
  V: () => undefined,
  'verbose-versions': () => undefined,
  'no-download': () => undefined,
  'list-cleanup': () => undefined,
  installed: (p) => {
    p.list.add('installed');
  },
  upgradable: (p) => {
    p.list.add('upgradable');
  },
  'all-versions': (p) => {
    p.list.add('all-versions');
  },
  'manual-installed': (p) => {
    p.list.add('manual-installed');
  },
};
const WITH_VALUE = new Set(['o', 'option', 'c', 'config-file', 't', 'target-release', 'default-release']);

function parse(args: readonly string[]): Parsed | string {
  const p: Parsed = {
    args: [],
    yes: false,
    quiet: 0,
    simulate: false,
    downloadOnly: false,
    recommends: true,
    allowHeld: false,
    allowDowngrades: false,
    reinstall: false,
    purge: false,
    autoremove: false,
    fix: false,
    list: new Set(),
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      p.args.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const [name, inline] = a.slice(2).split(/=(.*)/s) as [string, string | undefined];
      if (WITH_VALUE.has(name)) {
        if (inline === undefined) i++;
        continue;
      }
      const set = FLAGS[name];
      if (!set) return `Command line option --${name} is not understood in combination with the other options`;
      set(p);
    } else if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j] as string;
        if (WITH_VALUE.has(c)) {
          if (j === a.length - 1) i++;
          break;
        }
        const set = FLAGS[c];
        if (!set)
          return `Command line option '${c}' [from ${a}] is not understood in combination with the other options.`;
        set(p);
      }
    } else if (p.command === undefined) p.command = a;
    else p.args.push(a);
  }
  return p;
}

const GLOB = /[*?[]/;
const globRe = (g: string): RegExp =>
  new RegExp(
    `^${g
      .replace(/[.+^$(){}|\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

async function lockOrFail(io: AptIo, front: Front, lockFile: string, what: string): Promise<number | undefined> {
  const { machine: m, root } = io.env;
  if (!root) {
    await io.err(`E: Could not open lock file ${lockFile} - open (13: Permission denied)\n`);
    await io.err(`E: ${what}, are you root?\n`);
    return 100;
  }
  const st = aptState(m);
  if (st.lock) {
    await io.err(`E: Could not get lock ${lockFile}. It is held by process ${st.lock.pid} (${st.lock.command})\n`);
    await io.err('N: Be aware that removing the lock file is not a solution and may break your system.\n');
    await io.err(`E: ${what}, is another process using it?\n`);
    return 100;
  }
  st.lock = { pid: aptPid(m.seed, m.hostname, m.revision), command: front };
  return undefined;
}

async function readingLists(io: AptIo, quiet: number): Promise<void> {
  if (quiet >= 2) return;
  await io.sleep(300);
  await io.out('Reading package lists...\n');
  await io.sleep(150);
  await io.out('Building dependency tree...\n');
  await io.sleep(100);
  await io.out('Reading state information...\n');
}

async function reportErrors(io: AptIo, plan: Plan): Promise<number | undefined> {
  if (plan.unmet.length > 0) {
    await io.out(
      'Some packages could not be installed. This may mean that you have\nrequested an impossible situation or if you are using the unstable\ndistribution that some required packages have not yet been created\nor been moved out of Incoming.\nThe following information may help to resolve the situation:\n\nThe following packages have unmet dependencies:\n',
    );
    await io.out(`${plan.unmet.join('\n')}\n`);
    await io.err('E: Unable to correct problems, you have held broken packages.\n');
    return 100;
  }
  if (plan.errors.length === 0) return undefined;
  for (const e of plan.errors) {
    if (e.startsWith('Package ') && e.includes('virtual package')) await io.out(`${e}\n\n`);
    else await io.err(`E: ${e}\n`);
  }
  return 100;
}

async function install(io: AptIo, p: Parsed): Promise<number> {
  const { machine: m, ctx } = io.env;
  const view = await aptView(m, ctx.fs);
  const requests: Request[] = [];
  const removals = new Set<string>();
  for (const raw of p.args) {
    // `pkg-` in an install list means remove it; `pkg=ver` pins a version.
    if (raw.endsWith('-') && isKnown(raw.slice(0, -1))) {
      removals.add(raw.slice(0, -1));
      continue;
    }
    const [name, version] = raw.split('=') as [string, string | undefined];
    if (GLOB.test(name)) {
      const hits = allNames().filter((n) => globRe(name).test(n) && view.versions(n).length > 0);
      for (const h of hits) {
        await io.out(`Note, selecting '${h}' for glob '${name}'\n`);
        requests.push({ name: h });
      }
      if (hits.length === 0) requests.push({ name });
      continue;
    }
    requests.push({ name, ...(version ? { version } : {}) });
  }
  // -f finishes what an interrupted dpkg run left half-installed (`iH`): apt installs those again.
  if (p.fix) {
    for (const rec of m.packages.values()) {
      if (rec.status[1] === 'H') requests.push({ name: rec.name, version: rec.version });
    }
  }
  const plan =
    p.fix && requests.length === 0
      ? emptyPlan()
      : planInstall(m, view, requests, { recommends: p.recommends, reinstall: p.reinstall });
  const failed = await reportErrors(io, plan);
  if (failed !== undefined) return failed;
  for (const r of removals) if (installedVersion(m, r)) plan.remove.push(r);
  for (const a of plan.already) await io.out(`${a.name} is already the newest version (${a.version}).\n`);
  for (const n of plan.manual) {
    await io.out(`${n} set to manually installed.\n`);
    aptState(m).auto.delete(n);
  }
  if (p.autoremove)
    plan.remove.push(...garbage(m, new Set(plan.remove), plan.order).filter((n) => !plan.remove.includes(n)));
  const touched = new Set([...plan.order.map((x) => x.name), ...plan.remove]);
  return executePlan(io, plan, {
    assumeYes: p.yes,
    allowHeld: p.allowHeld,
    allowDowngrades: p.allowDowngrades,
    purge: p.purge,
    quiet: p.quiet,
    simulate: p.simulate,
    downloadOnly: p.downloadOnly,
    requested: new Set(requests.map((r) => r.name)),
    autoremoveHint: !p.autoremove,
    notUpgraded: upgradable(m, view, touched).length,
  });
}

async function remove(io: AptIo, p: Parsed, purge: boolean, autoremove: boolean): Promise<number> {
  const { machine: m, ctx } = io.env;
  const view = await aptView(m, ctx.fs);
  const removing = new Set<string>();
  for (const name of p.args) {
    if (GLOB.test(name)) {
      const hits = [...m.packages.keys()]
        .filter((n) => globRe(name).test(n) && installedVersion(m, n) !== undefined)
        .sort();
      for (const h of hits) {
        await io.out(`Note, selecting '${h}' for glob '${name}'\n`);
        removing.add(h);
      }
      if (hits.length === 0) {
        await io.err(`E: Unable to locate package ${name}\n`);
        return 100;
      }
      continue;
    }
    if (installedVersion(m, name) !== undefined) removing.add(name);
    else if (purge && m.packages.get(name)?.status[1] === 'c') removing.add(name);
    else if (isKnown(name)) await io.out(`Package '${name}' is not installed, so not removed\n`);
    else {
      await io.err(`E: Unable to locate package ${name}\n`);
      return 100;
    }
  }
  cascadeRemovals(m, removing);
  if (autoremove || p.autoremove) for (const g of garbage(m, removing)) removing.add(g);
  const plan = emptyPlan();
  plan.remove = [...removing].sort();
  plan.heldChanged = plan.remove.filter((n) => isHeld(m, n));
  return executePlan(io, plan, {
    assumeYes: p.yes,
    allowHeld: p.allowHeld,
    allowDowngrades: false,
    purge: purge || p.purge,
    quiet: p.quiet,
    simulate: p.simulate,
    downloadOnly: false,
    requested: new Set(),
    autoremoveHint: !(autoremove || p.autoremove),
    notUpgraded: upgradable(m, view, removing).length,
  });
}

async function upgrade(io: AptIo, p: Parsed): Promise<number> {
  const { machine: m, ctx } = io.env;
  const view = await aptView(m, ctx.fs);
  const all = upgradable(m, view);
  const held = all.filter((n) => isHeld(m, n));
  const plan = planInstall(
    m,
    view,
    all.filter((n) => !held.includes(n)).map((name) => ({ name })),
    { recommends: p.recommends },
  );
  const failed = await reportErrors(io, plan);
  if (failed !== undefined) return failed;
  await io.out('Calculating upgrade...\n');
  if (held.length > 0) await io.out(`The following packages have been kept back:\n  ${held.join(' ')}\n`);
  return executePlan(io, plan, {
    assumeYes: p.yes,
    allowHeld: p.allowHeld,
    allowDowngrades: false,
    purge: false,
    quiet: p.quiet,
    simulate: p.simulate,
    downloadOnly: p.downloadOnly,
    requested: new Set(all),
    autoremoveHint: true,
    notUpgraded: held.length,
  });
}

/** `apt list`: `name/suites,now version arch [installed…]`, after `Listing...`. */
async function list(io: AptIo, p: Parsed): Promise<number> {
  const { machine: m, ctx } = io.env;
  const view = await aptView(m, ctx.fs);
  const st = aptState(m);
  await io.out('Listing...\n');
  const patterns = p.args.map((a) => globRe(a));
  const names = new Set([
    ...allNames().filter((n) => view.versions(n).length > 0),
    ...[...m.packages.keys()].filter((n) => installedVersion(m, n) !== undefined),
  ]);
  let out = '';
  for (const name of [...names].sort()) {
    if (patterns.length > 0 && !patterns.some((r) => r.test(name))) continue;
    const have = installedVersion(m, name);
    const cand = view.candidate(name);
    const upgradableFrom = have && cand && upgradable(m, view).includes(name) ? have : undefined;
    if (p.list.has('installed') && !have) continue;
    if (p.list.has('manual-installed') && (!have || st.auto.has(name))) continue;
    if (p.list.has('upgradable') && !upgradableFrom) continue;
    const shown = upgradableFrom || !have ? cand : view.versions(name).find((v) => v.version === have);
    const version = shown?.version ?? (have as string);
    const suites = [...new Set((shown?.origins ?? []).map((o) => o.repo))];
    if (have === version) suites.push('now' as never);
    const arch = shown?.arch ?? m.packages.get(name)?.arch ?? 'amd64';
    const tag = upgradableFrom
      ? ` [upgradable from: ${upgradableFrom}]`
      : have === version
        ? st.auto.has(name)
          ? ' [installed,automatic]'
          : ' [installed]'
        : have
          ? ` [installed,upgradable to: ${version}]`
          : '';
    out += `${name}/${suites.join(',')} ${version} ${arch}${tag}\n`;
  }
  await io.out(out);
  return 0;
}

async function run(front: Front, args: string[], env: ToolEnv): Promise<ExecResult> {
  const io = aptIo(env);
  const parsed = parse(args);
  if (typeof parsed === 'string') {
    await io.err(`E: ${parsed}\n`);
    return io.result(100);
  }
  if (front === 'apt')
    await io.err('\nWARNING: apt does not have a stable CLI interface. Use with caution in scripts.\n\n');
  const cmd = parsed.command;
  if (cmd === undefined) {
    await io.out(`apt 2.4.13 (amd64)\nUsage: ${front} [options] command\n`);
    return io.result(front === 'apt' ? 1 : 0);
  }
  const st = aptState(env.machine);
  if (cmd === 'update') {
    if (!env.root) {
      await io.out('Reading package lists...\n');
      await io.err(
        'E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)\nE: Unable to lock directory /var/lib/apt/lists/\n',
      );
      await io.err(
        'W: Problem unlinking the file /var/cache/apt/pkgcache.bin - RemoveCaches (13: Permission denied)\nW: Problem unlinking the file /var/cache/apt/srcpkgcache.bin - RemoveCaches (13: Permission denied)\n',
      );
      return io.result(100);
    }
    const locked = await lockOrFail(
      io,
      front,
      '/var/lib/apt/lists/lock',
      'Unable to lock directory /var/lib/apt/lists/',
    );
    if (locked !== undefined) return io.result(locked);
    try {
      const code = await aptUpdate(io, parsed.quiet);
      if (front === 'apt' && code === 0) {
        await io.out('Building dependency tree...\nReading state information...\n');
        const view = await aptView(env.machine, env.ctx.fs);
        const n = upgradable(env.machine, view).length;
        await io.out(
          n === 0
            ? 'All packages are up to date.\n'
            : `${n} package${n === 1 ? '' : 's'} can be upgraded. Run 'apt list --upgradable' to see ${n === 1 ? 'it' : 'them'}.\n`,
        );
      }
      return io.result(code);
    } finally {
      st.lock = undefined;
    }
  }
  const ops: Record<string, () => Promise<number>> = {
    install: () => install(io, parsed),
    reinstall: () => install(io, { ...parsed, reinstall: true }),
    remove: () => remove(io, parsed, false, false),
    purge: () => remove(io, parsed, true, false),
    autoremove: () => remove(io, parsed, parsed.purge, true),
    'auto-remove': () => remove(io, parsed, parsed.purge, true),
    upgrade: () => upgrade(io, parsed),
    'dist-upgrade': () => upgrade(io, parsed),
    'full-upgrade': () => upgrade(io, parsed),
  };
  if (cmd === 'list' && front === 'apt') return io.result(await list(io, parsed));
  if (cmd === 'check' || cmd === 'clean' || cmd === 'autoclean') {
    if (cmd === 'check') await readingLists(io, parsed.quiet);
    return io.result(0);
  }
  const op = ops[cmd];
  if (!op || (cmd === 'full-upgrade' && front === 'apt-get')) {
    await io.err(`E: Invalid operation ${cmd}\n`);
    return io.result(100);
  }
  if (parsed.simulate && !env.root) {
    await io.out(
      "NOTE: This is only a simulation!\n      apt-get needs root privileges for real execution.\n      Keep also in mind that locking is deactivated,\n      so don't depend on the relevance to the real current situation!\n",
    );
  } else {
    const locked = await lockOrFail(
      io,
      front,
      '/var/lib/dpkg/lock-frontend',
      'Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend)',
    );
    if (locked !== undefined) return io.result(locked);
  }
  try {
    if (!parsed.simulate && (await dpkgJournal(env.ctx.fs)).length > 0) {
      // debsystem.cc names the command with sudo when run through sudo (SUDO_USER set), plain for root.
      const fix = env.ctx.env.get('SUDO_USER') !== undefined ? 'sudo dpkg --configure -a' : 'dpkg --configure -a';
      await io.err(`E: dpkg was interrupted, you must manually run '${fix}' to correct the problem. \n`);
      return io.result(100);
    }
    await readingLists(io, parsed.quiet);
    return io.result(await op());
  } finally {
    if (!(parsed.simulate && !env.root)) st.lock = undefined;
  }
}

export const aptGet: Tool = {
  name: 'apt-get',
  path: '/usr/bin/apt-get',
  packages: ['apt'],
  run: (args, env) => run('apt-get', args, env),
};
export const apt: Tool = {
  name: 'apt',
  path: '/usr/bin/apt',
  packages: ['apt'],
  run: (args, env) => run('apt', args, env),
};
