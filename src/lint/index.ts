/**
 * `l20-setup lint FILE… [--json]`: static checks of supplied configuration (nccl.conf, netplan YAML, QoS and
 * start scripts, units, `ray`/`vllm` command lines, Python launchers, Markdown tutorials). Each file's kind
 * is detected by content; all files of one run share facts (cross-file rules). Findings are the cfg rules of
 * docs/RULES.md, worst first. Exit status: 0 no blocker/high finding, 1 some blocker/high, 2 a file could not be
 * read (or no file was given).
 */
import { stat } from 'node:fs/promises';
import { FileRefusedError, looksBinary, readFileSafely, textEnd } from '../util/read-file-safely.js';
import { runCfgRules } from '../rules/cfg/index.js';
import type { CfgFile } from '../rules/cfg/context.js';
import { sortFindings } from '../rules/types.js';
import type { Finding } from '../rules/types.js';
import { buildFile, contextOf } from './build.js';
import { formatHuman } from './format.js';
import { cutLong } from '../util/cut-long.js';
import { escapeInvisible } from '../util/sanitize.js';
import type { LintFinding, LintReport } from './report.js';

function toJson(f: Finding): LintFinding {
  // A finding quotes the file: one line of it can be 200 MB.
  return {
    rule: f.rule,
    severity: f.severity,
    line: f.line ?? null,
    evidence: cutLong(f.evidence),
    fix: cutLong(f.fix),
    title: cutLong(f.title),
  };
}

/** Lints one text on its own (doctor uses it for configuration files). Never throws. */
export function lintText(text: string, name = '<input>'): { kind: string; findings: Finding[] } {
  try {
    const file = buildFile(name, typeof text === 'string' ? text : '');
    return { kind: file.kind, findings: runCfgRules(file, contextOf([file])) };
  } catch {
    return { kind: 'unknown', findings: [] };
  }
}

async function load(path: string): Promise<{ text: string; mode: number; binary: boolean } | { error: string }> {
  try {
    const buf = await readFileSafely(path, 'lint input');
    const { mode } = await stat(path);
    const binary = looksBinary(buf);
    return { text: binary ? '' : buf.subarray(0, textEnd(buf)).toString('utf8'), mode, binary };
  } catch (e) {
    if (e instanceof FileRefusedError) return { error: `${path}: ${e.reason}` };
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'permission denied'
          : e instanceof Error
            ? e.message
            : String(e);
    return { error: `${path}: cannot read: ${why}` };
  }
}

/** Lints files together (cross-file facts shared). Unreadable files are reported with `error`, never thrown. */
export async function lintFiles(paths: string[]): Promise<LintReport> {
  const loaded = await Promise.all(paths.map(async (p) => ({ path: p, r: await load(p) })));
  const built: Array<{ path: string; file?: CfgFile; error?: string }> = loaded.map(({ path, r }) => {
    if ('error' in r) return { path, error: r.error };
    const file = buildFile(path, r.text, r.mode);
    if (r.binary) file.kind = 'binary';
    return { path, file };
  });
  const ctx = contextOf(built.flatMap((b) => (b.file ? [b.file] : [])));
  // A file name is not ours either (a glob over an unpacked tarball): shown with its controls and bidi
  // characters as \u escapes, in the human output and the JSON alike, so it is inert and still exact.
  return {
    version: 1,
    files: built.map((b) => {
      const file = escapeInvisible(b.path);
      if (!b.file) return { file, kind: 'unreadable', findings: [], error: escapeInvisible(b.error ?? 'cannot read') };
      let findings: Finding[];
      try {
        findings = runCfgRules(b.file, ctx);
      } catch {
        findings = [];
      }
      return { file, kind: b.file.kind, findings: sortFindings(findings).map(toJson) };
    }),
  };
}

/** The CLI entry: prints the report (JSON or human) and returns the exit status. */
export async function runLint(argv: {
  files: string[];
  json: boolean;
  color: boolean;
  write: (s: string) => void;
}): Promise<number> {
  if (argv.files.length === 0) {
    argv.write('l20-setup lint: no file given. Usage: l20-setup lint FILE… [--json]\n');
    return 2;
  }
  const report = await lintFiles(argv.files);
  if (argv.json) argv.write(`${JSON.stringify(report, null, 2)}\n`);
  else argv.write(formatHuman(report, argv.color));
  if (report.files.some((f) => f.error !== undefined)) return 2;
  return report.files.some((f) => f.findings.some((x) => x.severity === 'blocker' || x.severity === 'high')) ? 1 : 0;
}
