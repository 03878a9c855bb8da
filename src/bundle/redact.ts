/**
 * The one redaction pass every byte of an evidence bundle goes through (files and SUMMARY.md alike).
 * Support bundles travel to vendors and public trackers: a vLLM API key, a Hugging Face token, a
 * password or a private key must never leave the host inside one.
 *
 * Two layers. Patterns catch secrets by shape (`VLLM_API_KEY=…`, `--api-key …`, `Authorization: Bearer
 * …`, `hf_…`, PEM private-key blocks, `password=…`). And every value a pattern redacted is remembered
 * as a literal: the same key then disappears wherever else it shows up without its label — a process
 * list (an operator's unit with `--api-key ${KEY}` has it in the argv), a journal line, a URL. Files are
 * learned from first (`learn`), so a key seen in /etc/l20/vllm.env is known before `ps` output is
 * redacted, whatever order the files arrive in.
 *
 * A labelled value is read the way the file it sits in would be: a shell word with its quotes and escapes
 * (`'a b;c'`, `"x\"y z"`, `a\ b`, `$'…'`), a JSON or YAML scalar, or an env file's rest of the line — and
 * removed whole, never cut at the first quote, space, `;` or `,`.
 */
import { heldSecretForms } from '../util/secrets.js';

export type SecretKind = 'api-key' | 'bearer-token' | 'hf-token' | 'password' | 'private-key' | 'known-secret';

export const SECRET_KINDS: readonly SecretKind[] = [
  'api-key',
  'bearer-token',
  'hf-token',
  'password',
  'private-key',
  'known-secret',
];

export const MARK = (kind: SecretKind): string => `[REDACTED:${kind}]`;

/**
 * Values that are references or placeholders, not secrets: `${L20_API_KEY}`, `$TOKEN`, `<key>` in a fix
 * text, an earlier redaction.
 */
const REFERENCE = /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>\n]*>|\[REDACTED:[a-z-]+\])$/;

/** Shorter values are not worth remembering as literals (they would blank ordinary words). */
const MIN_LITERAL = 8;

/** Where a labelled value sits, which decides where it ends (see valueEnd). */
type Context = 'json' | 'quoted-assignment' | 'line' | 'word';

interface Label {
  kind: SecretKind;
  /** The label; the separator (`=`, `:` or the option's space) and the value are read after it. */
  re: RegExp;
  /** `--option value` / `--option=value`: the value is one shell word. */
  option?: boolean;
}

/**
 * Labels. A `NAME=value` assignment counts anywhere; `name: value` only as a key — quoted (JSON, a Python
 * dict) or at the start of a line (YAML, a header) — so prose ("sudo needs a password: steps run …") and
 * sudoers tags (`NOPASSWD:ALL` in a fix text) are left as they are.
 */
const LABELS: readonly Label[] = [
  // Environment files, unit Environment= lines, shell exports: NAME=value or NAME: value.
  { kind: 'api-key', re: /\b[A-Z0-9_]*API_?KEY\b/gi },
  { kind: 'hf-token', re: /\b(?:HF_TOKEN|HUGGING_FACE_HUB_TOKEN|HF_API_TOKEN)\b/g },
  { kind: 'api-key', re: /\b[A-Z0-9_]*(?:TOKEN|SECRET|SECRET_KEY)\b/g },
  // Command lines: --api-key X, --api-key=X, --hf-token X, --token X.
  { kind: 'api-key', re: /--(?:api-key|hf-token|token|secret)\b/g, option: true },
  // PWD and OLDPWD are directories: only a name ending in _pwd (DB_PWD) is a password.
  { kind: 'password', re: /\b(?:[A-Za-z0-9_]*(?:password|passwd|passphrase)|[A-Za-z0-9]+_pwd)\b/gi },
  { kind: 'password', re: /--(?:password|passphrase)\b/gi, option: true },
];

// A value that is a token, not a shell word: double-quoted, single-quoted or a run of non-space characters.
const TOKEN = String.raw`(?:"(?<dq>[^"\n]*)"|'(?<sq>[^'\n]*)'|(?<v>[^\s"',;]+))`;

interface Pattern {
  kind: SecretKind;
  /** Group `dq`, `sq` or `v` is the secret; the rest of the match is kept. */
  re: RegExp;
  /** Shorter values are prose, not secrets (a bare "Bearer" in a sentence). */
  min?: number;
}

