/**
 * `dpkg` 1.21 (jammy): -i/--install FILE.deb (for the packages that ship as files: doca-host,
 * cuda-keyring, or any archive package fetched as its .deb), -r/--remove, -P/--purge,
 * --configure -a|PKG, --get-selections, --print-architecture, and -l/-s/-L/-S through
 * dpkg-query. A .deb is recognised by its Debian file name (`name_version_arch.deb`, epoch as
 * `%3a`); the file has to exist on the machine.
 */
import type { ExecResult } from 'just-bash';
import type { Tool } from '../tools/types.js';
import { aptIo, packageTiming, type AptIo } from './apt-io.js';
import { altSatisfiedBy, findVersion, isKnown, parseDep, qualifiedName, versionsOf } from './archive.js';
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
import { list, listFiles, search, status } from './dpkg-query.js';
import { aptState, installedVersion, leaveDpkgJournal, mergeDpkgJournal } from './state.js';

/** The archive entry a .deb file name stands for. */
export function debPackage(file: string): ArchivePackage | undefined {
  const base = file.slice(file.lastIndexOf('/') + 1);
  const m = /^([^_]+)_([^_]+)_([^_.]+)\.deb$/.exec(base);
  if (!m) return undefined;
  const p = findVersion(m[1] as string, decodeURIComponent((m[2] as string).replace(/%3a/gi, ':')));
  return p && p.arch === m[3] ? p : undefined;
}

/** The file name Debian gives a package's .deb (what `apt-get download` or a wget saves). */
export function debFileName(p: ArchivePackage): string {
  return `${p.name}_${p.version.replace(/:/g, '%3a')}_${p.arch}.deb`;
}

const SUPERUSER = 'dpkg: error: requested operation requires superuser privilege\n';

function unmetDepends(io: AptIo, p: ArchivePackage): string[] {
  const m = io.env.machine;
  const out: string[] = [];
  for (const dep of p.depends ?? []) {
    const alts = parseDep(dep);
    if (alts.some((a) => !isKnown(a.name))) continue;
    const ok = alts.some((alt) =>
      [...m.packages.values()].some(
        (q) =>
          installedVersion(m, q.name) !== undefined &&
          altSatisfiedBy(alt, q.name, q.version, describe(q)?.provides ?? []),
      ),
    );
    if (!ok) out.push(dep);
  }
  return out;
}

async function install(io: AptIo, files: readonly string[]): Promise<number> {
  const { machine: m, ctx } = io.env;
  const pkgs: Array<{ file: string; p: ArchivePackage }> = [];
  const errors: string[] = [];
  for (const f of files) {
    const path = ctx.fs.resolvePath(ctx.cwd, f);
    if (!(await ctx.fs.exists(path))) {
      await io.err(`dpkg: error: cannot access archive '${f}': No such file or directory\n`);
      return 2;
    }
    const p = debPackage(f);
    if (!p) {
      await io.err(
        `dpkg-deb: error: '${f}' is not a Debian format archive\ndpkg: error processing archive ${f} (--install):\n dpkg-deb --control subprocess returned error exit status 2\n`,
      );
      errors.push(f);
      continue;
    }
    pkgs.push({ file: f, p });
  }
  for (const [i, { file, p }] of pkgs.entries()) {
    const old = installedVersion(m, p.name);
    const q = qualifiedName(p.name);
    if (!old) await io.out(`Selecting previously unselected package ${q}.\n`);
    if (i === 0) await io.out(readingDatabase(m));
    await io.out(`Preparing to unpack ${file} ...\n`);
    const t = packageTiming(p, m.seed, m.hostname);
    markHalfInstalled(m, p);
    if (!(await io.sleep(t.unpack))) {
      await leaveDpkgJournal(
        m,
        pkgs.slice(0, i + 1).map((x) => x.p.name),
      );
      return 2;
    }
    await io.out(old ? `Unpacking ${q} (${p.version}) over (${old}) ...\n` : `Unpacking ${q} (${p.version}) ...\n`);
    await unpack(m, ctx.fs, p);
  }
  for (const { p } of pkgs) {
    const unmet = unmetDepends(io, p);
    if (unmet.length > 0) {
      const lines = unmet.map(
        (d) => ` ${p.name} depends on ${d}; however:\n  Package ${parseDep(d)[0]?.name} is not installed.`,
      );
      await io.err(
        `dpkg: dependency problems prevent configuration of ${p.name}:\n${lines.join('\n')}\n\ndpkg: error processing package ${p.name} (--install):\n dependency problems - leaving unconfigured\n`,
      );
      errors.push(p.name);
      continue;
    }
    await io.out(`Setting up ${qualifiedName(p.name)} (${p.version}) ...\n`);
    if (!(await io.sleep(packageTiming(p, m.seed, m.hostname).setup))) {
      await leaveDpkgJournal(
        m,
        pkgs.map((x) => x.p.name),
      );
      return 2;
    }
    const lines = await configure(m, ctx.fs, p);
    if (lines.length > 0) await io.out(`${lines.join('\n')}\n`);
  }
  for (const l of triggerLines(
    m,
    pkgs.map((x) => x.p),
  ))
    await io.out(`${l}\n`);
  await io.env.syncCommands?.();
  if (errors.length > 0) {
    await io.err(`Errors were encountered while processing:\n${errors.map((e) => ` ${e}`).join('\n')}\n`);
    return 1;
  }
  return 0;
}

