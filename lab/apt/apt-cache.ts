/**
 * `apt-cache` (apt 2.4): policy (the jammy Installed/Candidate/Version table with pin priorities
 * and sources, `***` on the installed version, `100 /var/lib/dpkg/status`), show, madison,
 * search. Only repositories apt has fetched an index for and a sources line enables count.
 */
import type { ExecResult } from 'just-bash';
import type { Tool } from '../tools/types.js';
import { allNames } from './archive.js';
import type { ArchivePackage } from './archive-types.js';
import { describe } from './dpkg-db.js';
import { repo, type RepoId } from './repos.js';
import { aptState, aptView, installedVersion, type AptView } from './state.js';
import { compareVersions } from './version.js';

function sourceLine(id: RepoId, component: string): string {
  const r = repo(id);
  return r.flat
    ? `${r.uri}${r.suite === '/' ? ' ' : ` ${r.suite}`} Packages`
    : `${r.uri} ${r.suite}/${component} amd64 Packages`;
}

function policyOf(view: AptView, name: string, installed: string | undefined): string | undefined {
  const versions = view.versions(name);
  if (versions.length === 0 && installed === undefined) return undefined;
  const cand = versions[0]?.version ?? installed;
  const rows: Array<{ version: string; sources: string[] }> = versions.map((p) => ({
    version: p.version,
    sources: p.origins
      .filter((o) =>
        view.sources.some((l) => l.repo?.id === o.repo && (l.repo.flat || l.components.includes(o.component))),
      )
      .map((o) => `        500 ${sourceLine(o.repo, o.component)}`),
  }));
  if (installed !== undefined) {
    const row = rows.find((r) => r.version === installed);
    if (row) row.sources.push('        100 /var/lib/dpkg/status');
    else rows.push({ version: installed, sources: ['        100 /var/lib/dpkg/status'] });
  }
  rows.sort((a, b) => compareVersions(b.version, a.version));
  let out = `${name}:\n  Installed: ${installed ?? '(none)'}\n  Candidate: ${cand ?? '(none)'}\n  Version table:\n`;
  for (const r of rows) {
    const prio = r.sources.some((s) => s.includes(' 500 ')) ? 500 : 100;
    out += `${r.version === installed ? ' *** ' : '     '}${r.version} ${prio}\n${r.sources.join('\n')}\n`;
  }
  return out;
}

