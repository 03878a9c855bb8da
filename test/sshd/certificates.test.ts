/**
 * OpenSSH certificates with the real tools (issue 17 item 3): an SSH CA made with ssh-keygen signs the test
 * sshd's host key and the user's key; sshd accepts only the certificate (AuthorizedKeysFile none) and the
 * client's known_hosts holds only `@cert-authority`. The real `ssh` proves the fixture (it gets in, host
 * verified by the CA); the built-in ssh2 transport is refused with the message that names the CA and the
 * OpenSSH transport; certificateReasons finds each source (CertificateFile, `-cert.pub` beside the key, a real
 * ssh-agent holding a certificate, the CA line), and a revoked CA is no reason and vouches for nothing.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentInput, certificateReasons } from '../../src/transport/certificates.js';
import { hostCertificateAuthorities, verifyHostKey } from '../../src/transport/known-hosts.js';
import { AgentListError, listAgentIdentities } from '../../src/transport/ssh-agent-identities.js';
import { resolveSshConfig, type ResolvedSshConfig } from '../../src/transport/ssh-config.js';
import { defaultSshConfigContext, explicitSshConfigFiles } from '../../src/transport/ssh-config-context.js';
import { OpensshHost } from '../../src/transport/openssh.js';
import { SshHost } from '../../src/transport/ssh.js';
import type { UnknownHostKeyInfo } from '../../src/transport/ssh-options.js';
import { certificateAuthorityNote } from '../../src/transport/ssh-host-key.js';
import { HostKeyError } from '../../src/transport/types.js';
import {
  newCertificateAuthority,
  signKey,
  startSshd,
  waitFor,
  type CertificateAuthority,
  type Sshd,
} from '../helpers/sshd.js';

let sshd: Sshd;
let work: string;
let home: string;
let hostCa: CertificateAuthority;
let userCa: CertificateAuthority;
let otherCa: CertificateAuthority;
/** The user's key; `userKey-cert.pub` beside it is signed by userCa for l20t-nopw. */
let userKey: string;
/** The same private key with no certificate beside it. */
let bareKey: string;
/** Only `@cert-authority [127.0.0.1]:port <hostCa>`. */
let caKnownHosts: string;
const hosts: Array<SshHost | OpensshHost> = [];
let agent: ChildProcess | undefined;