async function remove(io: AptIo, names: readonly string[], purge: boolean): Promise<number> {
  const { machine: m, ctx } = io.env;
  const errors: string[] = [];
  let first = true;
  for (const name of names) {
    const rec = m.packages.get(name);
    if (!rec || (rec.status[1] === 'c' && !purge)) {
      await io.err(`dpkg: warning: ignoring request to remove ${name} which isn't installed\n`);
      continue;
    }
    const dependants = [...m.packages.values()].filter(
      (q) =>
        q.name !== name &&
        installedVersion(m, q.name) !== undefined &&
        (describe(q)?.depends ?? []).some((d) =>
          parseDep(d).every((alt) => alt.name === name || (describe(rec)?.provides ?? []).includes(alt.name)),
        ),
    );
    if (dependants.length > 0 && rec.status[1] !== 'c') {
      await io.err(
        `dpkg: dependency problems prevent removal of ${name}:\n${dependants.map((d) => ` ${d.name} depends on ${name}.`).join('\n')}\n\ndpkg: error processing package ${name} (--${purge ? 'purge' : 'remove'}):\n dependency problems - not removing\n`,
      );
      errors.push(name);
      continue;
    }
    if (first) await io.out(readingDatabase(m));
    first = false;
    if (rec.status[1] !== 'c') await io.out(`Removing ${qualifiedName(name)} (${rec.version}) ...\n`);
    await io.sleep(500);
    const { purging } = await removePackage(m, ctx.fs, name, purge);
    if (purge)
      await io.out(
        `Purging configuration files for ${qualifiedName(name)} (${rec.version}) ...\n${purging.map((l) => `${l}\n`).join('')}`,
      );
  }
  await io.env.syncCommands?.();
  if (errors.length > 0) {
    await io.err(`Errors were encountered while processing:\n${errors.map((e) => ` ${e}`).join('\n')}\n`);
    return 1;
  }
  return 0;
}

async function configurePending(io: AptIo, names: readonly string[], all: boolean): Promise<number> {
  const { machine: m, ctx } = io.env;
  const pending = [...m.packages.values()].filter(
    (p) => (all || names.includes(p.name)) && 'UF'.includes(p.status[1] ?? ''),
  );
  for (const rec of pending) {
    const p = findVersion(rec.name, rec.version) ?? versionsOf(rec.name)[0];
    if (!p) continue;
    await io.out(`Setting up ${qualifiedName(p.name)} (${p.version}) ...\n`);
    await io.sleep(packageTiming(p, m.seed, m.hostname).setup);
    const lines = await configure(m, ctx.fs, p);
    if (lines.length > 0) await io.out(`${lines.join('\n')}\n`);
  }
  await io.env.syncCommands?.();
  return 0;
}

/**
 * `dpkg --audit` (dpkg 1.21 src/main/enquiry.c): a paragraph per kind of broken package, each name
 * padded to 20 columns before its short description (cut so the line fits 80 columns less one, as dpkg
 * does off a terminal), a blank line after each; nothing when all is well.
 * Exit 0 either way (dpkg 1.21; checked against dpkg 1.21.22 with --admindir on a made-up status).
 */
function audit(m: Parameters<Tool['run']>[1]['machine']): ExecResult {
  const kinds: Array<[state: string, head: string]> = [
    [
      'U',
      'The following packages have been unpacked but not yet configured.\n' +
        'They must be configured using dpkg --configure or the configure\nmenu option in dselect for them to work:\n',
    ],
    [
      'F',
      'The following packages are only half configured, probably due to problems\n' +
        'configuring them the first time.  The configuration should be retried using\n' +
        'dpkg --configure <package> or the configure menu option in dselect:\n',
    ],
    [
      'H',
      'The following packages are only half installed, due to problems during\n' +
        'installation.  The installation can probably be completed by retrying it;\n' +
        'the packages can be removed using dselect or dpkg --remove:\n',
    ],
  ];
  const all = [...m.packages.values()].sort((a, b) => a.name.localeCompare(b.name));
  let out = '';
  for (const [state, head] of kinds) {
    const hits = all.filter((p) => p.status[1] === state);
    if (hits.length === 0) continue;
    const rows = hits.map((p) => {
      const synopsis = (describe(p)?.description.split('\n')[0] ?? '').slice(0, 80 - 23);
      return ` ${qualifiedName(p.name).padEnd(20)} ${synopsis}\n`;
    });
    out += `${head}${rows.join('')}\n`;
  }
  return { stdout: out, stderr: '', exitCode: 0 };
}