function policyFiles(view: AptView): string {
  let out = 'Package files:\n 100 /var/lib/dpkg/status\n     release a=now\n';
  const seen = new Set<string>();
  for (const l of [...view.sources].reverse()) {
    if (!l.repo) continue;
    const r = l.repo;
    for (const c of r.flat ? [''] : [...l.components].reverse()) {
      const key = `${r.id}/${c}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out += ` 500 ${sourceLine(r.id, c)}\n`;
      if (r.flat)
        out += `     release o=${r.id === 'cuda' ? 'NVIDIA' : 'NVIDIA DOCA'},l=${r.id === 'cuda' ? 'NVIDIA CUDA' : 'DOCA'},c=,b=amd64\n`;
      else
        out += `     release v=22.04,o=Ubuntu,a=${r.suite},n=jammy,l=Ubuntu,c=${c},b=amd64\n     origin ${new URL(r.uri).host}\n`;
    }
  }
  return `${out}Pinned packages:\n`;
}

function poolPath(p: ArchivePackage): string {
  const o = p.origins[0];
  const src = p.source ?? p.name;
  const dir = src.startsWith('lib') ? src.slice(0, 4) : src[0];
  const file = `${p.name}_${p.version.replace(/^\d+:/, '')}_${p.arch}.deb`;
  if (o && repo(o.repo).flat) return `./${file}`;
  return `pool/${o?.component || 'main'}/${dir}/${src}/${file}`;
}

function showParagraph(p: ArchivePackage): string {
  const o = p.origins[0];
  const ubuntu = o !== undefined && !repo(o.repo).flat;
  const lines = [`Package: ${p.name}`, `Architecture: ${p.arch}`, `Version: ${p.version}`];
  if (p.multiArch) lines.push(`Multi-Arch: ${p.multiArch}`);
  lines.push(
    `Priority: ${p.priority}`,
    `Section: ${o?.component && o.component !== 'main' ? `${o.component}/` : ''}${p.section}`,
  );
  if (p.source) lines.push(`Source: ${p.source}`);
  lines.push(
    `Origin: ${ubuntu ? 'Ubuntu' : 'NVIDIA'}`,
    `Maintainer: ${p.maintainer ?? 'Ubuntu Developers <ubuntu-devel-discuss@lists.ubuntu.com>'}`,
  );
  if (ubuntu) lines.push('Bugs: https://bugs.launchpad.net/ubuntu/+filebug');
  lines.push(`Installed-Size: ${p.installedKb}`);
  if (p.provides?.length) lines.push(`Provides: ${p.provides.join(', ')}`);
  if (p.depends?.length) lines.push(`Depends: ${p.depends.join(', ')}`);
  if (p.recommends?.length) lines.push(`Recommends: ${p.recommends.join(', ')}`);
  if (p.suggests?.length) lines.push(`Suggests: ${p.suggests.join(', ')}`);
  if (p.conflicts?.length) lines.push(`Conflicts: ${p.conflicts.join(', ')}`);
  lines.push(`Filename: ${poolPath(p)}`, `Size: ${p.size}`, `Description: ${p.description}`);
  return `${lines.join('\n')}\n\n`;
}

async function run(args: string[], env: Parameters<Tool['run']>[1]): Promise<ExecResult> {
  const { machine: m, ctx } = env;
  const view = await aptView(m, ctx.fs);
  const operands = args.filter((a) => !a.startsWith('-'));
  const [cmd, ...names] = operands;
  aptState(m);
  if (cmd === 'policy') {
    if (names.length === 0) return { stdout: policyFiles(view), stderr: '', exitCode: 0 };
    let stdout = '';
    let stderr = '';
    for (const n of names) {
      const p = policyOf(view, n, installedVersion(m, n));
      if (p === undefined) stderr += `N: Unable to locate package ${n}\n`;
      else stdout += p;
    }
    return { stdout, stderr, exitCode: 0 };
  }
  if (cmd === 'show') {
    let stdout = '';
    let missing = 0;
    for (const n of names) {
      const versions = view.versions(n);
      const inst = m.packages.get(n);
      const list = versions.length > 0 ? versions : inst && describe(inst) ? [describe(inst) as ArchivePackage] : [];
      if (list.length === 0) missing++;
      for (const p of list) stdout += showParagraph(p);
    }
    if (missing > 0 && stdout === '')
      return {
        stdout: '',
        stderr: 'N: Unable to locate package ' + names.join(' ') + '\nE: No packages found\n',
        exitCode: 100,
      };
    return { stdout, stderr: '', exitCode: 0 };
  }
  if (cmd === 'madison') {
    let stdout = '';
    for (const n of names) {
      for (const p of view.versions(n)) {
        for (const o of p.origins) {
          if (!view.sources.some((l) => l.repo?.id === o.repo)) continue;
          stdout += `${n.padStart(10)} | ${p.version.padStart(10)} | ${sourceLine(o.repo, o.component)}\n`;
        }
      }
    }
    return { stdout, stderr: '', exitCode: 0 };
  }
  if (cmd === 'search') {
    const res = names.map((n) => new RegExp(n, 'i'));
    let stdout = '';
    for (const n of allNames()) {
      const p = view.versions(n)[0];
      if (!p) continue;
      if (res.every((r) => r.test(n) || r.test(p.description))) stdout += `${n} - ${p.description}\n`;
    }
    return { stdout, stderr: '', exitCode: 0 };
  }
  if (cmd === undefined)
    return { stdout: 'apt 2.4.13 (amd64)\nUsage: apt-cache [options] command\n', stderr: '', exitCode: 0 };
  return { stdout: '', stderr: `E: Invalid operation ${cmd}\n`, exitCode: 100 };
}

export const aptCache: Tool = { name: 'apt-cache', path: '/usr/bin/apt-cache', packages: ['apt'], run };
