/**
 * The bundle with values planted in every quote and separator (issue 16 item 7): the lines of
 * test/helpers/planted-secrets.ts in an env file and ~/.nccl.conf on the lab, the sudo password held by the hosts
 * (so scrubbed where output enters) — no word of any planted value is in any byte of the archive, unpacked
 * with the system's tar. And the re-read refuses an archive that still holds a held secret, or a value left
 * behind a label (what the old redaction, cut at the first quote, let through).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab } from '../../lab/index.js';
import { hostsFromConfig, labInventory } from '../../src/target.js';
import type { Host } from '../../src/transport/types.js';
import type { ClusterConfig } from '../../src/config/schema.js';
import { assertNoSecret, buildBundle, type Bundle } from '../../src/bundle/index.js';
import { tarGz } from '../../src/bundle/tar.js';
import { PLANTED } from '../helpers/planted-secrets.js';

const SUDO_PASSWORD = `held "sudo" pw;with,every'sep`;

let lab: Awaited<ReturnType<typeof startLab>>;
let dir: string;
let config: ClusterConfig;
let hosts: Host[];
let bundle: Bundle;
let files: Array<{ path: string; bytes: Buffer }>;

beforeAll(async () => {
  lab = await startLab({ speed: 'max', scenario: 'ready' });
  dir = mkdtempSync(join(tmpdir(), 'l20-bundle-planted-'));
  config = labInventory(lab, dir).config;
  hosts = hostsFromConfig(config, { sudoPassword: SUDO_PASSWORD });
  const head = hosts[0]!;
  const lines = `${PLANTED.map((p) => p.line).join('\n')}\nECHOED=${SUDO_PASSWORD}\n`;
  await head.run({ argv: ['tee', '/etc/l20/planted.env'] }, { sudo: true, stdin: lines });
  await head.run({ argv: ['tee', '/home/l20/.nccl.conf'] }, { stdin: lines });
  bundle = await buildBundle({ config, hosts, source: 'lab ready', runId: '20260101T000000Z', deltaSeconds: 0 });
  const archive = join(dir, 'b.tar.gz');
  writeFileSync(archive, bundle.archive);
  const out = join(dir, 'x');
  execFileSync('mkdir', [out]);
  execFileSync('tar', ['-xzf', archive, '-C', out]);
  files = readdirSync(out, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
    .map((f) => ({ path: f.slice(out.length + 1), bytes: readFileSync(f) }));
}, 240_000);

afterAll(async () => {
  await Promise.all((hosts ?? []).map((h) => h.close()));
  await lab?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('bundle with planted quoted and escaped values', () => {
  it('holds no word of any planted value and not the held sudo password', () => {
    const words = [...PLANTED.flatMap((p) => p.words), SUDO_PASSWORD, 'held "sudo"'];
    const left = files.flatMap((f) =>
      words.filter((w) => f.bytes.includes(Buffer.from(w))).map((w) => `${w} in ${f.path}`),
    );
    expect(left).toEqual([]);
    // They were collected: the env file and nccl.conf of the head host are there, redacted in place.
    const env = files.find((f) => f.path === 'l20-n1/env-files.txt')!.bytes.toString();
    expect(env).toContain('==> /etc/l20/planted.env <==');
    expect(env).toContain(`PASSWORD='[REDACTED:password]'`);
    expect(env).toContain('ECHOED=[REDACTED:sudo-password]');
    const conf = files.find((f) => f.path === 'l20-n1/nccl-conf.txt')!.bytes.toString();
    expect(conf).toContain('NCCL_PASSWORD=[REDACTED:password]');
    // checks.json stays JSON.
    expect(() => JSON.parse(files.find((f) => f.path === 'checks.json')!.bytes.toString())).not.toThrow();
  });

  it('the re-read refuses a held secret or a value left behind a label', () => {
    expect(() => assertNoSecret(bundle.archive, bundle.redactor.known)).not.toThrow();
    const leaked = tarGz([{ name: 'SUMMARY.md', content: `echo ${SUDO_PASSWORD}\n` }], 0);
    expect(() => assertNoSecret(leaked, [])).toThrow(/a secret survived redaction in SUMMARY\.md/);
    const cutShort = `PASSWORD='[REDACTED:password] bravo;charlie'\n`;
    const cut = tarGz([{ name: 'h/' }, { name: 'h/env.txt', content: cutShort }], 0);
    expect(() => assertNoSecret(cut, [])).toThrow(/after "PASSWORD" survived redaction in h\/env\.txt/);
    const json = tarGz([{ name: 'checks.json', content: JSON.stringify({ evidence: 'DB_PASSWORD="x\\"y z"' }) }], 0);
    expect(() => assertNoSecret(json, [])).toThrow(/in checks\.json/);
  });
});