/** `dpkg --get-selections`: name, tabs to column 48, selection. */
async function selections(io: AptIo, patterns: readonly string[]): Promise<number> {
  const re = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .replace(/[.+^$(){}|\\]/g, '\\$&')
          .replace(/\*/g, '.*')
          .replace(/\?/g, '.')}$`,
      ),
  );
  let out = '';
  for (const p of [...io.env.machine.packages.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    if (re.length > 0 && !re.some((r) => r.test(p.name))) continue;
    if (re.length === 0 && p.status[1] === 'n') continue;
    const name = qualifiedName(p.name);
    let col = name.length;
    let tabs = '';
    do {
      tabs += '\t';
      col = (Math.floor(col / 8) + 1) * 8;
    } while (col < 48);
    const want = { i: 'install', h: 'hold', r: 'deinstall', p: 'purge' }[p.status[0] as 'i'] ?? 'install';
    out += `${name}${tabs}${want}\n`;
  }
  await io.out(out);
  return 0;
}

async function run(args: string[], env: Parameters<Tool['run']>[1]): Promise<ExecResult> {
  const io = aptIo(env);
  const { machine: m } = env;
  const action = args.find((a) => a.startsWith('-'));
  const operands = args.filter((a) => !a.startsWith('-'));
  const plain = (r: ExecResult): ExecResult => r;
  switch (action) {
    case '-l':
    case '--list':
      return plain(list(m, operands));
    case '-s':
    case '--status':
      return plain(status(m, operands));
    case '-L':
    case '--listfiles':
      return plain(listFiles(m, operands));
    case '-S':
    case '--search':
      return plain(search(m, operands));
    case '--print-architecture':
      return { stdout: 'amd64\n', stderr: '', exitCode: 0 };
    case '--get-selections':
      return io.result(await selections(io, operands));
    case '-C':
    case '--audit':
      return plain(audit(m));
    case undefined:
      return {
        stdout: '',
        stderr:
          "dpkg: error: need an action option\n\nType dpkg --help for help about installing and deinstalling packages [*];\nUse 'apt' or 'aptitude' for user-friendly package management;\nType dpkg -Dhelp for a list of dpkg debug flag values;\nType dpkg --force-help for a list of forcing options;\nType dpkg-deb --help for help about manipulating *.deb files;\n\nOptions marked [*] produce a lot of output - pipe it through 'less' or 'more' !\n",
        exitCode: 2,
      };
    default:
      break;
  }
  const known = ['-i', '--install', '-r', '--remove', '-P', '--purge', '--configure'];
  if (!known.includes(action))
    return {
      stdout: '',
      stderr: `dpkg: error: unknown option ${action}\n\nType dpkg --help for help about installing and deinstalling packages [*];\nUse 'apt' or 'aptitude' for user-friendly package management;\nType dpkg -Dhelp for a list of dpkg debug flag values;\nType dpkg --force-help for a list of forcing options;\nType dpkg-deb --help for help about manipulating *.deb files;\n\nOptions marked [*] produce a lot of output - pipe it through 'less' or 'more' !\n`,
      exitCode: 2,
    };
  if (!env.root) return { stdout: '', stderr: SUPERUSER, exitCode: 2 };
  const st = aptState(m);
  if (st.lock) {
    return {
      stdout: '',
      stderr: `dpkg: error: dpkg frontend lock was locked by another process with pid ${st.lock.pid}\nNote: removing the lock file is always wrong, and can end up damaging the\nlocked area and the entire system. See <https://wiki.debian.org/Teams/Dpkg/FAQ#db-lock>.\n`,
      exitCode: 2,
    };
  }
  if (operands.length === 0 && !args.includes('-a') && !args.includes('--pending')) {
    return {
      stdout: '',
      stderr: `dpkg: error: --${action.replace(/^-+/, '') === 'i' ? 'install' : action.replace(/^-+/, '')} needs at least one package archive file argument\n\nType dpkg --help for help about installing and deinstalling packages [*];\n`,
      exitCode: 2,
    };
  }
  st.lock = { pid: 3000 + m.revision, command: 'dpkg' };
  try {
    // Opening the database for writing merges what an interrupted run left in its journal.
    await mergeDpkgJournal(env.ctx.fs);
    let code: number;
    if (action === '-i' || action === '--install') code = await install(io, operands);
    else if (action === '--configure')
      code = await configurePending(io, operands, args.includes('-a') || args.includes('--pending'));
    else code = await remove(io, operands, action === '-P' || action === '--purge');
    return io.result(code);
  } finally {
    st.lock = undefined;
  }
}

export const dpkg: Tool = { name: 'dpkg', path: '/usr/bin/dpkg', packages: ['dpkg'], run };
