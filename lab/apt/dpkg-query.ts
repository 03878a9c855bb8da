/**
 * dpkg-query 1.21 (jammy) over the machine's dpkg database: -W/--show with -f/--showformat
 * (`${field}`, `${field;width}`, backslash escapes, glob patterns; unknown names → `no packages
 * found matching X` on stderr, exit 1, after the matches), -l/--list (widths grown to the longest
 * entry of the whole database when stdout is not a terminal, as dpkg's list_format_init does),
 * -s/--status, -L/--listfiles, -S/--search. `dpkg -l/-s/-L/-S` are the same code.
 */
import type { ExecResult } from 'just-bash';
import type { InstalledPackage, Machine } from '../model/types.js';
import { fail, getopt, value } from '../shell/args.js';
import type { Tool } from '../tools/types.js';
import { fileOf, qualifiedName } from './archive.js';
import type { ArchivePackage } from './archive-types.js';
import { describe } from './dpkg-db.js';

const STATUS_WORDS: Record<string, string> = {
  i: 'installed',
  c: 'config-files',
  n: 'not-installed',
  U: 'unpacked',
  H: 'half-installed',
  F: 'half-configured',
  W: 'triggers-awaited',
  t: 'triggers-pending',
};
const WANT_WORDS: Record<string, string> = { i: 'install', h: 'hold', r: 'deinstall', p: 'purge', u: 'unknown' };

const UBUNTU_MAINT = 'Ubuntu Developers <ubuntu-devel-discuss@lists.ubuntu.com>';

function field(p: InstalledPackage, name: string): string {
  const a = describe(p);
  switch (name) {
    case 'Package':
      return p.name;
    case 'binary:Package':
      return a?.multiArch === 'same' ? `${p.name}:${p.arch}` : p.name;
    case 'Version':
      return p.version;
    case 'Architecture':
      return p.arch;
    case 'db:Status-Abbrev':
      return p.status;
    case 'db:Status-Want':
      return WANT_WORDS[p.status[0] ?? 'u'] ?? 'unknown';
    case 'db:Status-Status':
      return STATUS_WORDS[p.status[1] ?? 'n'] ?? 'not-installed';
    case 'db:Status-Eflag':
      return 'ok';
    case 'Status':
      return `${WANT_WORDS[p.status[0] ?? 'u']} ok ${STATUS_WORDS[p.status[1] ?? 'n']}`;
    case 'Installed-Size':
      return a ? String(a.installedKb) : '';
    case 'Section':
      return a?.section ?? '';
    case 'Priority':
      return a?.priority ?? '';
    case 'Maintainer':
      return a?.maintainer ?? UBUNTU_MAINT;
    case 'Source':
      return a?.source ?? '';
    case 'Depends':
      return (a?.depends ?? []).join(', ');
    case 'Description':
    case 'binary:Summary':
      return a?.description ?? '';
    default:
      return '';
  }
}

function unescape(fmt: string): string {
  return fmt.replace(
    /\\(.)/g,
    (_, c: string) => (({ n: '\n', t: '\t', r: '\r', '\\': '\\' }) as Record<string, string>)[c] ?? c,
  );
}

function render(fmt: string, p: InstalledPackage): string {
  return unescape(fmt).replace(/\$\{([^};]+)(?:;(-?\d+))?\}/g, (_, name: string, width?: string) => {
    const v = field(p, name);
    if (width === undefined) return v;
    const w = Number(width);
    return w < 0 ? v.padEnd(-w) : v.padStart(w);
  });
}

