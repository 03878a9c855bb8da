import { describe, expect, it } from 'vitest';
import { posix } from 'node:path';
import { resolveSshConfig } from '../../src/transport/ssh-config.js';
import type { SshConfigContext } from '../../src/transport/ssh-config-context.js';
import { splitArgs } from '../../src/transport/ssh-config-parse.js';

const HOME = '/home/op';

function ctx(files: Record<string, string>): SshConfigContext {
  return {
    homeDir: HOME,
    localUser: 'op',
    localHostName: 'laptop',
    uid: 1000,
    readFile: (p) => files[p],
    listDir: (d) => {
      const prefix = d.endsWith('/') ? d : `${d}/`;
      const names = new Set<string>();
      for (const f of Object.keys(files))
        if (f.startsWith(prefix)) names.add(f.slice(prefix.length).split('/')[0] as string);
      return [...names];
    },
  };
}

const USER = `${HOME}/.ssh/config`;

function resolve(alias: string, user: string, extra: Record<string, string> = {}) {
  return resolveSshConfig(alias, ctx({ [USER]: user, ...extra }));
}

describe('resolveSshConfig', () => {
  it('applies a matching Host block; first obtained value wins', () => {
    const r = resolve(
      'gpu-a',
      `
# lab nodes
Host gpu-a
  HostName 10.0.0.11
  Port 2222
  User ubuntu

Host gpu-*
  User root
  Port 22
  IdentityFile ~/.ssh/lab_ed25519

Host *
  User nobody
  ServerAliveInterval 15
`,
    );
    expect(r).toMatchObject({
      alias: 'gpu-a',
      hostName: '10.0.0.11',
      port: 2222,
      user: 'ubuntu',
      identityFiles: [`${HOME}/.ssh/lab_ed25519`],
      identityFilesDefaulted: false,
      serverAliveInterval: 15,
      serverAliveCountMax: 3,
      strictHostKeyChecking: 'ask',
      identitiesOnly: false,
    });
    expect(r.filesRead).toEqual([USER]);
  });

  it('uses OpenSSH defaults when nothing matches', () => {
    const r = resolve('other', 'Host gpu-*\n  User root\n');
    expect(r.hostName).toBe('other');
    expect(r.port).toBe(22);
    expect(r.user).toBe('op');
    expect(r.identityFilesDefaulted).toBe(true);
    expect(r.identityFiles).toContain(`${HOME}/.ssh/id_ed25519`);
    expect(r.userKnownHostsFiles).toEqual([`${HOME}/.ssh/known_hosts`, `${HOME}/.ssh/known_hosts2`]);
    expect(r.globalKnownHostsFiles).toEqual(['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2']);
    expect(r.proxyJump).toBeUndefined();
  });

  it('supports ?, * and ! negation in Host patterns (a negated match wins)', () => {
    const cfg = `
Host * !bastion
  User ops
Host node? !node9
  Port 2200
Host *
  Port 22
  User fallback
`;
    expect(resolve('node1', cfg)).toMatchObject({ user: 'ops', port: 2200 });
    expect(resolve('node9', cfg)).toMatchObject({ user: 'ops', port: 22 });
    expect(resolve('node10', cfg)).toMatchObject({ port: 22 });
    expect(resolve('bastion', cfg)).toMatchObject({ user: 'fallback', port: 22 });
    // OpenSSH matches Host patterns case-sensitively against the name as typed: NODE1 is not node?.
    expect(resolve('NODE1', cfg)).toMatchObject({ user: 'ops', port: 22, hostName: 'node1' });
  });

  it('accepts key=value, key = value, case-insensitive keywords, quoted values and trailing comments', () => {
    const r = resolve(
      'x',
      `
HOST x
hostname=10.1.1.1
PORT = 2022
user "deploy"   # the deploy account
IdentityFile "~/my keys/id ed25519"
StrictHostKeyChecking=accept-new
UserKnownHostsFile ~/.ssh/kh_lab "/etc/ssh/lab known hosts"
`,
    );
    expect(r).toMatchObject({
      hostName: '10.1.1.1',
      port: 2022,
      user: 'deploy',
      identityFiles: [`${HOME}/my keys/id ed25519`],
      strictHostKeyChecking: 'accept-new',
      userKnownHostsFiles: [`${HOME}/.ssh/kh_lab`, '/etc/ssh/lab known hosts'],
    });
  });

  it('accumulates IdentityFile entries and expands %d %u %h %r %p %n %% and ~; HostName expands %h', () => {
    const r = resolve(
      'gpu-b',
      `
Host gpu-*
  HostName %h.lab.example
  User root
  IdentityFile %d/.ssh/%u-%r@%h:%p
  IdentityFile ~/.ssh/%n_key
  IdentityFile /keys/100%%
  IdentityFile ~/.ssh/%n_key
  IdentitiesOnly yes
`,
    );
    expect(r.hostName).toBe('gpu-b.lab.example');
    expect(r.identityFiles).toEqual([
      `${HOME}/.ssh/op-root@gpu-b.lab.example:22`,
      `${HOME}/.ssh/gpu-b_key`,
      '/keys/100%',
    ]);
    expect(r.identitiesOnly).toBe(true);
  });

  it('follows Include (relative to ~/.ssh, globs in sorted order) and inherits the enclosing Host condition', () => {
    const files = {
      [`${HOME}/.ssh/config.d/20-b.conf`]: 'Host gpu-a\n  User from-b\n  Port 2002\n',
      [`${HOME}/.ssh/config.d/10-a.conf`]: 'Host gpu-a\n  HostName 10.9.9.9\n',
      [`${HOME}/.ssh/config.d/README`]: 'Host *\n  User readme\n',
      [`${HOME}/.ssh/only-for-other`]: 'User other-user\n',
      '/etc/ssh/ssh_config': 'Include /etc/ssh/ssh_config.d/*.conf\nHost *\n  ServerAliveCountMax 7\n',
      '/etc/ssh/ssh_config.d/50-site.conf': 'Host *\n  ServerAliveInterval 30\n',
    };
    const user = `
Include config.d/*.conf
Host other
  Include only-for-other
Host *
  User last
`;
    const r = resolveSshConfig('gpu-a', ctx({ [USER]: user, ...files }));
    expect(r).toMatchObject({
      hostName: '10.9.9.9',
      user: 'from-b',
      port: 2002,
      serverAliveInterval: 30,
      serverAliveCountMax: 7,
    });
    expect(r.filesRead).toEqual([
      USER,
      `${HOME}/.ssh/config.d/10-a.conf`,
      `${HOME}/.ssh/config.d/20-b.conf`,
      `${HOME}/.ssh/only-for-other`, // read, as OpenSSH does, but nothing in it applies
      '/etc/ssh/ssh_config',
      '/etc/ssh/ssh_config.d/50-site.conf',
    ]);
    // The Include inside "Host other" is read for "other" only.
    expect(resolveSshConfig('other', ctx({ [USER]: user, ...files })).user).toBe('other-user');
  });

  it('restores the enclosing state after an Include that changed it', () => {
    const r = resolve('gpu-a', 'Host gpu-a\n  Include inc\n  Port 2345\n', {
      [`${HOME}/.ssh/inc`]: 'Host nomatch\n  User x\n',
    });
    expect(r.port).toBe(2345);
    expect(r.user).toBe('op');
  });

  it('applies Match blocks: host, exec (through the injected runner) and all', () => {
    const cfg = `
Match host gpu-a exec "test %n = gpu-a"
  User matched
Host gpu-a
  Port 2200
Match all
  User everyone
`;
    const ran: string[] = [];
    const context = { ...ctx({ [USER]: cfg }), runMatchExec: (cmd: string) => (ran.push(cmd), 0) };
    const r = resolveSshConfig('gpu-a', context);
    expect(r.user).toBe('matched');
    expect(r.port).toBe(2200);
    expect(r.sources.user).toBe(`${USER}:3`);
    expect(ran).toEqual(['test gpu-a = gpu-a']);
    // exec is not run once an earlier criterion failed
    expect(resolveSshConfig('other', context).user).toBe('everyone');
    expect(ran).toHaveLength(1);
  });

  it('returns ProxyJump / ProxyCommand so the caller can refuse them', () => {
    expect(resolve('a', 'Host a\n  ProxyJump jump@bastion:2222\n').proxyJump).toBe('jump@bastion:2222');
    expect(resolve('a', 'Host a\n  ProxyJump none\nHost *\n  ProxyJump other\n').proxyJump).toBeUndefined();
    expect(resolve('a', 'Host a\n  ProxyCommand ssh -W %h:%p bastion\n').proxyCommand).toBe('ssh -W %h:%p bastion');
  });

  it('parses StrictHostKeyChecking, UserKnownHostsFile none and bad values', () => {
    expect(resolve('a', 'StrictHostKeyChecking no\n').strictHostKeyChecking).toBe('no');
    expect(resolve('a', 'StrictHostKeyChecking off\n').strictHostKeyChecking).toBe('no');
    expect(resolve('a', 'StrictHostKeyChecking yes\n').strictHostKeyChecking).toBe('yes');
    expect(resolve('a', 'UserKnownHostsFile none\n').userKnownHostsFiles).toEqual([]);
    // OpenSSH refuses a config with a bad value anywhere (ssh exits 255), even in a block that does not match.
    expect(() => resolve('a', 'Port 2201\nHost other\n  Port banana\n')).toThrow(`${USER} line 3: Bad port 'banana'`);
    expect(() => resolve('a', 'ServerAliveInterval -1\n')).toThrow(`${USER} line 1: invalid time value "-1"`);
  });

  it('returns HostKeyAlias as written, first obtained value winning; undefined when not set', () => {
    const text = 'Host a\n  HostKeyAlias Gpu-A.lab\nHost *\n  HostKeyAlias other\n';
    expect(resolve('a', text).hostKeyAlias).toBe('Gpu-A.lab');
    expect(resolve('a', 'Port 2222\n').hostKeyAlias).toBeUndefined();
  });

  it('returns identityAgent expanded', () => {
    expect(resolve('a', 'IdentityAgent ~/.1password/agent.sock\n').identityAgent).toBe(
      posix.join(HOME, '.1password/agent.sock'),
    );
    expect(resolve('a', 'IdentityAgent none\n').identityAgent).toBe('none');
  });
});

