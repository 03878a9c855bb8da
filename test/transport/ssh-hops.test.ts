/**
 * Jump chains resolved through an injected ssh config (no files, no network): a hop's own ProxyJump comes
 * before it, only the first hop's config decides how it is reached, user/port in the hop win, loops and
 * runaway depth are refused naming the chain; ProxyCommand's tokens expand as ssh's do.
 */
import { describe, expect, it } from 'vitest';
import type { SshConfigContext } from '../../src/transport/ssh-config-context.js';
import { JumpChainError, MAX_JUMP_DEPTH, resolveJumpChain } from '../../src/transport/ssh-hops.js';
import { expandProxyCommand } from '../../src/transport/ssh-tunnel.js';
import { sshHostOptionsFromConfig } from '../../src/transport/ssh-options-from-config.js';
import { resolveSshConfig } from '../../src/transport/ssh-config.js';

const HOME = '/home/op';
const CONFIG = `${HOME}/.ssh/config`;

function ctx(config: string): SshConfigContext {
  return {
    homeDir: HOME,
    localUser: 'op',
    localHostName: 'laptop',
    uid: 1000,
    env: {},
    readFile: (p) => (p === CONFIG ? config : undefined),
  };
}

const hops = (jump: string, config: string, knownHostsFile?: string) =>
  resolveJumpChain(jump, ctx(config), { target: 'l20-n1', ...(knownHostsFile ? { knownHostsFile } : {}) });

describe('resolveJumpChain', () => {
  it('resolves each hop through the config; user and port written in the hop win', () => {
    const config =
      'Host bastion\n  HostName 10.0.0.1\n  User admin\n  Port 2200\n  IdentityFile ~/.ssh/bastion_key\n' +
      'Host inner\n  HostName 10.1.0.1\n  User ops\n';
    const chain = hops('bastion,root@inner:2222', config, '/inv/known_hosts');
    expect(chain.map((h) => [h.name, h.user, h.host, h.port])).toEqual([
      ['bastion', 'admin', '10.0.0.1', 2200],
      ['inner', 'root', '10.1.0.1', 2222],
    ]);
    expect(chain[0]!.identityFiles).toEqual([`${HOME}/.ssh/bastion_key`]);
    expect(chain[0]!.knownHostsFiles.slice(0, 2)).toEqual(['/inv/known_hosts', `${HOME}/.ssh/known_hosts`]);
    expect(chain.every((h) => h.jump === undefined)).toBe(true);
  });

  it("puts the first hop's own ProxyJump before it, recursively, and runs only the first hop's ProxyCommand", () => {
    const config = [
      'Host edge',
      '  ProxyJump outer',
      'Host outer',
      '  ProxyJump far',
      'Host far',
      '  ProxyCommand nc -x proxy %h %p',
      'Host inner',
      '  ProxyJump elsewhere',
      '  ProxyCommand never-run %h',
    ].join('\n');
    const chain = hops('edge,inner', config);
    expect(chain.map((h) => h.name)).toEqual(['far', 'outer', 'edge', 'inner']);
    expect(chain[0]!.proxyCommand).toBe('nc -x proxy %h %p');
    expect(chain.slice(1).map((h) => h.proxyCommand)).toEqual([undefined, undefined, undefined]);
  });

  it('refuses a loop, naming the chain', () => {
    const config = 'Host a\n  ProxyJump b\nHost b\n  ProxyJump a\n';
    let err: unknown;
    try {
      hops('a', config);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JumpChainError);
    expect(err).toMatchObject({
      message: 'l20-n1: the jump hosts loop: l20-n1 → a → b → a',
      chain: ['l20-n1', 'a', 'b', 'a'],
    });
  });

  it(`refuses a chain deeper than ${MAX_JUMP_DEPTH}`, () => {
    const config = Array.from({ length: MAX_JUMP_DEPTH + 2 }, (_, i) => `Host h${i}\n  ProxyJump h${i + 1}\n`).join('');
    expect(() => hops('h0', config)).toThrow(/go deeper than 8 hops: l20-n1 → h0 → h1 .* → h8$/);
  });

  it('none is no hop; a value ssh would refuse is refused', () => {
    expect(hops('none', '')).toEqual([]);
    expect(() => hops('a,,b', '')).toThrow(JumpChainError);
  });

  it("asks about a hop's unknown key with the hop's name and the host it leads to", async () => {
    const asked: unknown[] = [];
    const [hop] = resolveJumpChain('bastion', ctx('Host bastion\n  HostName 10.0.0.1\n'), {
      target: 'l20-n1',
      onUnknownHostKey: async (info) => (asked.push(info), true),
    });
    const question = { host: '10.0.0.1', port: 22, fingerprint: 'SHA256:x', keyType: 'ssh-ed25519' };
    expect(await hop!.onUnknownHostKey?.(question)).toBe(true);
    expect(asked).toEqual([{ ...question, name: 'bastion', jumpHostFor: 'l20-n1' }]);
  });

  it('ProxyCommand from the config reaches the options unexpanded, with the alias for %n', () => {
    const config = 'Host gpu1\n  HostName 10.0.0.9\n  ProxyCommand ssh -W %h:%p jump\n';
    const resolved = resolveSshConfig('gpu1', ctx(config));
    const { options, unsupported } = sshHostOptionsFromConfig('l20-n1', resolved, { env: {} });
    expect(options).toMatchObject({ proxyCommand: 'ssh -W %h:%p jump', originalHost: 'gpu1', host: '10.0.0.9' });
    expect(unsupported).toEqual([]);
  });
});

describe('expandProxyCommand', () => {
  const t = { host: '10.0.0.9', port: 2222, user: 'ubuntu', originalHost: 'gpu1' };
  it('expands %h %p %r %n and %% as ssh does', () => {
    expect(expandProxyCommand('ssh -W %h:%p -l %r jump # %n 100%%', t)).toBe(
      'ssh -W 10.0.0.9:2222 -l ubuntu jump # gpu1 100%',
    );
  });
  it('refuses other tokens and a trailing %', () => {
    expect(() => expandProxyCommand('nc %h %d', t)).toThrow(/unknown token %d/);
    expect(() => expandProxyCommand('nc %h %', t)).toThrow(/ends in "%"/);
  });
  it('quotes a value that would be shell syntax', () => {
    expect(expandProxyCommand('nc %h %p', { ...t, host: 'a;touch /tmp/x' })).toBe("nc 'a;touch /tmp/x' 2222");
  });
});
