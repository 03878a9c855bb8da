/**
 * The secrets this process holds (the sudo password, an SSH key passphrase) and the one scrubber that
 * removes them from everything the tool captures. A host can echo a held secret back by accident — an
 * operator who pasted the sudo password into ~/.nccl.conf, a script that prints its environment — and what
 * a host prints goes into the session log, the TUI, the bundle and the report. So the transport scrubs
 * every command's output where it enters the process (transport/output.ts), before anyone reads it.
 *
 * What is scrubbed: the value itself and the forms a host is likely to echo it in, each of which contains
 * the value's characters in order with escapes: POSIX single-quoted (`'` → `'\''`, what quoteWord and
 * `set -x` print), backslash-escaped (bash's `printf %q`, `a\ b`), double-quoted (`"`, `\`, `$`, `` ` `` escaped)
 * and JSON-escaped. Encodings that hide the characters (base64, URL-encoding, hex) are not: nothing the
 * tool runs prints a secret that way, and an encoding search would blank ordinary output.
 */

/**
 * Shorter values are not scrubbed: a 1–5 character value ("root", "1234") would blank ordinary words and
 * numbers in what the checks parse. Six is pam_unix's default minimum for a password passwd accepts.
 */
export const MIN_SCRUB_LENGTH = 6;

export type HeldSecretLabel = 'sudo-password' | 'ssh-passphrase' | 'api-key' | 'hf-token';

export const heldMark = (label: HeldSecretLabel): string => `[REDACTED:${label}]`;

interface Held {
  /** Every form to search for, longest first (a form that contains another goes first). */
  forms: string[];
  mark: string;
}

const held = new Map<string, Held>();
/** Every form of every held secret with its mark, longest first, rebuilt on registration. */
let ordered: Array<{ form: string; mark: string }> = [];
/** The longest form: a stream holds back at most this many characters minus one. */
let longest = 0;

/** The forms a host may print `value` in (see the header), without duplicates. */
export function echoForms(value: string): string[] {
  const forms = new Set<string>([
    value,
    value.replace(/'/g, `'\\''`),
    value.replace(/[^A-Za-z0-9_@%+=:,./-]/g, (c) => `\\${c}`),
    value.replace(/["\\$`]/g, (c) => `\\${c}`),
    JSON.stringify(value).slice(1, -1),
  ]);
  return [...forms].filter((f) => f.length >= MIN_SCRUB_LENGTH);
}

/**
 * Registers a secret the process holds: from now on `scrub` removes it (in each of its echo forms). Values
 * shorter than MIN_SCRUB_LENGTH are ignored (see there).
 */
export function registerSecret(value: string, label: HeldSecretLabel): void {
  if (value.length < MIN_SCRUB_LENGTH || held.has(value)) return;
  held.set(value, { forms: echoForms(value), mark: heldMark(label) });
  ordered = [...held.values()].flatMap((h) => h.forms.map((form) => ({ form, mark: h.mark })));
  ordered.sort((a, b) => b.form.length - a.form.length);
  longest = ordered.reduce((n, o) => Math.max(n, o.form.length), 0);
}

/** Every held secret in every form scrubbed (for the bundle's re-read and for tests): literal strings. */
export function heldSecretForms(): readonly string[] {
  return ordered.map((o) => o.form);
}

/** Forgets every held secret (tests that register their own). */
export function forgetHeldSecrets(): void {
  held.clear();
  ordered = [];
  longest = 0;
}

/** `text` without any held secret, each occurrence replaced by its mark. */
export function scrub(text: string): string {
  if (ordered.length === 0) return text;
  let out = text;
  for (const { form, mark } of ordered) {
    if (out.includes(form)) out = out.split(form).join(mark);
  }
  return out;
}

/**
 * Scrubs a stream that arrives in chunks, where a secret may be cut between two of them: each push returns
 * what is safe to pass on now and holds back the shortest tail that could still be the start of a secret
 * (nothing, unless the chunk ends in the first characters of one). `end` returns the rest.
 */
export class StreamScrubber {
  private pending = '';

  push(chunk: string): string {
    if (ordered.length === 0 && this.pending === '') return chunk;
    const text = scrub(this.pending + chunk);
    const keep = heldPrefixLength(text);
    this.pending = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  end(): string {
    const rest = scrub(this.pending);
    this.pending = '';
    return rest;
  }
}

/** The length of the longest tail of `text` that is a proper prefix of a held form. */
function heldPrefixLength(text: string): number {
  for (let n = Math.min(longest - 1, text.length); n > 0; n--) {
    const tail = text.slice(text.length - n);
    if (ordered.some((o) => o.form.length > n && o.form.startsWith(tail))) return n;
  }
  return 0;
}
