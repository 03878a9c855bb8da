/**
 * systemd unit files: `[Section]` headers and `Key=Value` entries with their lines (a trailing `\` continues
 * a value). Exec* values are parsed as command lines (prefixes `-@:+!` removed); `Environment=` entries
 * become settings. Never throws.
 */
import { parseShell } from '../parse/shell-commands.js';
import type { Setting, UnitFacts } from '../rules/cfg/context.js';
import { sanitize } from '../util/sanitize.js';

export function parseUnit(text: string, firstLine = 1): UnitFacts {
  const facts: UnitFacts = { line: firstLine, entries: [], commands: [] };
  const lines = text.split('\n');
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const raw = sanitize(lines[i] ?? '').trim();
    const line = firstLine + i;
    if (raw === '' || raw.startsWith('#') || raw.startsWith(';')) continue;
    const sec = /^\[([^\]]+)\]$/.exec(raw);
    if (sec) {
      section = sec[1] as string;
      continue;
    }
    const eq = raw.indexOf('=');
    if (eq <= 0) continue;
    let value = raw.slice(eq + 1).trim();
    while (value.endsWith('\\') && i + 1 < lines.length) {
      i++;
      value = `${value.slice(0, -1).trim()} ${sanitize(lines[i] ?? '').trim()}`;
    }
    const key = raw.slice(0, eq).trim();
    facts.entries.push({ section, key, value, line });
    if (/^Exec(?:Start|StartPre|StartPost|Stop|Reload)$/.test(key)) {
      for (const c of parseShell(value.replace(/^[-@:+!]+/, ''), line))
        facts.commands.push({ ...c, line, endLine: line });
    }
  }
  return facts;
}

/** `Environment=A=1 "B=two words"` → settings. */
export function unitSettings(u: UnitFacts, raw: (line: number) => string): Setting[] {
  const out: Setting[] = [];
  for (const e of u.entries) {
    if (e.key !== 'Environment') continue;
    for (const m of e.value.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
      const item = m[1] ?? m[2] ?? m[3] ?? '';
      const eq = item.indexOf('=');
      if (eq <= 0) continue;
      out.push({ key: item.slice(0, eq), value: item.slice(eq + 1), line: e.line, raw: raw(e.line), origin: 'unit' });
    }
  }
  return out;
}
