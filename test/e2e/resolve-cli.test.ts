/** `l20-setup resolve` through the built binary: the JSON contract, the deciding lines, refusals and exit codes. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliEnv, ROOT } from '../helpers/cli.js';

const CORPUS = join(ROOT, 'test', 'fixtures', 'ssh-config');
const BASIC = join(CORPUS, 'basic', 'config');

interface ResolveJson {
  version: number;
  host: string;
  resolved: Record<string, unknown>;
  sources: Record<string, string | string[]>;
  warnings: string[];
}

describe('l20-setup resolve', () => {
  it('--json: values and the line that decided each, defaults named "default"', async () => {
    const env = cliEnv();
    const r = await cli(['resolve', 'gpu-a', '--ssh-config', BASIC, '--json'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as ResolveJson;
    expect(out.version).toBe(1);
    expect(out.host).toBe('gpu-a');
    // ~ is $HOME at run time (ssh reads the password database; the two agree on a normal login).
    const home = env.HOME as string;
    expect(out.resolved).toEqual({
      hostName: '10.0.0.11',
      port: 2222,
      user: 'ubuntu',
      identityFiles: [`${home}/.ssh/lab_ed25519`],
      userKnownHostsFiles: [`${home}/.ssh/known_hosts`, `${home}/.ssh/known_hosts2`],
      strictHostKeyChecking: 'ask',
      identitiesOnly: true,
      serverAliveInterval: 60,
      serverAliveCountMax: 2,
      proxyJump: null,
      proxyCommand: null,
      connectTimeout: null,
    });
    expect(out.sources).toMatchObject({
      hostName: `${BASIC}:4`,
      port: `${BASIC}:5`,
      user: `${BASIC}:6`,
      identityFiles: [`${BASIC}:11`],
      serverAliveInterval: `${BASIC}:12`,
      identitiesOnly: `${BASIC}:26`,
      strictHostKeyChecking: 'default',
      userKnownHostsFiles: 'default',
    });
    expect(out.warnings).toEqual([]);
  });

  it('plain text: a summary line, one row per field with its source, ProxyJump as a warning', async () => {
    const proxy = join(CORPUS, 'proxy', 'config');
    const r = await cli(['resolve', 'pj-full', '--ssh-config', proxy]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^pj-full → \S+@pj-full:22$/m);
    expect(r.stdout).toMatch(new RegExp(`^ {2}proxyJump +jumper@bastion\\.example:2222 +${proxy}:6$`, 'm'));
    expect(r.stdout).toMatch(/^ {2}port +22 +default$/m);
    const warning = /^warnings:\n {2}.*proxy\/config:6: ProxyJump jumper@bastion\.example:2222: l20-setup cannot/m;
    expect(r.stdout).toMatch(warning);
  });

  it('reads ~/.ssh/config of HOME by default, then the system config', async () => {
    const home = mkdtempSync(join(tmpdir(), 'l20-resolve-home-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    writeFileSync(join(home, '.ssh', 'config'), 'Host lab-a\n  HostName 127.0.0.9\n  Port 2201\n', { mode: 0o600 });
    const r = await cli(['resolve', 'lab-a', '--json'], cliEnv(home));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as ResolveJson & { filesRead: string[] };
    expect(out.resolved).toMatchObject({ hostName: '127.0.0.9', port: 2201 });
    expect(out.sources.port).toBe(`${home}/.ssh/config:3`);
    expect(out.filesRead[0]).toBe(`${home}/.ssh/config`);
  });

  it('exit 2 with file, line and reason where OpenSSH refuses the config', async () => {
    const bad = join(CORPUS, 'refused-bad-port', 'config');
    const r = await cli(['resolve', 'target', '--ssh-config', bad]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${bad} line 3: Bad port '99999'`);
    const unknown = join(CORPUS, 'refused-unknown-keyword', 'config');
    const u = await cli(['resolve', 'target', '--ssh-config', unknown, '--json']);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain(`${unknown} line 4: Bad configuration option: frobnicatewidgets`);
    const missing = await cli(['resolve', 'target', '--ssh-config', join(CORPUS, 'no-such-file')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no-such-file: Can't open user config file/);
  });

  it('--help describes the verb; a missing HOST is a usage error', async () => {
    const help = await cli(['resolve', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: l20-setup resolve HOST \[--ssh-config FILE\] \[--json\]/);
    const main = await cli(['--help']);
    expect(main.stdout).toMatch(/l20-setup resolve HOST/);
    const none = await cli(['resolve']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/usage: l20-setup resolve HOST/);
  });
});