/** Secrets found by their shape or a fixed prefix (tokens: no quoting or escapes to follow). */
const SHAPES: readonly Pattern[] = [
  { kind: 'bearer-token', re: new RegExp(String.raw`\bAuthorization:\s*(?:Bearer|Basic|Token)\s+${TOKEN}`, 'gi') },
  { kind: 'bearer-token', re: new RegExp(String.raw`\bBearer\s+${TOKEN}`, 'g'), min: 16 },
  { kind: 'hf-token', re: /(?<v>\bhf_[A-Za-z0-9]{20,})/g },
  { kind: 'api-key', re: /(?<v>\bsk-[A-Za-z0-9_-]{20,})/g },
];

/** What may stand before a key at the start of a line: indentation, `export`, a YAML list dash, Environment=. */
const LINE_START = /(?:^|\n)[ \t]*(?:export[ \t]+|declare[ \t]+-x[ \t]+|-[ \t]+|Environment=)?$/;
/** Keys that are never secrets before a colon: sudoers tags and nsswitch.conf's passwd database. */
const COLON_PROSE = /^(?:no)?passwd$/i;

/**
 * One shell word from `at`: unquoted characters (`,` and `;` included: a value that holds them is still
 * removed whole), '…', "…" and $'…' with their escapes, and backslash escapes (`a\ b`), up to unquoted
 * white space. Returns where it ends.
 */
function shellWordEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n' || c === ' ' || c === '\t' || c === '\r') break;
    if (c === '\\') i += text[i + 1] === undefined || text[i + 1] === '\n' ? 1 : 2;
    else if (c === "'") i = quotedEnd(text, i, "'", false);
    else if (c === '"') i = quotedEnd(text, i, '"', true);
    else if (c === '$' && text[i + 1] === "'") i = quotedEnd(text, i + 1, "'", true);
    else i++;
  }
  return i;
}

/** The index after the quote that closes the one at `open` (or the end of its line, if none does). */
function quotedEnd(text: string, open: number, quote: string, escapes: boolean): number {
  for (let i = open + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') return i;
    if (escapes && c === '\\') i++;
    else if (c === quote) return i + 1;
  }
  return text.length;
}

function lineEnd(text: string, at: number): number {
  const nl = text.indexOf('\n', at);
  let end = nl < 0 ? text.length : nl;
  while (end > at && /[ \t\r]/.test(text[end - 1]!)) end--;
  return end;
}

/** Where a value that starts at `at` ends, in its context. */
function valueEnd(text: string, at: number, context: Context, quote: string): number {
  switch (context) {
    case 'json': {
      const c = text[at];
      if (c === '"' || c === "'") return quotedEnd(text, at, c, true);
      const m = /^[^\s,}\]]*/.exec(text.slice(at, at + 4096))!;
      return at + m[0].length;
    }
    case 'quoted-assignment': {
      // "VLLM_API_KEY=abc def": the value runs to the quote that opened the assignment.
      for (let i = at; i < text.length; i++) {
        const c = text[i]!;
        if (c === '\n') return i;
        if (quote === '"' && c === '\\') i++;
        else if (c === quote) return i;
      }
      return text.length;
    }
    case 'line': {
      // An env file's or YAML's value is the rest of the line (NAME=a b;c) — unless it is a shell
      // reference, then a command follows it (OPENAI_API_KEY=$KEY vllm bench …).
      const word = shellWordEnd(text, at);
      return REFERENCE.test(unquote(text.slice(at, word))) ? word : lineEnd(text, at);
    }
    case 'word':
      return shellWordEnd(text, at);
  }
}

/** A single quoted segment ('…', "…", $'…') spanning all of `raw`: its quotes, else undefined. */
function singleQuoted(raw: string): { open: string; close: string } | undefined {
  const open = raw.startsWith("$'") ? "$'" : raw[0] === '"' || raw[0] === "'" ? raw[0] : undefined;
  if (open === undefined) return undefined;
  const quote = open.slice(-1);
  const escapes = open !== "'";
  const end = quotedEnd(raw, open.length - 1, quote, escapes);
  return end === raw.length && raw.length > open.length ? { open, close: quote } : undefined;
}

