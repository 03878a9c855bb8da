/** `l20-setup resolve` through the built binary: the JSON contract, the deciding lines, refusals and exit codes. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, cliEnv, ROOT } from '../helpers/cli.js';

const CORPUS = join(ROOT, 'test', 'fixtures', 'ssh-config');
const BASIC = join(CORPUS, 'basic', 'config');

/** The real ssh's path, for a stand-in that wraps it. */
function realSsh(): string {
  return execFileSync('sh', ['-c', 'command -v ssh'], { encoding: 'utf8' }).trim();
}

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

  it('plain text: a summary line, one row per field with its source, then the path through the jump host', async () => {
    const proxy = join(CORPUS, 'proxy', 'config');
    const r = await cli(['resolve', 'pj-full', '--ssh-config', proxy]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^pj-full → \S+@pj-full:22$/m);
    expect(r.stdout).toMatch(new RegExp(`^ {2}proxyJump +jumper@bastion\\.example:2222 +${proxy}:6$`, 'm'));
    expect(r.stdout).toMatch(/^ {2}port +22 +default$/m);
    // Jump hosts are followed now: no "cannot follow it yet" warning, the path instead.
    expect(r.stdout).not.toMatch(/cannot follow/);
    const hop = `  hop 1  bastion.example  jumper@bastion.example:2222  from ${proxy}:6 ProxyJump`;
    expect(r.stdout).toContain(`path:\n${hop}\n`);
    expect(r.stdout).toMatch(/^ {2}target {2}pj-full {2}\S+@pj-full:22$/m);
    const why = 'auto: nothing in the ssh config for pj-full needs OpenSSH';
    expect(r.stdout).toContain(`\n  transport  ssh2  (${why})\n`);
  });

  it('--json path: hops, ProxyCommand with its line, transport and why; the resolver named', async () => {
    const proxy = join(CORPUS, 'proxy', 'config');
    const multi = JSON.parse((await cli(['resolve', 'pj-multi', '--ssh-config', proxy, '--json'])).stdout) as {
      path: unknown;
      resolver: { by: string; note: string | null };
      warnings: string[];
    };
    expect(multi.path).toEqual({
      hops: [
        { name: 'hop1', user: 'first', address: 'hop1', port: 22, source: `${proxy}:10` },
        { name: 'hop2', user: 'second', address: 'hop2', port: 2022, source: `${proxy}:10` },
      ],
      proxyCommand: null,
      proxyCommandSource: null,
      transport: 'ssh2',
      why: 'auto: nothing in the ssh config for pj-multi needs OpenSSH',
      reasons: [],
    });
    expect(multi.warnings).toEqual([]);
    // cliEnv's HOME is not the account's home, which ssh would read: the built-in resolver alone, and why.
    expect(multi.resolver.by).toBe('built-in');
    expect(multi.resolver.note).toMatch(/^ssh -G not consulted: HOME /);
    const pc = JSON.parse((await cli(['resolve', 'pc-simple', '--ssh-config', proxy, '--json'])).stdout) as {
      path: { hops: unknown[]; proxyCommand: string; proxyCommandSource: string };
    };
    expect(pc.path).toMatchObject({
      hops: [],
      proxyCommand: 'ssh -W %h:%p bastion',
      proxyCommandSource: `${proxy}:18`,
    });
  });

  it('an inventory host: address resolved, its jump and a forced ssh2 in the path, what will not work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-resolve-inv-'));
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  HostName 10.0.0.5\n  PKCS11Provider /p11.so\nHost bastion\n  User ops\n');
    const inventory = join(dir, 'inventory.json');
    const host = { name: 'l20-n1', address: 'gpu', role: 'head', jump: 'bastion', transport: 'ssh2' };
    writeFileSync(inventory, JSON.stringify({ version: 1, hosts: [host] }));
    const r = await cli(['resolve', 'l20-n1', '--ssh-config', config, '--inventory', inventory, '--json']);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as ResolveJson & { inventoryHost: string; path: Record<string, unknown> };
    expect(out.inventoryHost).toBe('l20-n1');
    expect(out.resolved).toMatchObject({ hostName: '10.0.0.5' });
    expect(out.path).toMatchObject({
      hops: [{ name: 'bastion', user: 'ops', address: 'bastion', port: 22, source: 'inventory' }],
      transport: 'ssh2',
      why: `inventory transport: ssh2; will not work over ssh2: PKCS11Provider /p11.so (${config}:3)`,
    });
    const plain = await cli(['resolve', 'l20-n1', '--ssh-config', config, '--inventory', inventory]);
    expect(plain.stdout).toMatch(/^inventory host l20-n1, address gpu$/m);
    expect(plain.stdout).toMatch(/^ {2}hop 1 {2}bastion {2}ops@bastion:22 {2}from inventory jump$/m);
  });

  it('with the account HOME, ssh -G has the last word: its value wins, with a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-resolve-sshg-'));
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  HostName 10.0.0.5\n  Port 2201\n');
    // A stand-in ssh first on PATH: the real one, reporting another port (as a client that resolves otherwise).
    writeFileSync(join(dir, 'ssh'), `#!/bin/sh\n${realSsh()} "$@" | sed 's/^port .*/port 2299/'\n`, { mode: 0o755 });
    const env = { ...cliEnv(), HOME: userInfo().homedir, PATH: `${dir}:${process.env.PATH ?? ''}` };
    const r = await cli(['resolve', 'gpu', '--ssh-config', config, '--json'], env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as ResolveJson & { resolver: { by: string } };
    expect(out.resolver.by).toBe('ssh -G');
    expect(out.resolved).toMatchObject({ hostName: '10.0.0.5', port: 2299 });
    expect(out.sources.port).toBe('ssh -G');
    expect(out.warnings).toEqual([
      `ssh -G disagrees on port: ssh 2299, built-in 2201 (from ${config}:3); ssh's value is used`,
    ]);
    const plain = await cli(['resolve', 'gpu', '--ssh-config', config], env);
    expect(plain.stdout).toMatch(/^resolved by: ssh -G$/m);
    expect(plain.stdout).toMatch(/^warnings:\n {2}ssh -G disagrees on port/m);
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
