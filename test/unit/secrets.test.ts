/**
 * The held-secret scrubber (issue 16 item 7): a secret the process holds is removed from captured output in
 * its plain form and in the forms a host echoes it in (single-quoted, backslash-escaped, double-quoted,
 * JSON), also when a chunk boundary cuts it; at the transport entry, a LocalHost's RunResult and its live
 * output callbacks never carry it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/transport/local.js';
import { quoteWord } from '../../src/transport/quote.js';
import {
  StreamScrubber,
  echoForms,
  forgetHeldSecrets,
  heldSecretForms,
  registerSecret,
  scrub,
} from '../../src/util/secrets.js';

const SECRET = `pa ss'w"o$rd\\;x`;

afterEach(() => forgetHeldSecrets());

describe('scrub', () => {
  it('removes the plain value and each echo form', () => {
    registerSecret(SECRET, 'sudo-password');
    const forms = echoForms(SECRET);
    expect(forms).toEqual(
      expect.arrayContaining([
        SECRET,
        `pa ss'\\''w"o$rd\\;x`,
        `pa\\ ss\\'w\\"o\\$rd\\\\\\;x`,
        `pa ss'w\\"o\\$rd\\\\;x`,
        JSON.stringify(SECRET).slice(1, -1),
      ]),
    );
    const text = [
      `NCCL_PASSWORD=${SECRET}`,
      `set -x: ${quoteWord(SECRET)}`,
      `printf %q: pa\\ ss\\'w\\"o\\$rd\\\\\\;x`,
      JSON.stringify({ pw: SECRET }),
      `"${SECRET.replace(/["\\$`]/g, (c) => `\\${c}`)}"`,
    ].join('\n');
    const out = scrub(text);
    for (const f of forms) expect(out).not.toContain(f);
    expect(out.match(/\[REDACTED:sudo-password\]/g)).toHaveLength(5);
    expect(out).toContain('NCCL_PASSWORD=[REDACTED:sudo-password]');
  });

  it('leaves text alone with nothing held, and ignores values too short to scrub', () => {
    expect(scrub(`x ${SECRET}`)).toBe(`x ${SECRET}`);
    registerSecret('root1', 'sudo-password');
    expect(heldSecretForms()).toEqual([]);
    expect(scrub('uid=0(root1)')).toBe('uid=0(root1)');
  });

  it('a stream cut inside the secret, at every position, gives the same text as one scrub', () => {
    registerSecret('correct-horse-battery', 'sudo-password');
    const text = 'a\ncorrect-horse-battery here, and correct-horse and correct-horse-battery';
    const whole = scrub(text);
    for (let cut = 0; cut <= text.length; cut++) {
      for (let cut2 = cut; cut2 <= text.length; cut2 += 7) {
        const s = new StreamScrubber();
        const got = s.push(text.slice(0, cut)) + s.push(text.slice(cut, cut2)) + s.push(text.slice(cut2)) + s.end();
        expect(got, `cut at ${cut}, ${cut2}`).toBe(whole);
      }
    }
    // Only a possible start of the secret is held back.
    const s = new StreamScrubber();
    expect(s.push('done\ncorrect-ho')).toBe('done\n');
    expect(s.push('use')).toBe('correct-house');
  });
});

describe('at the transport entry', () => {
  it('a LocalHost given the sudo password scrubs it from its results and live output', async () => {
    const password = 'planted-Sudo pw;1';
    const host = new LocalHost({ name: 'local', sudoPassword: password });
    const live: string[] = [];
    const r = await host.run(
      {
        script: `printf 'NCCL_X=%s\\n' "$1"; printf '%s' "$1" | cut -c1-5; printf '%s\\n' "$1" >&2\n`,
        args: [password],
      },
      { onStdout: (c) => live.push(c), onStderr: (c) => live.push(c) },
    );
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('NCCL_X=[REDACTED:sudo-password]\nplant\n');
    expect(r.stderr).toBe('[REDACTED:sudo-password]\n');
    expect(live.join('')).not.toContain(password);
    expect(live.join('')).toContain('[REDACTED:sudo-password]');
    await host.close();
  });
});
