/**
 * The transport choice (src/transport/transport-choice.ts): what in a resolved config ssh2 cannot do, each
 * with its line, and which transport `auto`, `ssh2` and `openssh` give with why; the openssh transport
 * without an `ssh` client is a ConfigError naming openssh-client.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { resolveSshConfig, type ResolvedSshConfig } from '../../src/transport/ssh-config.js';
import {
  chooseTransport,
  opensshReasons,
  requireOpensshClient,
  type ReasonProbe,
} from '../../src/transport/transport-choice.js';

const CONFIG = '/home/op/.ssh/config';

function resolve(text: string, alias = 'gpu', exec: (cmd: string) => number = () => 0): ResolvedSshConfig {
  return resolveSshConfig(
    alias,
    { homeDir: '/home/op', localUser: 'op', readFile: (p) => (p === CONFIG ? text : undefined), runMatchExec: exec },
    [{ path: CONFIG, kind: 'user', required: true }],
  );
}

function probe(files: Record<string, Buffer | string> = {}, kerberosTicket = false): ReasonProbe {
  return {
    readFile: (p) => (files[p] === undefined ? undefined : Buffer.from(files[p] as Buffer | string)),
    kerberosTicket,
  };
}

/** An OpenSSH private key file whose public part is of `type` (the private part is not read). */
function privateKeyOfType(type: string): string {
  const wire = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length);
    return Buffer.concat([len, b]);
  };
  const count = Buffer.alloc(4);
  count.writeUInt32BE(1);
  const pub = wire(Buffer.concat([wire(Buffer.from(type)), wire(Buffer.alloc(32, 7)), wire(Buffer.from('ssh:'))]));
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    wire(Buffer.from('none')),
    wire(Buffer.from('none')),
    wire(Buffer.alloc(0)),
    count,
    pub,
    wire(Buffer.alloc(8)),
  ]);
  return `-----BEGIN OPENSSH PRIVATE KEY-----\n${body.toString('base64')}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

describe('opensshReasons: what ssh2 cannot do, with the line that asks for it', () => {
  it('a plain config has none', () => {
    expect(opensshReasons(resolve('Host gpu\n  HostName 10.0.0.5\n  IdentityFile ~/.ssh/k\n'), probe())).toEqual([]);
  });

  it('Match exec evaluated for the host, matched or not', () => {
    const r = resolve('Match exec "test -e /x" host gpu\n  User a\nMatch exec "false"\n  User b\n', 'gpu', (c) =>
      c === 'false' ? 1 : 0,
    );
    expect(opensshReasons(r, probe())).toEqual([
      { what: 'Match exec "test -e /x" (matched)', source: `${CONFIG}:1` },
      { what: 'Match exec "false" (evaluated)', source: `${CONFIG}:3` },
    ]);
  });

  it('GSSAPIAuthentication counts only with a Kerberos ticket (Debian turns it on for every host)', () => {
    const r = resolve('Host gpu\n  GSSAPIAuthentication yes\n');
    expect(opensshReasons(r, probe())).toEqual([]);
    expect(opensshReasons(r, probe({}, true))).toEqual([
      { what: 'GSSAPIAuthentication yes (a Kerberos ticket is at hand)', source: `${CONFIG}:2` },
    ]);
  });

  it('PKCS11Provider set (none is unset)', () => {
    expect(opensshReasons(resolve('Host gpu\n  PKCS11Provider /usr/lib/opensc-pkcs11.so\n'), probe())).toEqual([
      { what: 'PKCS11Provider /usr/lib/opensc-pkcs11.so', source: `${CONFIG}:2` },
    ]);
    expect(opensshReasons(resolve('Host gpu\n  PKCS11Provider none\n'), probe())).toEqual([]);
  });

  it('FIDO keys by their .pub, else by the private key file; other keys are no reason', () => {
    const r = resolve('Host gpu\n  IdentityFile ~/.ssh/sk\n  IdentityFile ~/.ssh/ecdsa_sk\n  IdentityFile ~/.ssh/ed\n');
    const files = {
      '/home/op/.ssh/sk.pub': 'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t op@x\n',
      '/home/op/.ssh/ecdsa_sk': privateKeyOfType('sk-ecdsa-sha2-nistp256@openssh.com'),
      '/home/op/.ssh/ed': privateKeyOfType('ssh-ed25519'),
    };
    expect(opensshReasons(r, probe(files))).toEqual([
      { what: 'FIDO key /home/op/.ssh/sk (sk-ssh-ed25519@openssh.com)', source: `${CONFIG}:2` },
      { what: 'FIDO key /home/op/.ssh/ecdsa_sk (sk-ecdsa-sha2-nistp256@openssh.com)', source: `${CONFIG}:3` },
    ]);
  });

  it("a default key that is a FIDO key (~/.ssh/id_ed25519_sk) counts, from 'default'", () => {
    const r = resolve('Host other\n  User x\n');
    const files = { '/home/op/.ssh/id_ed25519_sk.pub': 'sk-ssh-ed25519@openssh.com AAAA op@x\n' };
    expect(opensshReasons(r, probe(files))).toEqual([
      { what: 'FIDO key /home/op/.ssh/id_ed25519_sk (sk-ssh-ed25519@openssh.com)', source: 'default' },
    ]);
  });
});

describe('opensshReasons: certificates (certificates.ts)', () => {
  const certLine = (type: string) => {
    const wire = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
    return `${type} ${wire(Buffer.from(type)).toString('base64')} op@laptop\n`;
  };
  const cert = certLine('ssh-ed25519-cert-v01@openssh.com');

  it('a CertificateFile holding a certificate, with its line; auto then takes openssh', () => {
    const r = resolve('Host gpu\n  IdentityFile ~/.ssh/k\n  CertificateFile ~/.ssh/k-cert.pub\n');
    const reasons = opensshReasons(r, probe({ '/home/op/.ssh/k-cert.pub': cert }));
    expect(reasons).toEqual([
      {
        what: 'CertificateFile /home/op/.ssh/k-cert.pub holds a ssh-ed25519-cert-v01@openssh.com user certificate',
        source: `${CONFIG}:3`,
      },
    ]);
    expect(chooseTransport({}, r, reasons).transport).toBe('openssh');
  });

  it("<identity>-cert.pub beside a key; the agent's certificates when the probe has them", () => {
    const r = resolve('Host gpu\n  IdentityFile ~/.ssh/k\n');
    expect(opensshReasons(r, probe({ '/home/op/.ssh/k-cert.pub': cert })).map((x) => x.source)).toEqual([
      `${CONFIG}:2`,
    ]);
    const blob = Buffer.concat([Buffer.from([0, 0, 0, 32]), Buffer.from('ssh-ed25519-cert-v01@openssh.com')]);
    const agent = {
      socket: '/run/agent.sock',
      identities: [
        {
          keyType: 'ssh-ed25519-cert-v01@openssh.com',
          fingerprint: 'SHA256:x',
          comment: 'k',
          keyBlob: blob,
        },
      ],
    };
    expect(opensshReasons(r, { ...probe(), agent })).toEqual([
      {
        what: 'the agent holds a ssh-ed25519-cert-v01@openssh.com user certificate SHA256:x (k)',
        source: 'ssh-agent /run/agent.sock',
      },
    ]);
  });
});

describe('chooseTransport', () => {
  const r = resolve('Host gpu\n  User a\n');
  const reason = { what: 'PKCS11Provider /p.so', source: `${CONFIG}:2` };

  it('auto: ssh2 without a reason, openssh with one, naming it', () => {
    expect(chooseTransport({}, r, [])).toEqual({
      transport: 'ssh2',
      why: 'auto: nothing in the ssh config for gpu needs OpenSSH',
    });
    expect(chooseTransport({ transport: 'auto' }, r, [reason])).toEqual({
      transport: 'openssh',
      why: `auto: ssh2 cannot do PKCS11Provider /p.so (${CONFIG}:2)`,
    });
  });

  it('the inventory wins; a forced ssh2 says what will not work', () => {
    expect(chooseTransport({ transport: 'openssh' }, r, [])).toEqual({
      transport: 'openssh',
      why: 'inventory transport: openssh',
    });
    expect(chooseTransport({ transport: 'ssh2' }, r, [reason])).toEqual({
      transport: 'ssh2',
      why: `inventory transport: ssh2; will not work over ssh2: PKCS11Provider /p.so (${CONFIG}:2)`,
    });
  });

  it('openssh without an ssh client is a ConfigError naming openssh-client', () => {
    let error: unknown;
    try {
      requireOpensshClient('l20-n1', 'inventory transport: openssh', '/nonexistent/ssh');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/^l20-n1: the OpenSSH transport is chosen \(inventory transport: openssh\)/);
    expect((error as Error).message).toContain('install the package openssh-client');
    expect(() => requireOpensshClient('l20-n1', 'x')).not.toThrow();
  });
});
