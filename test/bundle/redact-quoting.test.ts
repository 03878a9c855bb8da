/**
 * Redaction of labelled values with every quote and separator (issue 16 item 7): a value is removed whole
 * as the file it sits in reads it — shell words with quotes and escapes, JSON and YAML scalars, an env
 * file's rest of the line — never cut at the first `'`, `"`, space, `;` or `,`. Our own fix and summary
 * texts (sudoers' `NOPASSWD:ALL`, "needs a password: …") come out unchanged.
 */
import { describe, expect, it } from 'vitest';
import { Redactor, redactText, unredactedLabels } from '../../src/bundle/redact.js';
import { sudoCheck } from '../../checks/os/checks.js';
import { PLANTED } from '../helpers/planted-secrets.js';
import type { OsFacts } from '../../checks/os/facts.js';
import type { HostCheckDef } from '../../src/engine/types.js';

describe('labelled values with quotes and separators', () => {
  it('removes every planted value whole: none of its words survives, the text around it does', () => {
    expect(PLANTED.every((p) => p.words.length >= 3)).toBe(true);
    const text = PLANTED.map((p) => p.line).join('\n');
    const r = new Redactor();
    r.learn(text);
    const out = r.redact(text);
    const left = PLANTED.flatMap((p) => p.words.filter((w) => out.includes(w)).map((w) => `${w} (from ${p.line})`));
    expect(left).toEqual([]);
    for (const p of PLANTED) if (p.kept) expect(out).toContain(p.kept);
    expect(out.split('\n')).toHaveLength(PLANTED.length);
    // The re-read finds nothing left behind a label.
    expect(unredactedLabels(out)).toEqual([]);
    // Each line was redacted where its label is (not only as a literal learned elsewhere).
    expect(out.split('\n').every((l) => /\[REDACTED:(password|api-key|hf-token)\]/.test(l))).toBe(true);
  });

  it('a single quoted value keeps its quotes, JSON stays JSON', () => {
    expect(redactText(`PASSWORD='a b;c,dddd'`).text).toBe(`PASSWORD='[REDACTED:password]'`);
    expect(redactText(String.raw`PASSWORD="x\"y zzzz"`).text).toBe('PASSWORD="[REDACTED:password]"');
    const json = JSON.stringify({ password: 'p "q" ;, r', port: 1 });
    expect(JSON.parse(redactText(json).text)).toEqual({ password: '[REDACTED:password]', port: 1 });
  });

  it('a value cut short by the old shape is caught by the re-read', () => {
    // What the old redaction left: the value's first word only.
    expect(unredactedLabels(`PASSWORD='[REDACTED:password] bravo;charlie'`)).toEqual(['PASSWORD']);
    expect(unredactedLabels('PASSWORD=[REDACTED:password]\n"password": "[REDACTED:password]"')).toEqual([]);
  });

  it('redactJson redacts the strings inside a document, not its JSON escaping', () => {
    const r = new Redactor();
    const doc = { checks: [{ evidence: 'PASSWORD="foxtrot\\"golf hotel"\nnext line', n: 2 }] };
    r.learnJson(doc);
    const out = r.redactJson(doc);
    expect(out).toEqual({ checks: [{ evidence: 'PASSWORD="[REDACTED:password]"\nnext line', n: 2 }] });
  });
});

describe('prose and our own fix texts stay readable', () => {
  it('keywords followed by a colon in prose are not values', () => {
    const prose = [
      'add `<user> ALL=(ALL) NOPASSWD:ALL` with `sudo visudo -f /etc/sudoers.d/l20-setup`',
      'sudo needs a password: steps run as root unattended',
      'passwd:         files systemd',
      'set VLLM_API_KEY=<key> in /etc/l20/vllm.env',
      'PWD=/home/l20 OLDPWD=/root',
      'if [ "$TOKEN" == "" ]; then',
    ].join('\n');
    const { text, counts } = redactText(prose);
    expect(text).toBe(prose);
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });

  it('the os.sudo fix text passes through the redactor unchanged', () => {
    const facts = { sudo: { ok: false, evidence: 'sudo -n true → exit 1' } } as OsFacts;
    const v = (sudoCheck as HostCheckDef<OsFacts>).evaluate(facts, 'a', {} as never);
    expect(v.fix).toBeDefined();
    expect(redactText(v.fix!).text).toBe(v.fix);
    expect(redactText(v.summary).text).toBe(v.summary);
  });
});
