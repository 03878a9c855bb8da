/** The bundle's one redaction function: every secret shape, literals learned once, references and prose kept. */
import { describe, expect, it } from 'vitest';
import { Redactor, redactText } from '../../src/bundle/redact.js';
import { tar, untar } from '../../src/bundle/tar.js';

const KEY = '5d536731d861751075f9aa1e4b290c3f28e1640977e32ff1fb6ada9bf16a6624';

describe('redactText', () => {
  it('removes the vLLM API key from env files, command lines and headers', () => {
    const { text, counts } = redactText(
      [
        `L20_API_KEY=${KEY}`,
        `OPENAI_API_KEY="${KEY}x"`,
        `vllm serve /m --port 8000 --api-key ${KEY}y`,
        `vllm serve /m --api-key=${KEY}z`,
        `curl -H 'Authorization: Bearer sk-abcdefabcdefabcdefabcdef' http://10.0.0.1:8000/v1/models`,
        `{"api_key": "zzzzzzzzzzzz1234"}`,
      ].join('\n'),
    );
    expect(text).toBe(
      [
        'L20_API_KEY=[REDACTED:api-key]',
        'OPENAI_API_KEY="[REDACTED:api-key]"',
        'vllm serve /m --port 8000 --api-key [REDACTED:api-key]',
        'vllm serve /m --api-key=[REDACTED:api-key]',
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' http://10.0.0.1:8000/v1/models",
        '{"api_key": "[REDACTED:api-key]"}',
      ].join('\n'),
    );
    expect(counts['api-key']).toBe(5);
    expect(counts['bearer-token']).toBe(1);
  });

  it('keeps variable references, which are not secrets', () => {
    const src = [
      '  --api-key ${L20_API_KEY}',
      'OPENAI_API_KEY=$L20_API_KEY /opt/l20/venv/bin/vllm bench serve',
      'curl -fsS -H "Authorization: Bearer $L20_API_KEY" http://x/v1/models',
      'The operator sends a Bearer token with each request.',
    ].join('\n');
    const { text, counts } = redactText(src);
    expect(text).toBe(src);
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });

  it('removes Hugging Face tokens labelled or bare, and passwords', () => {
    const { text, counts } = redactText(
      [
        'HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123',
        'hf download Qwen/Qwen2.5-7B-Instruct --token hf_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876',
        '# pasted hf_QqQqQqQqQqQqQqQqQqQqQqQq here',
        'password=s3cr3t!',
        'DB_PASSWORD: "with spaces inside"',
        'mysql --password=hunter22 -u root',
      ].join('\n'),
    );
    expect(text).toBe(
      [
        'HF_TOKEN=[REDACTED:hf-token]',
        'hf download Qwen/Qwen2.5-7B-Instruct --token [REDACTED:api-key]',
        '# pasted [REDACTED:hf-token] here',
        'password=[REDACTED:password]',
        'DB_PASSWORD: "[REDACTED:password]"',
        'mysql --password=[REDACTED:password] -u root',
      ].join('\n'),
    );
    expect(counts['hf-token']).toBe(2);
    expect(counts.password).toBe(3);
  });

  it('replaces private-key blocks whole, also one cut short at the end of the output', () => {
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1\nabcdef\n-----END RSA PRIVATE KEY-----';
    const { text, counts } = redactText(`before\n${pem}\nafter\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\ntruncated`);
    expect(text).toBe(
      'before\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED:private-key]\n-----END RSA PRIVATE KEY-----\nafter\n-----BEGIN PRIVATE KEY-----\n[REDACTED:private-key]\n-----END PRIVATE KEY-----',
    );
    expect(counts['private-key']).toBe(2);
    expect(text).not.toContain('MIIE');
  });
});

describe('Redactor across files', () => {
  it('removes a value learned in one file wherever it appears unlabelled in another', () => {
    const r = new Redactor();
    const env = `L20_API_KEY=${KEY}\n`;
    const ps = `642 l20 /opt/l20/venv/bin/vllm serve /m --host 10.0.0.1 ${KEY}\njournal: request from key ${KEY.slice(0, 64)}`;
    r.learn(ps);
    r.learn(env);
    // ps is redacted before env: the literal is known already from learn().
    expect(r.redact(ps)).toBe(
      '642 l20 /opt/l20/venv/bin/vllm serve /m --host 10.0.0.1 [REDACTED:known-secret]\njournal: request from key [REDACTED:known-secret]',
    );
    expect(r.redact(env)).toBe('L20_API_KEY=[REDACTED:api-key]\n');
    expect(r.counts['known-secret']).toBe(2);
    expect(r.describe()).toBe('1 × api-key, 2 × known-secret');
    expect(r.describe()).not.toContain(KEY);
  });

  it('redacts secrets given up front (a sudo password) and ignores short ones', () => {
    const r = new Redactor(['correct-horse-battery', 'abc']);
    expect(r.redact('echo correct-horse-battery | sudo -S true; abc')).toBe(
      'echo [REDACTED:known-secret] | sudo -S true; abc',
    );
  });
});

describe('tar', () => {
  it('round-trips members in order, long paths through the ustar prefix', () => {
    const long = `${'d'.repeat(120)}/file.txt`;
    const a = tar(
      [
        { name: 'SUMMARY.md', content: '# hi\n' },
        { name: 'h/' },
        { name: 'h/x.txt', content: 'x'.repeat(700) },
        { name: long, content: 'y' },
      ],
      0,
    );
    expect(a.length % 512).toBe(0);
    const m = untar(a);
    expect(m.map((e) => e.name)).toEqual(['SUMMARY.md', 'h/', 'h/x.txt', long]);
    expect(m[2]!.content.toString()).toBe('x'.repeat(700));
    expect(m[1]!.dir).toBe(true);
  });
});