describe('resolveSshConfig: what the ssh -G oracle cannot show', () => {
  it('refuses an included file that group or others can write, as ssh does (Bad owner or permissions)', () => {
    const inc = `${HOME}/.ssh/inc.conf`;
    const files = { [USER]: 'Include inc.conf\n', [inc]: 'User x\n' };
    const stat = (mode: number) => ({
      ...ctx(files),
      statFile: (p: string) => ({ uid: 1000, mode: p === inc ? mode : 0o600 }),
    });
    expect(resolveSshConfig('a', stat(0o644)).user).toBe('x');
    expect(() => resolveSshConfig('a', stat(0o664))).toThrow(`Bad owner or permissions on ${inc}`);
  });

  it('refuses Match exec when no runner was given, naming the line', () => {
    expect(() => resolve('a', 'Host *\nMatch exec "true"\n')).toThrow(
      `${USER} line 2: Match exec "true" needs a command runner`,
    );
  });

  it('refuses an unknown token in IdentityFile (ssh does when it loads the keys) and an unset ${VAR}', () => {
    expect(() => resolve('a', 'IdentityFile ~/.ssh/%z\n')).toThrow(`${USER} line 1: unknown token %z`);
    expect(() => resolve('a', 'Host a\n  IdentityFile ${NOPE}/k\n')).toThrow(
      `${USER} line 2: environment variable \${NOPE} has no value`,
    );
    const withEnv = { ...ctx({ [USER]: 'IdentityFile ${KEYS}/k\n' }), env: { KEYS: '/srv/keys' } };
    expect(resolveSshConfig('a', withEnv).identityFiles).toEqual(['/srv/keys/k']);
  });

  it('refuses an Include nested deeper than 16, naming the Include line', () => {
    expect(() => resolve('a', 'Include loop\n', { [`${HOME}/.ssh/loop`]: '# again\nInclude loop\n' })).toThrow(
      `${HOME}/.ssh/loop line 2: Too many recursive configuration includes`,
    );
  });

  it('warns that CanonicalizeHostname is not applied, and still makes the final pass', () => {
    const r = resolve('a', 'CanonicalizeHostname yes\nHostName b.example\nHost b.example\n  User final\n');
    expect(r.user).toBe('final');
    expect(r.warnings).toEqual([
      `${USER}:1: CanonicalizeHostname yes is not applied (no DNS look-ups); the name is used as written`,
    ]);
  });
});

describe('splitArgs', () => {
  it('splits like OpenSSH argv_split', () => {
    expect(splitArgs(`a "b c" 'd e' f\\ g # comment`)).toEqual(['a', 'b c', 'd e', 'f g']);
    expect(splitArgs(`"x\\"y"`)).toEqual(['x"y']);
    expect(splitArgs('')).toEqual([]);
  });
});
