/**
 * hostFromConfig and `transport: openssh`: what the OpensshHost is given (nothing connects). The jump chain is
 * ours (a master per hop with our host-key policy), from the inventory's `jump:` or the config's ProxyJump;
 * with HOME away from the account's home, ssh gets the config file the resolver read.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OpensshHostOptions } from '../../src/transport/openssh.js';

const built: OpensshHostOptions[] = [];
vi.mock('../../src/transport/openssh.js', async (original) => {
  const real = await original<typeof import('../../src/transport/openssh.js')>();
  class RecordedOpensshHost extends real.OpensshHost {
    constructor(options: OpensshHostOptions) {
      super(options);
      built.push(options);
    }
  }
  return { ...real, OpensshHost: RecordedOpensshHost };
});
const { hostFromConfig } = await import('../../src/target.js');
const { OpensshHost } = await import('../../src/transport/openssh.js');
const { SshHost } = await import('../../src/transport/ssh.js');

const savedHome = process.env.HOME;
let home: string;
beforeEach(() => {
  built.length = 0;
  home = mkdtempSync(join(tmpdir(), 'l20-target-openssh-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const config =
    'Host gpu-b\n  HostName 10.0.0.2\n  ProxyJump bastion\n\nHost bastion\n  HostName 192.0.2.7\n  User ops\n';
  writeFileSync(join(home, '.ssh', 'config'), config, { mode: 0o600 });
  process.env.HOME = home;
});
afterEach(() => {
  process.env.HOME = savedHome;
  rmSync(home, { recursive: true, force: true });
});

const n2 = { name: 'n2', address: 'gpu-b', role: 'worker' } as const;

describe('hostFromConfig with transport openssh', () => {
  it('the config ProxyJump: ssh2 follows it itself, openssh gets it as its own hop chain and the -F file', () => {
    expect(hostFromConfig(n2)).toBeInstanceOf(SshHost);
    const host = hostFromConfig({ ...n2, transport: 'openssh' });
    expect(host).toBeInstanceOf(OpensshHost);
    expect(host.address).toBe('10.0.0.2:22');
    const [opts] = built;
    expect(opts?.sshAlias).toBe('gpu-b');
    expect(opts?.jump?.map((hop) => [hop.host, hop.user])).toEqual([['192.0.2.7', 'ops']]);
    expect(opts?.sshConfigFile).toBe(join(home, '.ssh', 'config'));
  });

  it('inventory jump hosts win over the config (each hop resolved through it); jump: none goes directly', () => {
    hostFromConfig({ ...n2, transport: 'openssh', jump: 'deploy@bastion:2222,198.51.100.9' });
    hostFromConfig({ ...n2, transport: 'openssh', jump: 'none' });
    const [chain, direct] = built;
    expect(chain?.jump?.map((hop) => [hop.host, hop.user, hop.port])).toEqual([
      ['192.0.2.7', 'deploy', 2222],
      ['198.51.100.9', expect.any(String), 22],
    ]);
    expect(direct?.jump).toEqual([]);
  });

  it('without a ~/.ssh/config under a HOME that is not the account home, ssh reads none (-F none)', () => {
    rmSync(join(home, '.ssh', 'config'));
    hostFromConfig({ name: 'n3', address: '10.0.0.3', role: 'worker', transport: 'openssh' });
    expect(built[0]?.sshConfigFile).toBe('none');
  });

  it('refuses a destination ssh would read as an option', () => {
    const n3 = { name: 'n3', address: '-oProxyCommand=x', role: 'worker', transport: 'openssh' } as const;
    expect(() => hostFromConfig(n3)).toThrow(/n3: .*-oProxyCommand=x/);
  });
});
