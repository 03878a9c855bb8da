import { describe, expect, it } from 'vitest';
import type { SshConfigContext } from '../../src/transport/ssh-config.js';
import { aliasView, resolutionRows, resolveHost } from '../../src/transport/ssh-config-report.js';

const CONFIG = '/home/op/.ssh/config';

function ctx(text: string): SshConfigContext {
  return { homeDir: '/home/op', localUser: 'op', readFile: (p) => (p === CONFIG ? text : undefined) };
}

const resolve = (host: string, text: string) => resolveHost(host, { configFile: CONFIG, ctx: ctx(text) });

describe('alias view and rows (what resolve and the setup screen show)', () => {
  const config = 'Host gpu-a\n  HostName 10.0.0.11\n  User ubuntu\n  IdentityFile ~/.ssh/lab\nHost *\n  Port 2200\n';

  it('names the deciding line of each value, short file names for the screen', () => {
    const view = aliasView({ address: 'gpu-a' }, resolve('gpu-a', config));
    expect(view).toEqual({
      ok: true,
      summary: 'ubuntu@10.0.0.11:2200 key /home/op/.ssh/lab',
      details: 'HostName config:2 · Port config:6 · User config:3 · IdentityFile config:4',
      warnings: [],
    });
  });

  it('inventory port, user and key win over the config, and say so', () => {
    const view = aliasView(
      { address: 'gpu-a', port: 22, user: 'root', auth: { method: 'agent' } },
      resolve('gpu-a', config),
    );
    expect(view).toMatchObject({
      summary: 'root@10.0.0.11:22 key (ssh-agent)',
      details: 'HostName config:2 · Port inventory · User inventory · IdentityFile inventory',
    });
  });

  it('a plain address that no config line changes shows nothing; a refused config shows why', () => {
    expect(aliasView({ address: '10.9.9.9' }, resolve('10.9.9.9', 'Host gpu-*\n  User x\n'))).toBeUndefined();
    expect(aliasView({ address: 'gpu-a' }, resolve('gpu-a', 'Host gpu-a\n  Port none\n'))).toEqual({
      ok: false,
      error: `${CONFIG} line 2: Bad port 'none'`,
    });
  });

  it('escapes control characters that a config value carries to the terminal', () => {
    const view = aliasView({ address: 'x' }, resolve('x', 'Host x\n  User "ev\u001b[2Jil"\n'));
    expect(view).toMatchObject({ ok: true, summary: 'ev\\u001b[2Jil@x:22 key (default keys)' });
  });

  it('rows: one per field in order, lists joined, ProxyJump from its line', () => {
    const r = resolve('gpu-a', `${config}  ProxyJump jump@bastion\n`);
    if (!r.ok) throw r.error;
    const rows = resolutionRows(r.resolved);
    expect(rows.map((row) => row.field)).toEqual([
      'hostName', 'port', 'user', 'identityFiles', 'userKnownHostsFiles', 'strictHostKeyChecking',
      'identitiesOnly', 'serverAliveInterval', 'serverAliveCountMax', 'proxyJump',
    ]);
    expect(rows.find((row) => row.field === 'proxyJump')).toEqual({
      field: 'proxyJump',
      value: 'jump@bastion',
      source: `${CONFIG}:7`,
    });
    expect(rows.find((row) => row.field === 'userKnownHostsFiles')).toEqual({
      field: 'userKnownHostsFiles',
      value: '/home/op/.ssh/known_hosts, /home/op/.ssh/known_hosts2',
      source: 'default',
    });
  });
});
