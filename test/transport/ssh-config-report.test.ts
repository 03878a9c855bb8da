import { describe, expect, it } from 'vitest';
import type { SshConfigContext } from '../../src/transport/ssh-config-context.js';
import {
  aliasView,
  hostPath,
  pathLines,
  pathSummary,
  pathView,
  resolutionRows,
  resolveHost,
} from '../../src/transport/ssh-config-report.js';

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
      'hostName',
      'port',
      'user',
      'identityFiles',
      'userKnownHostsFiles',
      'strictHostKeyChecking',
      'identitiesOnly',
      'serverAliveInterval',
      'serverAliveCountMax',
      'proxyJump',
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

describe('the path to a host (resolve and the setup screen)', () => {
  const config = [
    'Host gpu-a',
    '  HostName 10.0.0.11',
    '  ProxyJump jump@bastion,relay:2200',
    'Host bastion',
    '  HostName 192.0.2.10',
    '  User ops',
    '  Port 2022',
    'Host gpu-b',
    '  ProxyCommand ssh -W %h:%p bastion',
    'Host gpu-c',
    '  PKCS11Provider /usr/lib/p11.so',
    '',
  ].join('\n');
  const hops = (name: string) => {
    const r = resolveHost(name, { configFile: CONFIG, ctx: ctx(config) });
    return r.ok ? r.resolved : r.error;
  };
  const resolved = (host: string) => {
    const r = resolve(host, config);
    if (!r.ok) throw r.error;
    return r.resolved;
  };
  const noProbe = { readFile: () => undefined, kerberosTicket: false };

  it('ProxyJump hops resolved through the same config, the hop user and port winning, with their line', () => {
    const path = hostPath(resolved('gpu-a'), {}, hops, noProbe);
    expect(path).toEqual({
      hops: [
        { name: 'bastion', user: 'jump', address: '192.0.2.10', port: 2022, source: `${CONFIG}:3` },
        { name: 'relay', user: 'op', address: 'relay', port: 2200, source: `${CONFIG}:3` },
      ],
      proxyCommand: null,
      proxyCommandSource: null,
      transport: 'ssh2',
      why: 'auto: nothing in the ssh config for gpu-a needs OpenSSH',
      reasons: [],
    });
    expect(pathSummary(path)).toBe('via bastion → relay → ssh2');
    expect(pathLines('gpu-a', resolved('gpu-a'), path)).toEqual([
      'path:',
      `  hop 1  bastion  jump@192.0.2.10:2022  from ${CONFIG}:3 ProxyJump`,
      `  hop 2  relay  op@relay:2200  from ${CONFIG}:3 ProxyJump`,
      '  target  gpu-a  op@10.0.0.11:22',
      '  transport  ssh2  (auto: nothing in the ssh config for gpu-a needs OpenSSH)',
    ]);
  });

  it("the inventory's jump wins over the config's; none is direct", () => {
    const viaInventory = hostPath(resolved('gpu-a'), { jump: 'bastion' }, hops, noProbe);
    expect(viaInventory.hops).toEqual([
      { name: 'bastion', user: 'ops', address: '192.0.2.10', port: 2022, source: 'inventory' },
    ]);
    const direct = hostPath(resolved('gpu-b'), { jump: 'none' }, hops, noProbe);
    expect(direct).toMatchObject({ hops: [], proxyCommand: null });
    expect(pathSummary(direct)).toBe('direct → ssh2');
  });

  it('a ProxyCommand is the way, with its line', () => {
    const path = hostPath(resolved('gpu-b'), {}, hops, noProbe);
    expect(path).toMatchObject({ hops: [], proxyCommand: 'ssh -W %h:%p bastion', proxyCommandSource: `${CONFIG}:9` });
    expect(pathSummary(path)).toBe('via ProxyCommand → ssh2');
  });

  it('openssh and why; a forced ssh2 says what will not work', () => {
    const auto = hostPath(resolved('gpu-c'), {}, hops, noProbe);
    expect(auto).toMatchObject({
      transport: 'openssh',
      reasons: [{ what: 'PKCS11Provider /usr/lib/p11.so', source: `${CONFIG}:11` }],
    });
    expect(pathSummary(auto)).toBe('direct → openssh: PKCS11Provider /usr/lib/p11.so');
    const forced = hostPath(resolved('gpu-c'), { transport: 'ssh2' }, hops, noProbe);
    expect(forced.transport).toBe('ssh2');
    expect(pathSummary(forced)).toBe('direct → ssh2 (will not work: PKCS11Provider /usr/lib/p11.so)');
    expect(pathSummary(hostPath(resolved('gpu-a'), { transport: 'openssh' }, hops, noProbe))).toBe(
      'via bastion → relay → openssh: inventory transport: openssh',
    );
  });

  it('pathView: nothing for an empty address or a refused config; escapes what the config carries', () => {
    expect(pathView({ address: '' }, resolve('x', config), hops)).toBeUndefined();
    expect(pathView({ address: 'gpu-a' }, resolve('gpu-a', 'Host gpu-a\n  Port none\n'), hops)).toBeUndefined();
    expect(pathView({ address: 'x', jump: 'bastion' }, resolve('x', config), hops)).toBe('via bastion → ssh2');
    const evil = resolve('x', 'Host x\n  PKCS11Provider "/p\u001b[2J.so"\n');
    expect(pathView({ address: 'x' }, evil, hops)).toBe('direct → openssh: PKCS11Provider /p\\u001b[2J.so');
  });
});
