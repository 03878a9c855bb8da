/**
 * The real tools as oracles for what the product generates: `bash -n` / `sh -n` and `shellcheck -S error`
 * for shell scripts, `systemd-analyze verify` for unit files. A missing tool fails with the Debian package
 * that provides it (CI installs them): these tests never skip.
 */
import { spawnSync } from 'node:child_process';
import { basename } from 'node:path';
import type { Command } from '../../src/transport/types.js';

export type Shell = 'bash' | 'sh';

export interface Script {
  text: string;
  shell: Shell;
  /** Where it came from, for the failure message (`probe os.sudo`, `l20-n1:/usr/local/sbin/x`). */
  origin: string;
}

/** Each oracle and the Debian package it comes from. */
const TOOLS: Record<string, string> = {
  bash: 'bash',
  sh: 'dash',
  shellcheck: 'shellcheck',
  'systemd-analyze': 'systemd',
};

/** Throws, naming the Debian package, when `tool` is not on PATH. */
export function requireTool(tool: keyof typeof TOOLS): void {
  const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`${tool} is not installed: apt-get install ${TOOLS[tool]} (CI installs it)`);
}

const SHELLS = new Set(['sh', 'bash', 'dash']);

/**
 * The shell scripts inside one transport Command: a `{ script }` (sent to `bash -s`), or an argv that runs
 * `sh -c TEXT` / `bash -c TEXT` anywhere in it (`systemd-run … /bin/sh -c '…'`).
 */
export function scriptsInCommand(command: Command, origin: string): Script[] {
  if ('script' in command) return [{ text: command.script, shell: 'bash', origin }];
  const out: Script[] = [];
  const argv = command.argv;
  for (let i = 0; i + 2 < argv.length; i++) {
    const program = basename(argv[i]!);
    if (!SHELLS.has(program) || argv[i + 1] !== '-c') continue;
    out.push({ text: argv[i + 2]!, shell: program === 'bash' ? 'bash' : 'sh', origin });
  }
  return out;
}

/** A file whose first line is a shell shebang (`#!/bin/sh`, `#!/bin/bash`, `#!/usr/bin/env bash`). */
export function shellOfFile(content: string): Shell | undefined {
  const m = /^#!\s*(?:\/usr\/bin\/env\s+)?(?:\/usr)?(?:\/bin\/)?(sh|bash|dash)(?:\s|$)/.exec(content);
  if (!m) return undefined;
  return m[1] === 'bash' ? 'bash' : 'sh';
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', s: ' ' };

/**
 * One systemd command line split into words as systemd.service(5) "Command lines" says: a word may be wrapped
 * whole in double or single quotes, C-style backslash escapes apply (`\"` → `"`). Specifiers and `$`
 * expansion are left for the caller.
 */
export function systemdWords(value: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i]!)) i++;
    if (i >= value.length) break;
    const quote = value[i] === '"' || value[i] === "'" ? value[i++] : '';
    let word = '';
    for (; i < value.length; i++) {
      const c = value[i]!;
      if (quote ? c === quote : /\s/.test(c)) {
        if (quote) i++;
        break;
      }
      if (c === '\\' && i + 1 < value.length) {
        const next = value[++i]!;
        word += ESCAPES[next] ?? next;
        continue;
      }
      word += c;
    }
    words.push(word);
  }
  return words;
}

export interface UnitExec {
  key: string;
  line: number;
  words: string[];
}

/** Every Exec*= entry of a unit (continuation lines joined), its prefixes `-@:+!` removed, split into words. */
export function unitExecs(text: string): UnitExec[] {
  const lines = text.split('\n');
  const out: UnitExec[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^(Exec[A-Za-z]+)=(.*)$/.exec(lines[i]!);
    if (!m) continue;
    const line = i + 1;
    let value = m[2]!;
    while (value.endsWith('\\') && i + 1 < lines.length) value = `${value.slice(0, -1)} ${lines[++i]!}`;
    out.push({ key: m[1]!, line, words: systemdWords(value.replace(/^[-@:+!]+/, '')) });
  }
  return out;
}

/**
 * The shell scripts a unit's Exec lines run (`/bin/sh -c '…'`), as the shell receives them: systemd turns
 * `$$` into `$` and `%%` into `%`. A lone `$NAME` in such a script is systemd's expansion, not the shell's:
 * reported as a problem (write `$$NAME`).
 */
export function unitShellScripts(text: string, origin: string): { scripts: Script[]; problems: string[] } {
  const scripts: Script[] = [];
  const problems: string[] = [];
  for (const e of unitExecs(text)) {
    for (const s of scriptsInCommand({ argv: e.words }, `${origin}:${e.line} ${e.key}`)) {
      if (/(?<!\$)\$(?!\$)/.test(s.text.replace(/\$\$/g, ''))) {
        problems.push(`${s.origin}: a single $ in a shell script is systemd's own expansion (write $$): ${s.text}`);
      }
      scripts.push({ ...s, text: s.text.replace(/\$\$/g, '$').replace(/%%/g, '%') });
    }
  }
  return { scripts, problems };
}

function run(cmd: string, args: readonly string[], input: string): { code: number | null; out: string } {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { code: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

/** What `bash -n` (or dash's `sh -n`) and `shellcheck -S error -s <shell>` say about a script; [] when clean. */
export function checkScript(s: Script): string[] {
  const problems: string[] = [];
  const syntax = run(s.shell === 'bash' ? 'bash' : 'sh', ['-n'], s.text);
  if (syntax.code !== 0) problems.push(`${s.origin}: ${s.shell} -n: ${syntax.out}`);
  const lint = run('shellcheck', ['-S', 'error', '-s', s.shell, '-f', 'gcc', '-'], s.text);
  if (lint.code !== 0) {
    problems.push(`${s.origin}: shellcheck -S error -s ${s.shell}:\n${lint.out}\n--- script ---\n${s.text}`);
  }
  return problems;
}

/**
 * `systemd-analyze verify` over unit files (they may name each other): its exit status and every line it
 * printed (a complaint can come with status 0, "Unknown key … ignoring").
 */
export function systemdVerify(paths: readonly string[]): { code: number | null; lines: string[] } {
  const args = ['verify', '--man=no', '--generators=no', '--recursive-errors=no', ...paths];
  const r = spawnSync('systemd-analyze', args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { code: r.status, lines: `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '') };
}
