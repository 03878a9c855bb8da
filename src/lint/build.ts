/**
 * One input → `CfgFile`: its kind by content, then the facts of every block in it with file line numbers.
 * Blocks nest: a Markdown fence holding a netplan file, a here-doc writing /etc/nccl.conf, a unit's
 * `Environment=` and `ExecStart=` all land in the same file's facts.
 */
import { isMalformed, parseNcclConf } from '../parse/nccl-conf.js';
import { parseNetplanYaml } from '../parse/netplan-yaml.js';
import { parsePythonLaunch } from '../parse/python-launch.js';
import { parseShell } from '../parse/shell-commands.js';
import type { ShellCommand } from '../parse/shell-commands.js';
import { lineText } from '../rules/cfg/context.js';
import type { CfgContext, CfgFile, LintKind, Setting } from '../rules/cfg/context.js';
import { aptInstallOf, pipInstallOf } from '../rules/cfg/commands.js';
import { sanitize } from '../util/sanitize.js';
import { detectKind } from './detect.js';
import { extractProse, segments } from './prose.js';
import { parseUnit, unitSettings } from './unit.js';

const CONFIG_KINDS: readonly LintKind[] = [
  'nccl-conf',
  'env',
  'netplan-yaml',
  'systemd-unit',
  'shell-script',
  'command-line',
  'python-launcher',
];

function shellSettings(f: CfgFile, cmds: ShellCommand[]): Setting[] {
  const out: Setting[] = [];
  for (const c of cmds) {
    for (const a of c.assigns)
      out.push({
        key: a.name,
        value: a.value,
        line: a.line,
        raw: f.proseEvidence.get(c) ?? lineText(f, a.line),
        origin: a.exported ? 'export' : 'assign',
      });
    if (c.argv.length > 0)
      for (const e of c.env)
        out.push({
          key: e.name,
          value: e.value,
          line: e.line,
          raw: f.proseEvidence.get(c) ?? lineText(f, e.line),
          origin: 'env-prefix',
        });
  }
  return out;
}

function addShell(f: CfgFile, text: string, firstLine: number, depth: number): void {
  const cmds = parseShell(text, firstLine);
  f.commands.push(...cmds);
  f.settings.push(...shellSettings(f, cmds));
  if (depth >= 2) return;
  for (const c of cmds) {
    if (!c.heredoc) continue;
    const k = detectKind(c.heredoc.body);
    if (CONFIG_KINDS.includes(k)) addBlock(f, k, c.heredoc.body, c.heredoc.line, depth + 1);
  }
}

function addProse(f: CfgFile, lines: string[], firstLine: number, whole: string): void {
  const p = extractProse(lines, firstLine, whole);
  // commands: one pseudo-line each, parsed together so `for … do` / `done` pair up, then mapped back
  const cmds = parseShell(p.snippets.map((s) => s.text.replace(/\n/g, ' ')).join('\n'), 1);
  for (const c of cmds) {
    const s = p.snippets[c.line - 1];
    if (!s) continue;
    const real: ShellCommand = {
      ...c,
      line: s.line,
      endLine: s.line,
      argv: c.argv.map((w) => ({ ...w, line: s.line })),
      env: c.env.map((e) => ({ ...e, line: s.line })),
      assigns: c.assigns.map((a) => ({ ...a, line: s.line })),
    };
    f.proseEvidence.set(real, s.evidence !== s.text ? s.evidence : c.text);
    f.commands.push(real);
  }
  for (const s of p.settings) f.settings.push({ ...s, origin: 'prose' });
  for (const py of p.python) f.python.push(parsePythonLaunch(py.text, py.line, true));
  const prev = f.prose;
  f.prose = prev
    ? {
        claims: [...prev.claims, ...p.facts.claims],
        monitors: [...prev.monitors, ...p.facts.monitors],
        udp4791: [...prev.udp4791, ...p.facts.udp4791],
        workload: p.facts.workload,
      }
    : p.facts;
}

function addMarkdown(f: CfgFile, text: string, firstLine: number, depth: number): void {
  for (const seg of segments(text.split('\n'), firstLine)) {
    const body = seg.lines.join('\n');
    const k = seg.kind === 'code' ? detectKind(body) : 'markdown';
    if (seg.kind === 'code' && CONFIG_KINDS.includes(k) && depth < 2) addBlock(f, k, body, seg.firstLine, depth + 1);
    else addProse(f, seg.lines, seg.firstLine, text);
  }
}

/** Adds the facts of `text` (of kind `kind`, starting at file line `firstLine`) to `f`. */
export function addBlock(f: CfgFile, kind: LintKind, text: string, firstLine: number, depth = 0): void {
  switch (kind) {
    case 'nccl-conf':
    case 'env': {
      const conf = parseNcclConf(text, firstLine);
      for (const e of conf.entries)
        f.settings.push({ key: e.key, value: e.value, line: e.line, raw: e.raw, origin: 'conf', entry: e });
      f.confMalformed.push(...conf.malformed.filter((m) => isMalformed(m)));
      break;
    }
    case 'netplan-yaml':
      f.netplans.push(parseNetplanYaml(text, firstLine));
      break;
    case 'systemd-unit': {
      const u = parseUnit(text, firstLine);
      f.units.push(u);
      f.settings.push(...unitSettings(u, (n) => lineText(f, n)));
      break;
    }
    case 'shell-script':
    case 'command-line':
      addShell(f, text, firstLine, depth);
      break;
    case 'python-launcher': {
      const py = parsePythonLaunch(text, firstLine);
      f.python.push(py);
      for (const e of py.env)
        f.settings.push({ key: e.name, value: e.value, line: e.line, raw: lineText(f, e.line), origin: 'python' });
      break;
    }
    case 'markdown':
      addMarkdown(f, text, firstLine, depth);
      break;
    default:
      break;
  }
}

/** Parses one input. `mode` is the file mode when read from disk (R21). Never throws. */
export function buildFile(name: string, text: string, mode?: number): CfgFile {
  const clean = typeof text === 'string' ? text.replace(/\r\n?/g, '\n') : '';
  const kind = detectKind(clean);
  const lines = kind === 'binary' ? [] : clean.split('\n').map((l) => sanitize(l));
  const f: CfgFile = {
    name,
    kind,
    lines,
    settings: [],
    confMalformed: [],
    netplans: [],
    commands: [],
    proseEvidence: new Map(),
    python: [],
    units: [],
    ...(mode !== undefined ? { mode } : {}),
  };
  try {
    if (kind !== 'binary' && kind !== 'empty' && kind !== 'unknown') addBlock(f, kind, lines.join('\n'), 1);
  } catch {
    /* partial facts: lint never throws */
  }
  return f;
}

/** The lint run: all files, and versions pinned anywhere in them (`nvidia-nccl-cu12==2.21.5`, `libnccl2=2.21.5-1…`). */
export function contextOf(files: CfgFile[]): CfgContext {
  const ctx: CfgContext = { files, versions: {} };
  for (const f of files) {
    for (const c of [...f.commands, ...f.units.flatMap((u) => u.commands)]) {
      for (const w of [...(pipInstallOf(c)?.packages ?? []), ...(aptInstallOf(c) ?? [])]) {
        const m = /^(?:nvidia-nccl-cu\d+|libnccl2|libnccl-dev)={1,2}(\d+\.\d+(?:\.\d+)?)/.exec(w.text);
        if (m) ctx.versions.nccl = m[1] as string;
      }
    }
  }
  return ctx;
}
