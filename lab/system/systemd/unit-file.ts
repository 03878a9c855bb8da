/**
 * systemd unit file syntax (systemd.syntax(7), systemd.service(5) as of systemd 249): sections,
 * repeated keys, line continuations, `Exec*=` command lines with their prefixes and quoting,
 * `$VAR`/`${VAR}` expansion from Environment=, time spans and sizes.
 */

export interface UnitFile {
  /** section → [key, value] in file order (keys repeat: ExecStart=, Environment=). */
  sections: Map<string, Array<[string, string]>>;
}

export function parseUnitFile(text: string): UnitFile {
  const sections = new Map<string, Array<[string, string]>>();
  let current: Array<[string, string]> | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = (lines[i] as string).trim();
    // A trailing backslash joins the next line (with a space).
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${(lines[++i] as string).trim()}`;
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const sec = /^\[([^\]]+)\]$/.exec(line);
    if (sec) {
      const name = sec[1] as string;
      current = sections.get(name) ?? [];
      sections.set(name, current);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0 || !current) continue;
    current.push([line.slice(0, eq).trim(), line.slice(eq + 1).trim()]);
  }
  return { sections };
}

/** The last value of `key` in `section` (later assignments win). */
export function unitValue(u: UnitFile | undefined, section: string, key: string): string | undefined {
  const entries = u?.sections.get(section);
  if (!entries) return undefined;
  for (let i = entries.length - 1; i >= 0; i--)
    if ((entries[i] as [string, string])[0] === key) return (entries[i] as [string, string])[1];
  return undefined;
}

/** Every value of a list-valued key; an empty assignment resets the list, as systemd does. */
export function unitValues(u: UnitFile | undefined, section: string, key: string): string[] {
  const out: string[] = [];
  for (const [k, v] of u?.sections.get(section) ?? []) {
    if (k !== key) continue;
    if (v === '') out.length = 0;
    else out.push(v);
  }
  return out;
}

/** Space-separated list values (After=, WantedBy=) over every assignment. */
export function unitList(u: UnitFile | undefined, section: string, key: string): string[] {
  return unitValues(u, section, key)
    .flatMap((v) => v.split(/\s+/))
    .filter((x) => x !== '');
}

export function unitBool(u: UnitFile | undefined, section: string, key: string, dflt: boolean): boolean {
  const v = unitValue(u, section, key);
  if (v === undefined) return dflt;
  return /^(1|yes|true|on)$/i.test(v);
}

/** Splits with systemd's quoting rules: double and single quotes, backslash escapes. */
export function splitQuoted(s: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < s.length) cur += s[++i];
      else cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < s.length) {
      const n = s[++i] as string;
      cur += n === 'n' ? '\n' : n === 't' ? '\t' : n;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

/** `Environment=A=1 "B=two words"` lines → variables. */
export function parseEnvironment(values: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const v of values) {
    for (const w of splitQuoted(v)) {
      const eq = w.indexOf('=');
      if (eq > 0) env[w.slice(0, eq)] = w.slice(eq + 1);
    }
  }
  return env;
}

/** EnvironmentFile= content: `KEY=value` lines, `#` comments, optional quotes. */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) continue;
    let v = (m[2] as string).trim();
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    env[m[1] as string] = v;
  }
  return env;
}

export interface ExecCommand {
  /** The line as written (for `status`: `ExecStart=/usr/local/sbin/x`). */
  raw: string;
  argv: string[];
  /** `-` prefix: a failing exit status is ignored. */
  ignoreFailure: boolean;
}

/**
 * One `Exec*=` value: prefixes (`-`, `@`, `+`, `!`, `:`), then the command with `${VAR}` expanded
 * inside words and a lone `$VAR` split into words, as systemd.service(5) describes.
 */
export function parseExecLine(raw: string, env: Record<string, string>): ExecCommand | undefined {
  let s = raw.trim();
  let ignoreFailure = false;
  let argv0Override = false;
  for (;;) {
    const c = s[0];
    if (c === '-') ignoreFailure = true;
    else if (c === '@') argv0Override = true;
    else if (c !== '+' && c !== '!' && c !== ':') break;
    s = s.slice(1);
  }
  const words: string[] = [];
  for (const w of splitQuoted(s)) {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(w);
    if (whole) {
      words.push(...(env[whole[1] as string] ?? '').split(/\s+/).filter((x) => x !== ''));
      continue;
    }
    words.push(w.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, n: string) => env[n] ?? ''));
  }
  // `@/path argv0 args`: the second word replaces argv[0]; the lab runs the path.
  if (argv0Override && words.length >= 2) words.splice(1, 1);
  if (words.length === 0) return undefined;
  return { raw, argv: words, ignoreFailure };
}

/** systemd time span (`180`, `3min`, `1h 30s`, `500ms`) in milliseconds; undefined if invalid. */
export function parseTimespan(s: string, defaultUnitMs = 1000): number | undefined {
  const units: Record<string, number> = {
    us: 0.001,
    usec: 0.001,
    ms: 1,
    msec: 1,
    s: 1000,
    sec: 1000,
    second: 1000,
    seconds: 1000,
    m: 60000,
    min: 60000,
    minute: 60000,
    minutes: 60000,
    h: 3600000,
    hr: 3600000,
    hour: 3600000,
    hours: 3600000,
    d: 86400000,
    day: 86400000,
    days: 86400000,
    w: 604800000,
    week: 604800000,
    weeks: 604800000,
  };
  const t = s.trim();
  if (t === 'infinity') return Infinity;
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * defaultUnitMs;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)\s*/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while ((m = re.exec(t))) {
    const mult = units[m[2] as string];
    if (mult === undefined) return undefined;
    total += Number(m[1]) * mult;
    pos = re.lastIndex;
  }
  return pos === t.length && pos > 0 ? total : undefined;
}

/** How systemd prints a time span: `1min 30s`, `100ms`, `infinity`. */
export function formatTimespan(ms: number): string {
  if (ms === Infinity) return 'infinity';
  if (ms === 0) return '0';
  const parts: string[] = [];
  let rest = Math.round(ms);
  for (const [unit, size] of [
    ['d', 86400000],
    ['h', 3600000],
    ['min', 60000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join(' ');
}
