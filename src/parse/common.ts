/**
 * Shared helpers for the text → facts parsers in this folder.
 *
 * Every parser receives what a terminal or an SSH exec channel captured: it may carry ANSI escapes,
 * CRLF line ends, the shell prompt and the command line the operator pasted above the output, and a
 * truncated last line. `cleanText` removes what is never part of a tool's output; everything else a
 * parser must tolerate line by line (junk lines are skipped, not fatal).
 */
import type { z } from 'zod';
import { collapseCarriageReturns, sanitize } from '../util/sanitize.js';

export interface CleanOptions {
  /**
   * Command names the output may be preceded by (`ethtool`, `ofed_info`). A leading line made of only
   * a prompt character and one of these (`# ethtool enp1s0`, `$ ofed_info -s`) or the bare command
   * (`ethtool ens1f0`) is dropped. Without hints, only unmistakable prompts (`user@host:~$ …`,
   * `[user@host dir]# …`, `sh-5.1# …`) are dropped: a bare `# …` could be output (`# gpu pwr` headers).
   */
  commands?: readonly string[];
  /**
   * Keep the leading prompt, pasted-command and blank lines. `doctor` reads them as evidence (what was run, and
   * that a command printed nothing before the next prompt), and its line numbers then count from the input's
   * first line; the parsers still drop them through their own cleaning.
   */
  keepPrompts?: boolean;
}

