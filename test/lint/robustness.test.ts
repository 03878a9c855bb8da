/** Lint never throws: random bytes, binaries, empty files, a 1 MB line, broken syntax, unreadable paths. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lintFiles, lintText, runLint } from '../../src/lint/index.js';
import { configKinds } from '../../src/doctor/kinds/config.js';

const tmp = mkdtempSync(join(tmpdir(), 'l20-lint-rob-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const rnd = prng(42);
const randomBytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(rnd() * 256)));
const randomText = (n: number): string =>
  Array.from(
    { length: n },
    () =>
      ' \n\t"\'\\$`(){}[]<>|&;#=:-_/.,*?!~0123456789abcdefNCCL_sudomlnx_qosray startvllm serve--tp\u4e2d'[
        Math.floor(rnd() * 80)
      ],
  ).join('');

describe('robustness', () => {
  const cases: Array<[string, Buffer | string]> = [
    ['empty', ''],
    ['random bytes', randomBytes(64 * 1024)],
    ['binary with NULs', Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01\x00'), randomBytes(4096)])],
    ['1 MB line', 'NCCL_IB_HCA=' + 'mlx5_0:2,'.repeat(120_000)],
    ['1 MB shell line', 'sudo mlnx_qos -i bond0 ' + '--pfc 0,0,0,1,0,0,0,0 '.repeat(50_000)],
    ['1 MB prose line', '提示：禁用防火墙 sudo ufw disable iftop '.repeat(30_000)],
    ['unclosed quotes', 'echo "abc\nvllm serve x --host 0.0.0.0\n\'\n$(\n`\n'],
    ['unclosed heredoc', 'cat <<EOF > /etc/nccl.conf\nNCCL_DEBUG=INFO\n'],
    ['deep parentheses', '('.repeat(20_000) + 'LLM(' + '['.repeat(20_000)],
    ['yaml with tabs', 'network:\n\tethernets:\n\t\tens1f0: {mtu: 9000\n'],
    ['yaml bomb-ish anchors', 'network: &a\n  bonds: &b\n    bond0: {interfaces: [*a, *b]}\n'],
    ['nested loops without done', 'for a in 1 2; do for b in 3 4; do mlnx_qos -i bond$a$b --trust dscp\n'],
    ['CRLF and ANSI', '\u001b[31mNCCL_DEBUG=INFO\u001b[0m\r\nNCCL_IB_GID_INDEX=3\r\n'],
  ];

  it.each(cases)('lintText: %s', (_name, input) => {
    const text = typeof input === 'string' ? input : input.toString('utf8');
    const t0 = Date.now();
    const r = lintText(text);
    expect(typeof r.kind).toBe('string');
    expect(Array.isArray(r.findings)).toBe(true);
    for (const f of r.findings) expect(f.evidence.length).toBeLessThanOrEqual(2000);
    expect(Date.now() - t0).toBeLessThan(15_000);
    for (const k of configKinds) expect(() => k.detect(text)).not.toThrow();
  });

  it('random texts from shell/config alphabets never throw', () => {
    for (let i = 0; i < 200; i++) expect(() => lintText(randomText(200 + Math.floor(rnd() * 2000)))).not.toThrow();
  });

  it('lintFiles reads binary and random files without throwing; binary is not checked', async () => {
    const paths = cases.map(([, data], i) => {
      const p = join(tmp, `case-${i}`);
      writeFileSync(p, data);
      return p;
    });
    const report = await lintFiles(paths);
    expect(report.files).toHaveLength(cases.length);
    expect(report.files[2]?.kind).toBe('binary');
    expect(report.files[2]?.findings).toEqual([]);
    expect(report.files[0]?.kind).toBe('empty');
  });

  it('an unreadable file: a message naming it and exit status 2; the other files are still linted', async () => {
    const good = join(tmp, 'good.conf');
    writeFileSync(good, 'NCCL_IB_GID_INDEX=3\n');
    const missing = join(tmp, 'does-not-exist.conf');
    const dir = join(tmp, 'a-directory');
    mkdirSync(dir);
    let out = '';
    const code = await runLint({ files: [good, missing, dir], json: false, color: false, write: (s) => (out += s) });
    expect(code).toBe(2);
    expect(out).toContain(`${missing}: cannot read: no such file`);
    expect(out).toContain(`${dir}: is a directory`);
    expect(out).toContain('R05');
    let json = '';
    expect(await runLint({ files: [missing], json: true, color: false, write: (s) => (json += s) })).toBe(2);
    expect(JSON.parse(json).files[0]).toMatchObject({ file: missing, kind: 'unreadable', findings: [] });
  });

  it('a path through a regular file (ENOTDIR) is reported, not thrown', async () => {
    // Permission errors cannot be produced for root, who runs CI; ENOTDIR takes the same error path.
    const file = join(tmp, 'plain.conf');
    writeFileSync(file, 'NCCL_DEBUG=WARN\n');
    const p = join(file, 'inside.yaml');
    let out = '';
    expect(await runLint({ files: [p], json: false, color: false, write: (s) => (out += s) })).toBe(2);
    expect(out).toContain(`${p}: cannot read:`);
  });

  it('no files: usage and exit status 2', async () => {
    let out = '';
    expect(await runLint({ files: [], json: false, color: false, write: (s) => (out += s) })).toBe(2);
    expect(out).toMatch(/no file given/);
  });
});
