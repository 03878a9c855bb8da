/** Real OpenSSH: an inventory address that is a ~/.ssh/config alias reaches the server the alias names (issue 7). */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostFromConfig } from '../../src/target.js';
import { HostKeyError, type Host } from '../../src/transport/types.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let home: string;
const saved = { HOME: process.env.HOME, SSH_AUTH_SOCK: process.env.SSH_AUTH_SOCK };
const hosts: Host[] = [];

beforeAll(async () => {
  sshd = await startSshd();
  home = mkdtempSync(join(tmpdir(), 'l20-home-'));
  const dotSsh = join(home, '.ssh');
  mkdirSync(dotSsh, { mode: 0o700 });
  const [keyType, keyBlob] = sshd.hostPublicKeyLine.split(/\s+/);
  writeFileSync(join(dotSsh, 'known_hosts_lab'), `[127.0.0.1]:${sshd.port} ${keyType} ${keyBlob}\n`, { mode: 0o600 });
  // The alias carries everything: address, port, user, key and known_hosts; the inventory names only `gpu-a`.
  writeFileSync(
    join(dotSsh, 'config'),
    [
      'Host gpu-a',
      '    HostName 127.0.0.1',
      `    Port ${sshd.port}`,
      `    User ${sshd.users.nopw}`,
      `    IdentityFile ${sshd.clientKeyPath}`,
      '    IdentitiesOnly yes',
      '    UserKnownHostsFile ~/.ssh/known_hosts_lab',
      '    StrictHostKeyChecking yes',
      '',
      // Like gpu-a, but nothing recorded and no user known_hosts file: accept-new has nowhere to record.
      'Host gpu-nofile',
      '    HostName 127.0.0.1',
      `    Port ${sshd.port}`,
      `    User ${sshd.users.nopw}`,
      `    IdentityFile ${sshd.clientKeyPath}`,
      '    IdentitiesOnly yes',
      '    UserKnownHostsFile none',
      '    GlobalKnownHostsFile /dev/null',
      '    StrictHostKeyChecking accept-new',
      '',
      'Host *',
      '    User nobody-else',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  // ~ in the config and the default files resolve against HOME; an agent of the person running the tests must not take part.
  process.env.HOME = home;
  delete process.env.SSH_AUTH_SOCK;
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(home, { recursive: true, force: true });
  await sshd?.stop();
});

describe('real sshd: ~/.ssh/config alias', () => {
  it('connects to the alias gpu-a with the HostName, Port, User, IdentityFile and known_hosts the config gives', async () => {
    const host = hostFromConfig({ name: 'gpu-a', address: 'gpu-a', role: 'head' });
    hosts.push(host);
    expect(host.address).toBe(`127.0.0.1:${sshd.port}`);
    const r = await host.run({ argv: ['sh', '-c', 'id -un; echo "$HOME"'] });
    expect(r).toMatchObject({ exitCode: 0, stdout: `${sshd.users.nopw}\n/home/${sshd.users.nopw}\n` });
    expect(sshd.readLog()).toMatch(new RegExp(`^Accepted publickey for ${sshd.users.nopw} from 127\\.0\\.0\\.1 `, 'm'));
  });

  it('lets the inventory user win over the alias User', async () => {
    const host = hostFromConfig({ name: 'gpu-a', address: 'gpu-a', role: 'head', user: sshd.users.pw });
    hosts.push(host);
    const r = await host.run({ argv: ['id', '-un'] });
    expect(r.stdout).toBe(`${sshd.users.pw}\n`);
  });

  it('UserKnownHostsFile none: accept-new still refuses a new key, unless the inventory names a file', async () => {
    const nofile = { name: 'gpu-nofile', address: 'gpu-nofile', role: 'head' } as const;
    const refused = hostFromConfig(nofile);
    hosts.push(refused);
    const err = await refused.run({ argv: ['true'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err).toMatchObject({ kind: 'unknown', presentedFingerprint: sshd.hostKeyFingerprint });

    const inventoryFile = join(home, 'inventory_known_hosts');
    expect(existsSync(inventoryFile)).toBe(false);
    const recorded = hostFromConfig({ ...nofile, knownHostsFile: inventoryFile });
    hosts.push(recorded);
    expect((await recorded.run({ argv: ['true'] })).exitCode).toBe(0);
    const [keyType, keyBlob] = sshd.hostPublicKeyLine.split(/\s+/);
    expect(readFileSync(inventoryFile, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${keyType} ${keyBlob}\n`);
  });
});