function knownHostsFile(name: string, lines: readonly string[]): string {
  const path = join(work, name);
  writeFileSync(path, `${lines.join('\n')}\n`, { mode: 0o600 });
  return path;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'l20-certs-'));
  home = join(work, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  hostCa = newCertificateAuthority(work, 'host_ca');
  userCa = newCertificateAuthority(work, 'user_ca');
  otherCa = newCertificateAuthority(work, 'other_ca');
  userKey = join(work, 'user_key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'l20t-user', '-f', userKey]);
  bareKey = join(work, 'bare_key');
  copyFileSync(userKey, bareKey);
  sshd = await startSshd({
    hostCertificate: { ca: hostCa, principals: ['127.0.0.1'] },
    trustedUserCAKeys: userCa,
    authorizedKeys: false,
  });
  signKey(userCa, `${userKey}.pub`, { principals: [sshd.users.nopw] });
  caKnownHosts = knownHostsFile('known_hosts_ca', [`@cert-authority [127.0.0.1]:${sshd.port} ${hostCa.publicLine}`]);
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  if (agent?.pid !== undefined) agent.kill('SIGTERM');
  await sshd?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** The real ssh client: no config, no agent, a temp HOME, strict host key checking against `knownHosts`. */
function realSsh(key: string, knownHosts: string, extra: readonly string[] = []) {
  return spawnSync(
    'ssh',
    [
      '-F',
      '/dev/null',
      '-v',
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      `UserKnownHostsFile=${knownHosts}`,
      '-o',
      'GlobalKnownHostsFile=/dev/null',
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'ConnectTimeout=10',
      '-i',
      key,
      '-p',
      String(sshd.port),
      ...extra,
      `${sshd.users.nopw}@127.0.0.1`,
      'echo',
      'reached',
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, timeout: 20_000 },
  );
}

function ssh2Host(knownHosts: string, onUnknownHostKey?: (info: UnknownHostKeyInfo) => Promise<boolean>): SshHost {
  const host = new SshHost(
    sshd.hostOptions(sshd.users.nopw, {
      identityFiles: [userKey],
      knownHostsFiles: [knownHosts],
      readyTimeoutMs: 10_000,
      ...(onUnknownHostKey ? { onUnknownHostKey } : {}),
    }),
  );
  hosts.push(host);
  return host;
}

/** Resolves `alias` through a config file written into the temp HOME (its ~ is that HOME). */
function resolveWith(config: string, alias = 'certhost'): ResolvedSshConfig {
  const path = join(home, '.ssh', `config-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, config, { mode: 0o600 });
  const ctx = { ...defaultSshConfigContext(), homeDir: home, localUser: userInfo().username, env: { HOME: home } };
  return resolveSshConfig(alias, ctx, explicitSshConfigFiles(path));
}

describe('the fixture, proven with the real ssh client', () => {
  it('reaches sshd with only the user certificate; the host is verified by the @cert-authority line alone', () => {
    const r = realSsh(userKey, caKnownHosts);
    expect(r.stdout.trim(), r.stderr).toBe('reached');
    expect(r.stderr).toMatch(/Host '\[127\.0\.0\.1\]:\d+' is known and matches the ED25519-CERT host certificate/);
    expect(sshd.readLog()).toMatch(/Accepted publickey for l20t-nopw from 127\.0\.0\.1 port \d+ ssh2: ED25519-CERT/);
  });

  it('the same key without its certificate is refused (authorized_keys is off)', () => {
    const r = realSsh(bareKey, caKnownHosts);
    expect(r.status).toBe(255);
    expect(r.stderr).toContain('Permission denied (publickey)');
  });

  it('a host certificate signed by another CA is refused with StrictHostKeyChecking=yes', () => {
    const other = knownHostsFile('known_hosts_other', [`@cert-authority * ${otherCa.publicLine}`]);
    const r = realSsh(userKey, other);
    expect(r.status).toBe(255);
    expect(r.stderr).toMatch(/Host key verification failed/);
  });

  it('the CA key marked @revoked: ssh refuses the host', () => {
    const revoked = knownHostsFile('known_hosts_revoked', [
      `@cert-authority [127.0.0.1]:${sshd.port} ${hostCa.publicLine}`,
      `@revoked * ${hostCa.publicLine}`,
    ]);
    const r = realSsh(userKey, revoked);
    expect(r.status).toBe(255);
    expect(r.stderr).toMatch(/REVOKED HOST KEY|revoked/);
  });
});

describe('the built-in ssh2 transport against a CA-only host', () => {
  it('is refused with a message naming the CA it cannot check and the OpenSSH transport', async () => {
    const err = await ssh2Host(caKnownHosts)
      .connect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    const message = (err as Error).message;
    expect(message).toContain('is not known');
    expect(message).toContain('vouched for by a certificate authority');
    expect(message).toContain(`@cert-authority ssh-ed25519 ${fingerprintOf(hostCa)} (${caKnownHosts}:1)`);
    expect(message).toContain('`transport: openssh` (or auto)');
  });

  it('the trust prompt carries the same sentence; declining refuses', async () => {
    const asked: UnknownHostKeyInfo[] = [];
    const err = await ssh2Host(caKnownHosts, async (info) => {
      asked.push(info);
      return false;
    })
      .connect()
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'HostKeyError', kind: 'unknown' });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.fingerprint).toBe(sshd.hostKeyFingerprint);
    expect(asked[0]?.certificateAuthority).toMatch(/vouched for by a certificate authority.*`transport: openssh`/);
  });

  it('a revoked CA vouches for nothing: the refusal says the CA is @revoked', async () => {
    const revoked = knownHostsFile('known_hosts_revoked2', [
      `@cert-authority [127.0.0.1]:${sshd.port} ${hostCa.publicLine}`,
      `@revoked * ${hostCa.publicLine}`,
    ]);
    const err = await ssh2Host(revoked)
      .connect()
      .catch((e: unknown) => e);
    const message = (err as Error).message;
    expect(message).not.toContain('vouched for');
    expect(message).toContain(`${revoked}:2 marks that CA key @revoked`);
  });
});

function fingerprintOf(ca: CertificateAuthority): string {
  const out = execFileSync('ssh-keygen', ['-lf', ca.publicKeyPath], { encoding: 'utf8' });
  return out.split(/\s+/)[1] ?? '';
}

describe('known_hosts: @cert-authority entries kept apart from plain keys', () => {
  it('finds the CA under [host]:port and, failing that, the port-less name; plain verdicts ignore it', () => {
    const ported = hostCertificateAuthorities([caKnownHosts], '127.0.0.1', sshd.port);
    const fingerprint = fingerprintOf(hostCa);
    expect(ported).toEqual([{ keyType: 'ssh-ed25519', fingerprint, file: caKnownHosts, line: 1 }]);
    const portless = knownHostsFile('known_hosts_portless', [`@cert-authority 127.0.0.1 ${hostCa.publicLine}`]);
    expect(hostCertificateAuthorities([portless], '127.0.0.1', sshd.port)).toHaveLength(1);
    expect(hostCertificateAuthorities([portless], '127.0.0.1', sshd.port, 'other-alias')).toEqual([]);
    const caBlob = Buffer.from(hostCa.publicLine.split(' ')[1] ?? '', 'base64');
    // The CA's own key presented as a plain host key is not known because of the CA line.
    expect(verifyHostKey([caKnownHosts], '127.0.0.1', sshd.port, caBlob).status).toBe('unknown');
  });

  it('the note per transport: ssh2 cannot check the CA; after OpenSSH refused, the CA did not sign for it', () => {
    expect(certificateAuthorityNote([caKnownHosts], '127.0.0.1', sshd.port)).toContain('`transport: openssh`');
    const openssh = certificateAuthorityNote([caKnownHosts], '127.0.0.1', sshd.port, undefined, 'openssh');
    expect(openssh).toContain('OpenSSH found no host certificate signed by it for this name');
    expect(openssh).not.toContain('transport: openssh');
    expect(certificateAuthorityNote([sshd.knownHostsPath], '127.0.0.1', sshd.port)).toBeUndefined();
  });
});

describe('certificateReasons: each source', () => {
  const hostBlock = () =>
    `Host certhost\n  HostName 127.0.0.1\n  Port ${sshd.port}\n  User ${sshd.users.nopw}\n` +
    `  UserKnownHostsFile ${join(work, 'none_known_hosts')}\n  GlobalKnownHostsFile /dev/null\n`;

  it('a CertificateFile holding a certificate, with its file:line; a plain key there is no reason', () => {
    const keys = join(home, 'keys');
    mkdirSync(keys, { recursive: true });
    copyFileSync(`${userKey}-cert.pub`, join(keys, `${sshd.users.nopw}-cert.pub`));
    const r = resolveWith(`${hostBlock()}  CertificateFile ~/keys/%r-cert.pub\n  CertificateFile ${userKey}.pub\n`);
    const reasons = certificateReasons(r);
    expect(reasons).toEqual([
      {
        what:
          `CertificateFile ${join(keys, `${sshd.users.nopw}-cert.pub`)} holds a ssh-ed25519-cert-v01@openssh.com ` +
          'user certificate',
        source: `${r.filesRead[0]}:7`,
      },
    ]);
  });

  it('<identity>-cert.pub beside the key, unless CertificateFile is set (then ssh does not look)', () => {
    const r = resolveWith(`${hostBlock()}  IdentityFile ${userKey}\n  IdentityFile ${bareKey}\n`);
    expect(certificateReasons(r)).toEqual([
      {
        what:
          `${userKey}-cert.pub beside the identity ${userKey} holds a ssh-ed25519-cert-v01@openssh.com user ` +
          'certificate (ssh offers it automatically)',
        source: `${r.filesRead[0]}:7`,
      },
    ]);
    const withFile = resolveWith(`${hostBlock()}  IdentityFile ${userKey}\n  CertificateFile ${bareKey}.pub\n`);
    expect(certificateReasons(withFile)).toEqual([]);
  });

  it('an agent holding a certificate (real ssh-agent, ssh-add); an absent agent is an error, not a hang', async () => {
    const sock = join(work, 'agent.sock');
    agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    await waitFor(() => existsSync(sock), 'ssh-agent to listen');
    const add = spawnSync('ssh-add', [userKey], { encoding: 'utf8', env: { ...process.env, SSH_AUTH_SOCK: sock } });
    expect(add.status, add.stderr).toBe(0);
    expect(add.stderr).toContain('Certificate added');
    const identities = await listAgentIdentities(sock);
    expect(identities.map((i) => i.keyType).sort()).toEqual(['ssh-ed25519', 'ssh-ed25519-cert-v01@openssh.com']);
    const r = resolveWith(`${hostBlock()}  IdentityFile ${bareKey}\n`);
    const reasons = certificateReasons(r, { agent: { socket: sock, identities } });
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatchObject({ source: `ssh-agent ${sock}` });
    expect(reasons[0]?.what).toMatch(/^the agent holds a ssh-ed25519-cert-v01@openssh\.com user certificate SHA256:/);
    // IdentitiesOnly: ssh offers only what the files name, so the agent's certificate is no reason.
    const only = resolveWith(`${hostBlock()}  IdentityFile ${bareKey}\n  IdentitiesOnly yes\n`);
    expect(certificateReasons(only, { agent: { socket: sock, identities } })).toEqual([]);
    const started = Date.now();
    const absent = await listAgentIdentities(join(work, 'no-agent.sock')).catch((e: unknown) => e);
    expect(absent).toBeInstanceOf(AgentListError);
    expect((absent as Error).message).toContain('ENOENT');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await agentInput(join(work, 'no-agent.sock'))).toBeUndefined();
    expect(await agentInput(undefined)).toBeUndefined();
    expect((await agentInput(sock))?.identities).toHaveLength(2);
  });

  it('an agent that never answers, or answers too much, is given up on within the time limit', async () => {
    const serve = (name: string, onData: (sock: Socket) => void): Promise<Server> =>
      new Promise((resolve) => {
        const server = createServer((sock) => sock.once('data', () => onData(sock)));
        server.listen(join(work, name), () => resolve(server));
      });
    const silent = await serve('silent.sock', () => undefined);
    const huge = await serve('huge.sock', (sock) => sock.write(Buffer.from([0x7f, 0xff, 0xff, 0xff, 12])));
    try {
      const started = Date.now();
      const err = await listAgentIdentities(join(work, 'silent.sock'), 300).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentListError);
      expect((err as Error).message).toContain('no answer within 300 ms');
      expect(Date.now() - started).toBeLessThan(2000);
      const big = await listAgentIdentities(join(work, 'huge.sock'), 300).catch((e: unknown) => e);
      expect((big as Error).message).toMatch(/answer of 2147483647 bytes \(at most 262144\)/);
    } finally {
      await Promise.all([silent, huge].map((srv) => new Promise((r) => srv.close(r))));
    }
  });

  it('a CA line for a host with no plain key; none once a plain key is there or the CA is revoked', () => {
    const r = resolveWith(hostBlock());
    expect(certificateReasons(r, { knownHostsFiles: [caKnownHosts] })).toEqual([
      {
        what:
          `known_hosts trusts the host only through @cert-authority ssh-ed25519 ${fingerprintOf(hostCa)}: ` +
          'its host certificate can be checked by OpenSSH only',
        source: `${caKnownHosts}:1`,
      },
    ]);
    const withPlain = knownHostsFile('known_hosts_both', [
      `@cert-authority [127.0.0.1]:${sshd.port} ${hostCa.publicLine}`,
      `[127.0.0.1]:${sshd.port} ${sshd.hostPublicKeyLine}`,
    ]);
    expect(certificateReasons(r, { knownHostsFiles: [withPlain] })).toEqual([]);
    const revoked = knownHostsFile('known_hosts_revoked3', [
      `@cert-authority [127.0.0.1]:${sshd.port} ${hostCa.publicLine}`,
      `@revoked * ${hostCa.publicLine}`,
    ]);
    expect(certificateReasons(r, { knownHostsFiles: [revoked] })).toEqual([]);
    expect(certificateReasons(r)).toEqual([]); // the resolved files hold nothing for it
  });
});

describe('the OpenSSH transport (OpensshHost) with certificates', () => {
  let sshConfig: string;
  let controls = 0;

  /** Only the key the test names and no agent: nothing of this machine's ssh setup takes part. */
  function opensshHost(
    knownHosts: string,
    onUnknownHostKey?: (info: UnknownHostKeyInfo) => Promise<boolean>,
  ): OpensshHost {
    sshConfig ??= (() => {
      const path = join(work, 'openssh_config');
      writeFileSync(path, 'IdentitiesOnly yes\nIdentityAgent none\n', { mode: 0o600 });
      return path;
    })();
    const user = sshd.users.nopw;
    const host = new OpensshHost({
      ...sshd.hostOptions(user, { identityFiles: [userKey], knownHostsFiles: [knownHosts] }),
      ...(onUnknownHostKey ? { onUnknownHostKey } : {}),
      sshAlias: '127.0.0.1',
      inventory: { port: sshd.port, user, identityFiles: [userKey] },
      sshConfigFile: sshConfig,
      controlDir: join(work, `ctl-${controls++}`),
      idleExitS: 2,
    });
    hosts.push(host);
    return host;
  }

  it('reaches sshd with the user certificate, the host verified by the CA line alone: nothing asked', async () => {
    const asked: UnknownHostKeyInfo[] = [];
    const before = readFileSync(caKnownHosts, 'utf8');
    const offset = sshd.readLog().length;
    const host = opensshHost(caKnownHosts, async (info) => {
      asked.push(info);
      return false;
    });
    const r = await host.run({ argv: ['id', '-un'] });
    expect(r.stdout).toBe(`${sshd.users.nopw}\n`);
    expect(asked).toEqual([]);
    expect(readFileSync(caKnownHosts, 'utf8')).toBe(before); // the CA line is all it needed
    expect(sshd.readLog().slice(offset)).toMatch(/Accepted publickey for l20t-nopw .* ssh2: ED25519-CERT/);
    await host.close();
  });

  it('no CA known for the host: its plain key goes to the trust prompt; declining refuses, trusting records it', async () => {
    const empty = knownHostsFile('known_hosts_empty', ['# nothing yet']);
    const asked: UnknownHostKeyInfo[] = [];
    const declined = await opensshHost(empty, async (info) => {
      asked.push(info);
      return false;
    })
      .connect()
      .catch((e: unknown) => e);
    expect(declined).toMatchObject({ name: 'HostKeyError', kind: 'unknown' });
    expect(asked.map((a) => a.fingerprint)).toEqual([sshd.hostKeyFingerprint]);
    expect(asked[0]?.certificateAuthority).toBeUndefined();
    const trusting = opensshHost(empty, async () => true);
    expect((await trusting.run({ argv: ['true'] })).exitCode).toBe(0);
    expect(readFileSync(empty, 'utf8')).toContain(sshd.hostPublicKeyLine.split(' ')[1]);
    await trusting.close();
  });

  it('a host certificate signed by another CA is refused, naming the CA line that did not vouch', async () => {
    const other = knownHostsFile('known_hosts_other_ca', [`@cert-authority * ${otherCa.publicLine}`]);
    const err = await opensshHost(other)
      .connect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err).toMatchObject({ kind: 'unknown', presentedFingerprint: sshd.hostKeyFingerprint });
    const message = (err as Error).message;
    expect(message).toContain(`@cert-authority ssh-ed25519 ${fingerprintOf(otherCa)} (${other}:1)`);
    expect(message).toContain('OpenSSH found no host certificate signed by it');
    expect(message).not.toContain('transport: openssh');
  });

  it('the right CA marked @revoked: refused, the message saying the CA is revoked', async () => {
    const revoked = knownHostsFile('known_hosts_revoked_openssh', [
      `@cert-authority [127.0.0.1]:${sshd.port} ${hostCa.publicLine}`,
      `@revoked * ${hostCa.publicLine}`,
    ]);
    const err = await opensshHost(revoked)
      .connect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect((err as Error).message).toContain(`${revoked}:2 marks that CA key @revoked`);
  });
});
