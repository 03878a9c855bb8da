/**
 * Configuration files doctor accepts besides diagnostic outputs (docs/DOCTOR.md): nccl.conf / env files, netplan
 * YAML, systemd units, shell scripts, vLLM/Ray command lines and Python launchers. Detection is lint's
 * (by content); the findings are exactly `lintText`'s, so doctor and lint agree on every config file.
 * Scores stay below those of unmistakable tool outputs, so an output that quotes a command is read as the
 * output.
 */
import { detectKind, isKnownCommand } from '../../lint/detect.js';
import { lintText } from '../../lint/index.js';
import { parseNcclConf } from '../../parse/nccl-conf.js';
import { parseNetplanYaml } from '../../parse/netplan-yaml.js';
import { parsePythonLaunch } from '../../parse/python-launch.js';
import { parseShell } from '../../parse/shell-commands.js';
import type { LintKind } from '../../rules/cfg/context.js';
import type { Finding } from '../../rules/types.js';
import { parseUnit } from '../../lint/unit.js';
import type { KindDef } from '../types.js';

let memo: { text: string; kind: LintKind } | undefined;

/** detectKind once per text, shared by the kinds below (doctor asks every kind in turn). */
function kindOf(text: string): LintKind {
  if (memo?.text !== text) memo = { text, kind: detectKind(text) };
  return memo.kind;
}

function shellScore(text: string): number {
  if (/^#!\s*\/\S*(?:sh|bash|env\s+(?:ba)?sh)\b/.test(text.trimStart())) return 0.8;
  // a bare command list: only when nearly every command is one a cluster script runs
  const cmds = parseShell(text).filter((c) => c.program !== '');
  const known = cmds.filter((c) => isKnownCommand(c.program, c.argv[0]?.text ?? ''));
  return cmds.length > 0 && known.length >= cmds.length * 0.8 ? 0.55 : 0.3;
}

const SCORES: Partial<Record<LintKind, (text: string) => number>> = {
  'nccl-conf': () => 0.9,
  env: () => 0.6,
  'netplan-yaml': () => 0.95,
  'systemd-unit': () => 0.9,
  'shell-script': shellScore,
  'command-line': () => 0.7,
  'python-launcher': () => 0.7,
};

function findingsOf(text: string): Finding[] {
  return lintText(text).findings;
}

function def<F>(
  kind: LintKind,
  parse: (text: string) => F,
  summary: (facts: F) => Array<[string, string]>,
): KindDef<F> {
  return {
    kind,
    detect: (text) => (kindOf(text) === kind ? (SCORES[kind]?.(text) ?? 0) : 0),
    parse,
    findings: (_facts, text) => findingsOf(text),
    summary,
  };
}

const confFacts = (
  text: string,
): { vars: Record<string, string>; malformed: Array<{ line: number; reason: string }> } => {
  const c = parseNcclConf(text);
  return { vars: c.vars, malformed: c.malformed.map((m) => ({ line: m.line, reason: m.reason })) };
};

const confSummary = (f: { vars: Record<string, string> }): Array<[string, string]> => {
  const keys = Object.keys(f.vars);
  return [['variables', String(keys.length)], ...keys.slice(0, 8).map((k): [string, string] => [k, f.vars[k] ?? ''])];
};

function commandFacts(text: string): { commands: Array<{ line: number; program: string; argv: string[] }> } {
  return {
    commands: parseShell(text).map((c) => ({ line: c.line, program: c.program, argv: c.argv.map((w) => w.text) })),
  };
}

export const configKinds: KindDef[] = [
  def('nccl-conf', confFacts, confSummary) as KindDef,
  def('env', confFacts, confSummary) as KindDef,
  def(
    'netplan-yaml',
    (text) => {
      const n = parseNetplanYaml(text);
      const strip = <T extends { lines: unknown }>(d: T): Omit<T, 'lines'> => {
        const { lines: _l, ...rest } = d;
        return rest;
      };
      return {
        ...(n.version !== undefined ? { version: n.version } : {}),
        ethernets: n.ethernets.map(strip),
        bonds: n.bonds.map(strip),
        bridges: n.bridges.map(strip),
        vlans: n.vlans.map(strip),
        errors: n.errors,
      };
    },
    (f) => [
      [
        'ethernets',
        f.ethernets
          .map(
            (e) => `${e.name}${e.addresses.length ? ` ${e.addresses.join(',')}` : ''}${e.mtu ? ` mtu ${e.mtu}` : ''}`,
          )
          .join('; ') || '—',
      ],
      [
        'bonds',
        f.bonds.map((b) => `${b.name} = ${b.interfaces.join('+')} (${b.mode ?? 'balance-rr'})`).join('; ') || '—',
      ],
      ...(f.errors.length ? [['YAML errors', String(f.errors.length)] as [string, string]] : []),
    ],
  ) as KindDef,
  def(
    'systemd-unit',
    (text) => ({ entries: parseUnit(text).entries }),
    (f) =>
      f.entries
        .filter((e) => /^(?:ExecStart|Type|LimitMEMLOCK|After)$/.test(e.key))
        .map((e): [string, string] => [e.key, e.value]),
  ) as KindDef,
  def('shell-script', commandFacts, (f) => [
    ['commands', String(f.commands.length)],
    ['programs', [...new Set(f.commands.map((c) => c.program).filter(Boolean))].slice(0, 12).join(', ')],
  ]) as KindDef,
  def('command-line', commandFacts, (f) => {
    const main = f.commands.find((c) => /^(?:ray|vllm|python)/.test(c.program)) ?? f.commands[0];
    return main ? [['command', main.argv.join(' ').slice(0, 200)]] : [];
  }) as KindDef,
  def(
    'python-launcher',
    (text) => {
      const p = parsePythonLaunch(text);
      return {
        usesVllm: p.usesVllm,
        calls: p.calls.map((c) => ({
          callee: c.callee,
          line: c.line,
          model: c.model?.literal ?? c.model?.text,
          kwargs: Object.fromEntries(Object.entries(c.kwargs).map(([k, v]) => [k, v.literal ?? v.text])),
        })),
        env: p.env,
      };
    },
    (f) =>
      f.calls.flatMap((c): Array<[string, string]> => [
        [c.callee, String(c.model ?? '—')],
        ...Object.entries(c.kwargs)
          .slice(0, 6)
          .map(([k, v]): [string, string] => [k, String(v)]),
      ]),
  ) as KindDef,
];