/** The value a shell (or a JSON/YAML reader) makes of `raw`: quotes removed, escapes resolved. */
function unquote(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) out += raw[++i];
    else if (c === "'") {
      const end = quotedEnd(raw, i, "'", false);
      out += raw.slice(i + 1, raw[end - 1] === "'" && end - 1 > i ? end - 1 : end);
      i = end - 1;
    } else if (c === '"') {
      const end = quotedEnd(raw, i, '"', true);
      const inner = raw.slice(i + 1, raw[end - 1] === '"' && end - 1 > i ? end - 1 : end);
      out += inner.replace(/\\(.)/g, '$1');
      i = end - 1;
    } else if (c === '$' && raw[i + 1] === "'") {
      const end = quotedEnd(raw, i + 1, "'", true);
      const inner = raw.slice(i + 2, raw[end - 1] === "'" && end - 1 > i + 1 ? end - 1 : end);
      out += inner.replace(/\\(.)/g, '$1');
      i = end - 1;
    } else out += c;
  }
  return out;
}

/** A labelled value found in a text: where its raw form starts and ends, and what it is once unquoted. */
interface Found {
  kind: SecretKind;
  /** The label as it matched (`PASSWORD`, `--api-key`). */
  key: string;
  start: number;
  end: number;
  raw: string;
  value: string;
}

/** Every labelled value in `text` (in order of the labels, then of position; spans may overlap across labels). */
function labelledValues(text: string, label: Label): Found[] {
  const found: Found[] = [];
  for (const m of text.matchAll(label.re)) {
    const keyStart = m.index;
    let i = keyStart + m[0].length;
    const before = text[keyStart - 1] ?? '';
    let context: Context;
    let quote = '';
    if (label.option) {
      if (text[i] === '=') i++;
      else if (text[i] === ' ' || text[i] === '\t') while (text[i] === ' ' || text[i] === '\t') i++;
      else continue;
      context = 'word';
    } else {
      const quotedKey = (before === '"' || before === "'") && text[i] === before;
      if (quotedKey) i++;
      while (text[i] === ' ' || text[i] === '\t') i++;
      const sep = text[i];
      if (sep !== '=' && sep !== ':') continue;
      const atLineStart = LINE_START.test(text.slice(Math.max(0, keyStart - 200), keyStart));
      if (sep === ':' && (COLON_PROSE.test(m[0]) || !(quotedKey || atLineStart))) continue;
      if (sep === '=' && text[i + 1] === '=') continue; // a comparison (==), not an assignment
      i++;
      while (text[i] === ' ' || text[i] === '\t') i++;
      if (quotedKey) context = 'json';
      else if (sep === '=' && (before === '"' || before === "'")) {
        context = 'quoted-assignment';
        quote = before;
      } else if (atLineStart) context = 'line';
      else context = 'word';
    }
    const end = valueEnd(text, i, context, quote);
    if (end <= i) continue;
    const raw = text.slice(i, end);
    const value = context === 'quoted-assignment' ? raw : unquote(raw);
    found.push({ kind: label.kind, key: m[0], start: i, end, raw, value });
  }
  return found;
}

/** A value worth removing: not empty, not a reference or a placeholder, long enough for its pattern. */
function isSecretValue(value: string, min = 1): boolean {
  const v = value.trim();
  return v !== '' && v.length >= min && !REFERENCE.test(v);
}

function shapeValue(groups: Record<string, string | undefined> | undefined): string | undefined {
  return groups?.dq ?? groups?.sq ?? groups?.v;
}

/** PEM private keys of every flavour (RSA, EC, OPENSSH, ENCRYPTED, plain PKCS#8); a block cut short runs to the end. */
const PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$(?![\s\S]))/g;

export type RedactionCounts = Record<SecretKind, number>;

export function emptyCounts(): RedactionCounts {
  return { 'api-key': 0, 'bearer-token': 0, 'hf-token': 0, password: 0, 'private-key': 0, 'known-secret': 0 };
}

/**
 * Redacts text and counts what it removed. Construct with the secrets known up front (anything from the
 * inventory's auth); the secrets the process holds (util/secrets.ts: the sudo password in every form a
 * host may echo it in) are always included. `learn` adds the values labels and shapes find in a text.
 */
export class Redactor {
  private readonly literals = new Set<string>();
  readonly counts: RedactionCounts = emptyCounts();

  constructor(known: Iterable<string> = []) {
    for (const k of known) this.remember(k);
    for (const k of heldSecretForms()) this.literals.add(k);
  }