// A virtualenv/conda decoration in front of a prompt: `(base) `, `((sglang-0.5.9) ) `.
const ENV_PREFIX = /^\((?:[^()]|\([^()]*\))*\)\s*/;
// `[user@host dir]$ `, `[root@node ~]# `, `[csi-trex-19]> `
const BRACKET_PROMPT = /^\[[^\]\n]*\][$#>%]\s?/;
// `user@host:~/dir$ `, `root@host:~# `, `root@node2$ `, `user@host % `
const USER_HOST_PROMPT = /^[\w.-]+@[\w.-]+(?::[^\s$#%>]*)?\s?[$#%>]\s?/;
// `sh-5.1# `, `bash-4.2$ `
const SHELL_VERSION_PROMPT = /^(?:ba|z|k|da)?sh-[\d.]+[$#]\s?/;
// `$ cmd`, `# cmd`, `> cmd`, `% cmd` — only trusted when followed by a hinted command.
const BARE_PROMPT = /^[$#%>]\s+/;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function startsWithCommand(rest: string, commands: readonly string[] | undefined): boolean {
  if (!commands || commands.length === 0) return false;
  const body = rest.replace(/^(?:sudo(?:\s+-\S+)*\s+)/, '');
  return commands.some((c) => new RegExp(`^(?:\\S*/)?${escapeRe(c)}(?:\\s|$)`).test(body));
}

/**
 * True when a line is a shell prompt (with or without a command after it), or a pasted command line
 * naming one of `commands`.
 */
export function isPromptLine(line: string, commands?: readonly string[]): boolean {
  let s = line.trim();
  if (s === '') return false;
  while (ENV_PREFIX.test(s)) {
    const next = s.replace(ENV_PREFIX, '');
    if (next === s) break;
    s = next;
    // `(note) text` is not a prompt unless a prompt follows the parenthesis.
    if (!(BRACKET_PROMPT.test(s) || USER_HOST_PROMPT.test(s) || SHELL_VERSION_PROMPT.test(s) || ENV_PREFIX.test(s))) {
      return false;
    }
  }
  if (BRACKET_PROMPT.test(s) || USER_HOST_PROMPT.test(s) || SHELL_VERSION_PROMPT.test(s)) return true;
  if (BARE_PROMPT.test(s)) return startsWithCommand(s.replace(BARE_PROMPT, ''), commands);
  return startsWithCommand(s, commands);
}

// Commands an operator types between outputs in a pasted transcript, for `# <command>` prompts (a bare
// `# …` line is otherwise output: dmon's `# gpu pwr` header, a comment).
const TRANSCRIPT_COMMANDS = [
  'lsmod',
  'modprobe',
  'rmmod',
  'insmod',
  'modinfo',
  'lspci',
  'nvidia-smi',
  'ofed_info',
  'ibstat',
  'ibv_devinfo',
  'ethtool',
  'ip',
  'rdma',
  'dmesg',
  'cat',
  'grep',
  'ls',
  'echo',
  'systemctl',
  'dpkg',
  'apt',
  'sudo',
  'exit',
];

/**
 * True when a line starts the next command of a pasted transcript: a prompt (`user@host:~$ …`,
 * `[root@node ~]# …`), a bare prompt character alone, `$ <anything>`, or `# <command>` for a common command.
 * What lies between a command line and such a line is that command's whole output.
 */
export function isTranscriptPrompt(line: string): boolean {
  const s = line.trim();
  return /^[$#%>]$/.test(s) || /^\$\s+\S/.test(s) || isPromptLine(s, TRANSCRIPT_COMMANDS);
}

/**
 * Lines an editor or excerpting tool put into a paste in place of omitted output
 * (`[... truncated ...]`, `[... truncated by excerpt ...]`, `[... further rows omitted ...]`). They are
 * not tool output; removing them makes the line before them the (possibly cut) last line.
 */
export function isEditorMarker(line: string): boolean {
  return /^\s*\[\.\.\.[^\]]*\.\.\.\]\s*$/.test(line);
}

/**
 * Normalises captured text: CRLF → LF, carriage-return redraws collapsed, ANSI/control sequences
 * removed (tabs kept), editor markers removed, and leading prompt / pasted-command lines (with blank
 * lines around them) dropped. Never throws.
 */
export function cleanText(text: unknown, options: CleanOptions = {}): string {
  if (typeof text !== 'string') return '';
  const lines = text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((l) => sanitize(collapseCarriageReturns(l)))
    .filter((l) => !isEditorMarker(l));
  let start = 0;
  while (!options.keepPrompts && start < lines.length) {
    const line = lines[start] ?? '';
    if (line.trim() === '' || isPromptLine(line, options.commands)) start++;
    else break;
  }
  return lines.slice(start).join('\n');
}

/** Lines of cleaned text, each with trailing whitespace removed. */
export function cleanLines(text: unknown, options: CleanOptions = {}): string[] {
  return cleanText(text, options)
    .split('\n')
    .map((l) => l.trimEnd()); // trimEnd, not /\s+$/: the regex is quadratic on long runs of spaces
}

/** Removes keys whose value is undefined, so absent facts are absent rather than `undefined`. */
export function compact<T extends object>(obj: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (v !== undefined) out[k] = v;
  return out as T;
}

/**
 * Validates a parser's result against its schema. A parser builds only well-typed values, so a
 * failure means a bug or an odd edge: the best partial (the unvalidated value) is returned instead
 * of throwing, as the contract requires.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const res = schema.safeParse(value);
  return (res.success ? res.data : value) as z.infer<S>;
}

/** Runs a parser body; any exception yields `fallback` (parsers must never throw). */
export function guard<T>(fn: () => T, fallback: () => T): T {
  try {
    return fn();
  } catch {
    return fallback();
  }
}

/** A decimal integer, or undefined. Accepts surrounding whitespace only. */
export function toInt(s: string | undefined | null): number | undefined {
  if (s == null) return undefined;
  const t = s.trim();
  if (!/^[-+]?\d+$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A decimal number (integer or fraction), or undefined. */
export function toNum(s: string | undefined | null): number | undefined {
  if (s == null) return undefined;
  const t = s.trim();
  if (!/^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** `[domain:]bus:dev.fn` anywhere in a string (lspci, sysfs paths, ethtool bus-info). */
export const BDF_PATTERN = '(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]';

/**
 * Normalises a PCI address to the kernel's domain form `0000:bb:dd.f` (lower case, domain at least
 * four digits). nvidia-smi's 8-digit domain (`00000000:18:00.0`) is shortened to four digits when its
 * leading digits are zero, since the kernel names the same device `0000:18:00.0`.
 */
export function normalizeBdf(s: string | undefined | null): string | undefined {
  if (s == null) return undefined;
  const m = /^\s*(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])\s*$/.exec(s);
  if (!m) return undefined;
  let domain = (m[1] ?? '0').toLowerCase().replace(/^0+(?=.)/, '');
  domain = domain.padStart(4, '0');
  const bus = (m[2] ?? '').toLowerCase().padStart(2, '0');
  const dev = (m[3] ?? '').toLowerCase().padStart(2, '0');
  return `${domain}:${bus}:${dev}.${m[4] ?? '0'}`;
}

/**
 * Parses the JSON document in a captured output: the text from the first line starting with `[`/`{`.
 * If the whole tail does not parse (junk after it, a truncated end), the longest prefix ending in a
 * closing bracket is tried (`partial: true`). Returns the error message instead of throwing.
 */
export function parseJsonLoose(text: string): { value?: unknown; error?: string; partial?: boolean } {
  // Candidate starts: lines that begin with a bracket (junk lines above may hold brackets too),
  // then the first bracket anywhere.
  const starts: number[] = [];
  for (const m of text.matchAll(/^[ \t]*([[{])/gm)) {
    starts.push(m.index + m[0].length - 1);
    if (starts.length >= 20) break;
  }
  const any = text.search(/[[{]/);
  if (any >= 0 && !starts.includes(any)) starts.push(any);
  if (starts.length === 0) {
    return { error: text.trim() === '' ? 'empty output' : 'no JSON document in output' };
  }
  let firstError: string | undefined;
  for (const startIdx of starts) {
    const body = text.slice(startIdx).trim();
    try {
      return { value: JSON.parse(body) };
    } catch (e) {
      firstError ??= e instanceof Error ? e.message : String(e);
    }
    // Junk after the document (a prompt, another command's output) or a cut end: shrink to a
    // closing bracket; for a cut array also try closing it there, keeping the complete elements.
    const isArray = body[0] === '[';
    let tries = 0;
    for (let i = body.length - 1; i > 0 && tries < 200; i--) {
      const c = body[i];
      if (c !== '}' && c !== ']') continue;
      tries++;
      const prefix = body.slice(0, i + 1);
      try {
        return { value: JSON.parse(prefix), partial: true };
      } catch {
        // try the closed form below
      }
      if (isArray && c === '}') {
        try {
          return { value: JSON.parse(prefix + ']'), partial: true };
        } catch {
          // keep shrinking
        }
      }
    }
  }
  return { error: `invalid JSON: ${firstError ?? 'unparseable'}` };
}

/** Narrowing helpers for untyped JSON. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string') return toNum(v);
  return undefined;
}
