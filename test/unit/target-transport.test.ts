/** hostFromConfig's transport choice: a forced ssh2 still builds the ssh2 host; openssh needs an ssh client. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { hostFromConfig } from '../../src/target.js';
import { SshHost } from '../../src/transport/ssh.js';

const saved = { HOME: process.env.HOME, PATH: process.env.PATH };
let home: string | undefined;
afterEach(() => {
  process.env.HOME = saved.HOME;
  process.env.PATH = saved.PATH;
  if (home) rmSync(home, { recursive: true, force: true });
});

/** A fresh HOME whose ~/.ssh/config asks for a PKCS#11 provider (something ssh2 cannot use) for gpu-a. */
function homeWithPkcs11(): void {
  home = mkdtempSync(join(tmpdir(), 'l20-target-transport-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(home, '.ssh', 'config'), 'Host gpu-a\n  HostName 10.0.0.1\n  PKCS11Provider /p11.so\n', {
    mode: 0o600,
  });
  process.env.HOME = home;
}

describe('hostFromConfig and the transport', () => {
  it('transport ssh2 while the config asks for what ssh2 cannot do: still the ssh2 host', () => {
    homeWithPkcs11();
    const host = hostFromConfig({ name: 'l20-n1', address: 'gpu-a', role: 'head', transport: 'ssh2' });
    expect(host).toBeInstanceOf(SshHost);
  });

  it('openssh without an ssh client: a ConfigError naming the package openssh-client', () => {
    homeWithPkcs11();
    process.env.PATH = join(home as string, 'no-bin');
    const message =
      `l20-n1: the OpenSSH transport is chosen (auto: ssh2 cannot do PKCS11Provider /p11.so (${home}/.ssh/config:3)) ` +
      'but there is no ssh client on PATH; install the package openssh-client (apt-get install openssh-client), ' +
      'or set transport: ssh2';
    const build = () => hostFromConfig({ name: 'l20-n1', address: 'gpu-a', role: 'head' });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(message);
  });
});
