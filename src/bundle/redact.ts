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
 */

export type SecretKind = 'api-key' | 'bearer-token' | 'hf-token' | 'password' | 'private-key' | 'known-secret';

export const SECRET_KINDS: readonly SecretKind[] = ['api-key', 'bearer-token', 'hf-token', 'password', 'private-key', 'known-secret'];

export const MARK = (kind: SecretKind): string => `[REDACTED:${kind}]`;

/** Values that are references, not secrets: `${L20_API_KEY}`, `$TOKEN`, an earlier redaction. */
const REFERENCE = /^(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\[REDACTED:[a-z-]+\])$/;

/** Shorter values are not worth remembering as literals (they would blank ordinary words). */
const MIN_LITERAL = 8;

interface Pattern {
  kind: SecretKind;
  /** Group `v` is the secret; the rest of the match is kept. */
  re: RegExp;
  /** Shorter values are prose, not secrets (a bare "Bearer" in a sentence). */
  min?: number;
}

// A value: double-quoted, single-quoted or a run of non-space characters (no closing quote or comma
// of a surrounding structure).
const VALUE = String.raw`(?:"(?<dq>[^"\n]*)"|'(?<sq>[^'\n]*)'|(?<v>[^\s"',;]+))`;

const PATTERNS: readonly Pattern[] = [
  // Environment files, unit Environment= lines, shell exports: NAME=value or NAME: value.
  { kind: 'api-key', re: new RegExp(String.raw`\b(?:[A-Z0-9_]*API_?KEY)"?\s*[=:]\s*${VALUE}`, 'gi') },
  { kind: 'hf-token', re: new RegExp(String.raw`\b(?:HF_TOKEN|HUGGING_FACE_HUB_TOKEN|HF_API_TOKEN)\s*[=:]\s*${VALUE}`, 'g') },
  { kind: 'api-key', re: new RegExp(String.raw`\b(?:[A-Z0-9_]*(?:_TOKEN|_SECRET|SECRET_KEY))\s*[=:]\s*${VALUE}`, 'g') },
  // Command lines: --api-key X, --api-key=X, --hf-token X, --token X.
  { kind: 'api-key', re: new RegExp(String.raw`--(?:api-key|hf-token|token|secret)(?:=|\s+)${VALUE}`, 'g') },
  { kind: 'bearer-token', re: new RegExp(String.raw`\bAuthorization:\s*(?:Bearer|Basic|Token)\s+${VALUE}`, 'gi') },
  { kind: 'bearer-token', re: new RegExp(String.raw`\bBearer\s+${VALUE}`, 'g'), min: 16 },
  { kind: 'password', re: new RegExp(String.raw`\b(?:[A-Za-z0-9_]*(?:password|passwd|passphrase|pwd))\s*[=:]\s*${VALUE}`, 'gi') },
  { kind: 'password', re: new RegExp(String.raw`--(?:password|passphrase)(?:=|\s+)${VALUE}`, 'gi') },
  // Secrets recognisable by shape alone, labelled or not.
  { kind: 'hf-token', re: /(?<v>\bhf_[A-Za-z0-9]{20,})/g },
  { kind: 'api-key', re: /(?<v>\bsk-[A-Za-z0-9_-]{20,})/g },
];

/** PEM private keys of every flavour (RSA, EC, OPENSSH, ENCRYPTED, plain PKCS#8); a block cut short runs to the end. */
const PRIVATE_KEY = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$(?![\s\S]))/g;

export type RedactionCounts = Record<SecretKind, number>;

export function emptyCounts(): RedactionCounts {
  return { 'api-key': 0, 'bearer-token': 0, 'hf-token': 0, password: 0, 'private-key': 0, 'known-secret': 0 };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Redacts text and counts what it removed. Construct with the secrets known up front (the sudo
 * password, anything from the inventory's auth); `learn` adds the values patterns find in a text.
 */
export class Redactor {
  private readonly literals = new Set<string>();
  readonly counts: RedactionCounts = emptyCounts();

  constructor(known: Iterable<string> = []) {
    for (const k of known) this.remember(k);
  }

  /** Records the secret values of a text (without counting) so they are redacted everywhere. */
  learn(text: string): void {
    for (const p of PATTERNS) {
      for (const m of text.matchAll(p.re)) {
        const v = m.groups?.dq ?? m.groups?.sq ?? m.groups?.v;
        if (v !== undefined && v.length >= (p.min ?? 1)) this.remember(v);
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
    for (const p of PATTERNS) {
      out = out.replace(p.re, (...args: unknown[]) => {
        const match = args[0] as string;
        const groups = args[args.length - 1] as Record<string, string | undefined>;
        const value = groups.dq ?? groups.sq ?? groups.v;
        if (value === undefined || value === '' || REFERENCE.test(value) || value.length < (p.min ?? 1)) return match;
        this.remember(value);
        this.counts[p.kind]++;
        // Replace the value only, from its last occurrence in the match (the label may contain it).
        const at = match.lastIndexOf(value);
        return `${match.slice(0, at)}${MARK(p.kind)}${match.slice(at + value.length)}`;
      });
    }
    // Longest first, so a secret that contains another is removed whole.
    for (const lit of [...this.literals].sort((a, b) => b.length - a.length)) {
      out = out.replace(new RegExp(escapeRegExp(lit), 'g'), () => {
        this.counts['known-secret']++;
        return MARK('known-secret');
      });
    }
    return out;
  }

  /** "3 API keys, 1 private key" — counts, never values. */
  describe(): string {
    const parts = SECRET_KINDS.filter((k) => this.counts[k] > 0).map((k) => `${this.counts[k]} × ${k}`);
    return parts.length > 0 ? parts.join(', ') : 'nothing matched';
  }
}

/** One-shot helper: redact a single text with only its own patterns and the given known secrets. */
export function redactText(text: string, known: Iterable<string> = []): { text: string; counts: RedactionCounts } {
  const r = new Redactor(known);
  r.learn(text);
  const out = r.redact(text);
  return { text: out, counts: r.counts };
}