const globRe = (g: string): RegExp =>
  new RegExp(
    `^${g
      .replace(/[.+^$(){}|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
const isGlob = (s: string): boolean => /[*?[]/.test(s);
const sorted = (m: Machine): InstalledPackage[] =>
  [...m.packages.values()].sort((a, b) => a.name.localeCompare(b.name));

/**
 * Packages matching any pattern, in dpkg's database order (sorted by name, whatever the order of
 * the patterns); the patterns nothing matched, for the `no packages found` errors after them.
 */
function matching(
  m: Machine,
  patterns: readonly string[],
  all: boolean,
): { hits: InstalledPackage[]; unmatched: string[] } {
  const pats = (patterns.length > 0 ? patterns : ['*']).map((p) => ({ p, re: globRe(p), found: false }));
  const hits: InstalledPackage[] = [];
  for (const pkg of sorted(m)) {
    // A glob (or no pattern) skips packages dpkg only knows as not-installed; a plain name does not.
    const hit = pats.find((x) => x.re.test(pkg.name) && (isGlob(x.p) && !all ? pkg.status[1] !== 'n' : true));
    if (!hit) continue;
    hit.found = true;
    hits.push(pkg);
  }
  return { hits, unmatched: pats.filter((x) => !x.found).map((x) => x.p) };
}

function show(m: Machine, fmt: string, patterns: readonly string[]): ExecResult {
  const { hits, unmatched } = matching(m, patterns, false);
  const stderr = unmatched.map((p) => `dpkg-query: no packages found matching ${p}\n`).join('');
  return { stdout: hits.map((h) => render(fmt, h)).join(''), stderr, exitCode: stderr ? 1 : 0 };
}

/** `dpkg -l`: the three-line legend, the column header, one row per package. */
export function list(m: Machine, patterns: readonly string[]): ExecResult {
  const all = sorted(m);
  const w = { n: 14, v: 12, a: 12, d: 33 };
  for (const p of all) {
    w.n = Math.max(w.n, field(p, 'binary:Package').length);
    w.v = Math.max(w.v, p.version.length);
    w.a = Math.max(w.a, p.arch.length);
    w.d = Math.max(w.d, field(p, 'Description').length);
  }
  const { hits, unmatched } = matching(m, patterns, patterns.length > 0);
  const stderr = unmatched.map((p) => `dpkg-query: no packages found matching ${p}\n`).join('');
  const rows = hits
    .map(
      (p) =>
        `${p.status} ${field(p, 'binary:Package').padEnd(w.n)} ${p.version.padEnd(w.v)} ${p.arch.padEnd(w.a)} ${field(p, 'Description')}\n`,
    )
    .join('');
  if (rows === '') return { stdout: '', stderr, exitCode: 1 };
  const head = [
    'Desired=Unknown/Install/Remove/Purge/Hold',
    '| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend',
    '|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)',
    `||/ ${'Name'.padEnd(w.n)} ${'Version'.padEnd(w.v)} ${'Architecture'.padEnd(w.a)} Description`,
    `+++-${'='.repeat(w.n)}-${'='.repeat(w.v)}-${'='.repeat(w.a)}-${'='.repeat(w.d)}`,
  ].join('\n');
  return { stdout: `${head}\n${rows}`, stderr, exitCode: stderr ? 1 : 0 };
}

/** `dpkg -s`: the status paragraph. */
export function status(m: Machine, names: readonly string[]): ExecResult {
  let stdout = '';
  let stderr = '';
  for (const name of names) {
    const p = m.packages.get(name.replace(/:amd64$/, ''));
    if (!p || p.status[1] === 'n') {
      stderr += `dpkg-query: package '${name}' is not installed and no information is available\n`;
      continue;
    }
    const a = describe(p);
    const lines = [
      `Package: ${p.name}`,
      `Status: ${field(p, 'Status')}`,
      `Priority: ${a?.priority ?? 'optional'}`,
      `Section: ${a?.section ?? 'misc'}`,
    ];
    if (p.status[1] !== 'c') lines.push(`Installed-Size: ${a?.installedKb ?? 0}`);
    lines.push(`Maintainer: ${field(p, 'Maintainer')}`, `Architecture: ${p.arch}`);
    if (a?.multiArch) lines.push(`Multi-Arch: ${a.multiArch}`);
    if (a?.source) lines.push(`Source: ${a.source}`);
    lines.push(`Version: ${p.version}`);
    if (a?.provides?.length) lines.push(`Provides: ${a.provides.join(', ')}`);
    if (a?.depends?.length) lines.push(`Depends: ${a.depends.join(', ')}`);
    if (a?.recommends?.length) lines.push(`Recommends: ${a.recommends.join(', ')}`);
    if (a?.suggests?.length) lines.push(`Suggests: ${a.suggests.join(', ')}`);
    if (a?.conflicts?.length) lines.push(`Conflicts: ${a.conflicts.join(', ')}`);
    const conffiles = Object.entries(a?.files ?? {})
      .filter(([, f]) => fileOf(f).conffile)
      .map(([path]) => path);
    if (conffiles.length > 0) lines.push('Conffiles:', ...conffiles.map((c) => ` ${c} ${hash(c + p.version)}`));
    lines.push(`Description: ${a?.description ?? p.name}`);
    stdout += `${lines.join('\n')}\n\n`;
  }
  if (stderr) stderr += 'Use dpkg --info (= dpkg-deb --info) to examine archive files.\n';
  return { stdout: stdout.replace(/\n\n$/, '\n'), stderr, exitCode: stderr ? 1 : 0 };
}

/** A stable md5-looking digest for conffile lines (the content is the lab's, not Debian's). */
function hash(s: string): string {
  let h1 = 0x811c9dc5;
  let out = '';
  for (let round = 0; round < 4; round++) {
    for (const c of s) h1 = Math.imul(h1 ^ c.charCodeAt(0), 16777619) >>> 0;
    out += h1.toString(16).padStart(8, '0');
  }
  return out;
}

/** Every path a package owns: its files, unit files and links, with their directories (dpkg -L order). */
export function ownedPaths(a: ArchivePackage): string[] {
  const files = [
    ...Object.keys(a.files ?? {}),
    ...Object.keys(a.links ?? {}),
    ...(a.units ?? []).map((u) => `/lib/systemd/system/${u.name}`),
    `/usr/share/doc/${a.name}/copyright`,
    `/usr/share/doc/${a.name}/changelog.Debian.gz`,
  ];
  const all = new Set<string>(['/.']);
  for (const f of files) {
    const parts = f.split('/').filter(Boolean);
    for (let i = 1; i < parts.length; i++) all.add(`/${parts.slice(0, i).join('/')}`);
    all.add(f);
  }
  return [...all].sort((x, y) => (x === '/.' ? -1 : y === '/.' ? 1 : x.localeCompare(y)));
}

export function listFiles(m: Machine, names: readonly string[]): ExecResult {
  let stdout = '';
  let stderr = '';
  for (const [i, name] of names.entries()) {
    const p = m.packages.get(name);
    const a = p ? describe(p) : undefined;
    if (!p || !a || p.status[1] === 'n') {
      stderr += `dpkg-query: package '${name}' is not installed\nUse dpkg --contents (= dpkg-deb --contents) to list archive files contents.\n`;
      continue;
    }
    if (i > 0) stdout += '\n';
    const paths =
      p.status[1] === 'c'
        ? Object.entries(a.files ?? {})
            .filter(([, f]) => fileOf(f).conffile)
            .map(([x]) => x)
        : ownedPaths(a);
    stdout += paths.map((x) => `${x}\n`).join('');
  }
  return { stdout, stderr, exitCode: stderr ? 1 : 0 };
}

export function search(m: Machine, patterns: readonly string[]): ExecResult {
  let stdout = '';
  let stderr = '';
  for (const pat of patterns) {
    const re = pat.includes('*') || pat.includes('?') ? globRe(pat) : globRe(`*${pat}*`);
    const owners = new Map<string, string[]>();
    for (const p of sorted(m)) {
      if (p.status[1] !== 'i') continue;
      const a = describe(p);
      if (!a) continue;
      for (const path of ownedPaths(a)) {
        if (path === '/.' || !re.test(path)) continue;
        const list = owners.get(path) ?? [];
        list.push(qualifiedName(p.name));
        owners.set(path, list);
      }
    }
    if (owners.size === 0) stderr += `dpkg-query: no path found matching pattern ${pat}\n`;
    for (const [path, pkgs] of owners) stdout += `${pkgs.join(', ')}: ${path}\n`;
  }
  return { stdout, stderr, exitCode: stderr ? 1 : 0 };
}

export const dpkgQuery: Tool = {
  name: 'dpkg-query',
  path: '/usr/bin/dpkg-query',
  packages: ['dpkg'],
  run(args, { machine }) {
    const p = getopt(args, 'Wf:lsLS', {
      show: false,
      showformat: true,
      list: false,
      status: false,
      listfiles: false,
      search: false,
    });
    if (p.error)
      return fail(
        2,
        `dpkg-query: error: unknown option ${p.error.option}\n\nType dpkg-query --help for help about querying packages.\n`,
      );
    const has = (...n: string[]): boolean => p.opts.some((o) => n.includes(o.name));
    if (has('l', 'list')) return list(machine, p.operands);
    if (has('s', 'status'))
      return p.operands.length === 0
        ? fail(
            2,
            'dpkg-query: error: --status needs at least one package name argument\n\nType dpkg-query --help for help about querying packages.\n',
          )
        : status(machine, p.operands);
    if (has('L', 'listfiles')) return listFiles(machine, p.operands);
    if (has('S', 'search')) return search(machine, p.operands);
    if (!has('W', 'show'))
      return fail(
        2,
        'dpkg-query: error: need an action option\n\nType dpkg-query --help for help about querying packages.\n',
      );
    // dpkg's option parser drops the '=' of `-f=FORMAT` (the usual `-f='${Package}\n'` spelling).
    const fmt = (value(p, 'f', 'showformat') ?? '${binary:Package}\\t${Version}\\n').replace(/^=/, '');
    return show(machine, fmt, p.operands);
  },
};