  /** Records the secret values of a text (without counting) so they are redacted everywhere. */
  learn(text: string): void {
    for (const label of LABELS) {
      for (const f of labelledValues(text, label)) {
        if (!isSecretValue(f.value)) continue;
        this.remember(f.value);
        this.remember(singleQuoted(f.raw) ? f.raw.slice(singleQuoted(f.raw)!.open.length, -1) : f.raw);
      }
    }
    for (const p of SHAPES) {
      for (const m of text.matchAll(p.re)) {
        const v = shapeValue(m.groups);
        if (v !== undefined && isSecretValue(v, p.min)) this.remember(v);
      }
    }
  }

  /** Every known literal secret (for tests and for callers that scan finished output). */
  get known(): readonly string[] {
    return [...this.literals];
  }

  private remember(value: string): void {
    const v = value.trim();
    if (v.length >= MIN_LITERAL && !REFERENCE.test(v)) this.literals.add(v);
  }

  redact(text: string): string {
    let out = text.replace(PRIVATE_KEY, (_m, flavour: string) => {
      this.counts['private-key']++;
      return `-----BEGIN ${flavour}PRIVATE KEY-----\n${MARK('private-key')}\n-----END ${flavour}PRIVATE KEY-----`;
    });
    for (const label of LABELS) out = this.redactLabel(out, label);
    for (const p of SHAPES) {
      out = out.replace(p.re, (...args: unknown[]) => {
        const match = args[0] as string;
        const value = shapeValue(args[args.length - 1] as Record<string, string | undefined>);
        if (value === undefined || !isSecretValue(value, p.min)) return match;
        this.remember(value);
        this.counts[p.kind]++;
        // Replace the value only, from its last occurrence in the match (the label may contain it).
        const at = match.lastIndexOf(value);
        return `${match.slice(0, at)}${MARK(p.kind)}${match.slice(at + value.length)}`;
      });
    }
    // Longest first, so a secret that contains another is removed whole.
    for (const lit of [...this.literals].sort((a, b) => b.length - a.length)) {
      if (!out.includes(lit)) continue;
      const pieces = out.split(lit);
      this.counts['known-secret'] += pieces.length - 1;
      out = pieces.join(MARK('known-secret'));
    }
    return out;
  }

  /** The values one label finds, replaced whole (a single quoted value keeps its quotes: `"[REDACTED:…]"`). */
  private redactLabel(text: string, label: Label): string {
    let out = '';
    let from = 0;
    for (const f of labelledValues(text, label)) {
      if (f.start < from || !isSecretValue(f.value)) continue;
      this.remember(f.value);
      const q = singleQuoted(f.raw);
      if (q) this.remember(f.raw.slice(q.open.length, -1));
      else this.remember(f.raw);
      this.counts[f.kind]++;
      out += text.slice(from, f.start) + (q ? `${q.open}${MARK(f.kind)}${q.close}` : MARK(f.kind));
      from = f.end;
    }
    return out + text.slice(from);
  }

  /**
   * Redacts every string inside a JSON value (checks.json): labelled values are found in the text a
   * string holds, not in its JSON-escaped form, and the document stays valid JSON.
   */
  redactJson<T>(value: T): T {
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redact(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v === null || typeof v !== 'object') return v;
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    };
    return walk(value) as T;
  }

  /** Records the secret values of every string inside a JSON value. */
  learnJson(value: unknown): void {
    if (typeof value === 'string') this.learn(value);
    else if (Array.isArray(value)) for (const v of value) this.learnJson(v);
    else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) this.learnJson(v);
  }

  /** "3 API keys, 1 private key" — counts, never values. */
  describe(): string {
    const parts = SECRET_KINDS.filter((k) => this.counts[k] > 0).map((k) => `${this.counts[k]} × ${k}`);
    return parts.length > 0 ? parts.join(', ') : 'nothing matched';
  }
}

/**
 * Labelled values in already redacted text that are still not a redaction mark (the bundle's re-read:
 * a label whose value survived, whole or in part, means a redaction bug). Names the label, never the value.
 */
export function unredactedLabels(text: string): string[] {
  const left: string[] = [];
  for (const label of LABELS) {
    for (const f of labelledValues(text, label)) {
      if (isSecretValue(f.value)) left.push(f.key);
    }
  }
  return left;
}

/** One-shot helper: redact a single text with only its own patterns and the given known secrets. */
export function redactText(text: string, known: Iterable<string> = []): { text: string; counts: RedactionCounts } {
  const r = new Redactor(known);
  r.learn(text);
  const out = r.redact(text);
  return { text: out, counts: r.counts };
}
