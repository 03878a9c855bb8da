/**
 * known_hosts semantics with the real OpenSSH client as the oracle. For each case one ssh_config and the
 * known_hosts files it names are written twice: `ssh -F <config> oracle true` runs against a real sshd on
 * loopback, and SshHost connects through the same config (resolveSshConfig + sshHostOptionsFromConfig).
 * Each side's outcome is classified — connected, accepted-new (connected and recorded the key), unknown,
 * changed or revoked — and the two must agree with each other and with the case's expectation; for
 * accept-new the line each side appended must be the same.
 *
 * Three servers: one with only an ed25519 host key, one with ed25519, ECDSA and RSA keys, one with ECDSA and
 * RSA keys (the client's host key algorithm order decides which key a server presents, so these check that
 * SshHost offers the recorded key types first exactly as OpenSSH's order_hostkeyalgs does).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSshConfig } from '../../src/transport/ssh-config.js';
import { defaultSshConfigContext } from '../../src/transport/ssh-config-context.js';
import { sshHostOptionsFromConfig } from '../../src/transport/ssh-options-from-config.js';
import { SshHost } from '../../src/transport/ssh.js';
import { HostKeyError } from '../../src/transport/types.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';

type Outcome = 'connected' | 'accepted-new' | 'unknown' | 'changed' | 'revoked';
type Strict = 'yes' | 'accept-new';

/** A public key as a known_hosts line needs it. */
interface Pub {
  type: string;
  b64: string;
}

interface Keys {
  /** The ed25519-only server's key. */
  single: Pub;
  multiEd25519: Pub;
  multiEcdsa: Pub;
  multiRsa: Pub;
  noEd25519Rsa: Pub;
  /** Keys no server has. */
  otherEd25519: Pub;
  otherEcdsa: Pub;
  otherRsa: Pub;
  otherDsa: Pub;
}

interface Files {
  /** UserKnownHostsFile, in order; none when empty. */
  user: string[];
  /** GlobalKnownHostsFile contents; /dev/null when absent. */
  global?: string[];
}

interface Case {
  name: string;
  server: 'single' | 'multi' | 'noEd25519';
  strict?: Strict;
  /** HostKeyAlias for the ssh_config. */
  alias?: string;
  /** known_hosts texts; `hp` is `[127.0.0.1]:<port>` for the case's server. */
  files: (k: Keys, hp: string) => Files;
  expect: Outcome;
}

let single: Sshd;
let multi: Sshd;
let noEd25519: Sshd;
let keys: Keys;
let dir: string;

function pubOf(line: string): Pub {
  const [type, b64] = line.trim().split(/\s+/);
  if (type === undefined || b64 === undefined) throw new Error(`not a public key line: ${line}`);
  return { type, b64 };
}

function freshKey(type: string): Pub {
  const path = join(dir, `other_${type}_${randomBytes(4).toString('hex')}`);
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', path]);
  return pubOf(readFileSync(`${path}.pub`, 'utf8'));
}

function entry(hosts: string, k: Pub, comment = ''): string {
  return `${hosts} ${k.type} ${k.b64}${comment ? ` ${comment}` : ''}\n`;
}

function blobOf(k: Pub): Buffer {
  return Buffer.from(k.b64, 'base64');
}

function sshString(data: Buffer | string): Buffer {
  const body = Buffer.from(data);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

/** An ssh-rsa blob with a 768-bit modulus: well formed, but below OpenSSH's 1024-bit minimum. */
function shortRsaBlob(): Buffer {
  const n = randomBytes(96);
  n[0] = (n[0] ?? 0) | 0x80;
  const e = Buffer.from([0x01, 0x00, 0x01]);
  return Buffer.concat([sshString('ssh-rsa'), sshString(e), sshString(Buffer.concat([Buffer.from([0]), n]))]);
}

/** The ECDSA key's blob with its point altered: `mutate` gets the uncompressed point (0x04 || x || y). */
function ecdsaWithPoint(k: Pub, mutate: (point: Buffer) => Buffer): string {
  const blob = blobOf(k);
  const typeLen = blob.readUInt32BE(0);
  const curveAt = 4 + typeLen;
  const curveLen = blob.readUInt32BE(curveAt);
  const pointAt = curveAt + 4 + curveLen;
  const point = Buffer.from(blob.subarray(pointAt + 4));
  return Buffer.concat([blob.subarray(0, pointAt), sshString(mutate(point))]).toString('base64');
}

/** A file hashed by `ssh-keygen -H` (an independent hasher). */
function hashedBySshKeygen(text: string): string {
  const path = join(dir, `tohash-${randomBytes(4).toString('hex')}`);
  writeFileSync(path, text);
  execFileSync('ssh-keygen', ['-q', '-H', '-f', path], { stdio: 'ignore' });
  const hashed = readFileSync(path, 'utf8');
  if (!hashed.startsWith('|1|')) throw new Error(`ssh-keygen -H did not hash ${path}: ${hashed}`);
  return hashed;
}

const malformedOnly = (name: string, line: (k: Keys, hp: string) => string): Case => ({
  name: `malformed, skipped: ${name}`,
  server: 'single',
  files: (k, hp) => ({ user: [line(k, hp)] }),
  expect: 'unknown',
});

const CASES: Case[] = [
  {
    name: 'exact key for [host]:port',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'another ed25519 key',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.otherEd25519)] }),
    expect: 'changed',
  },
  {
    name: 'RSA recorded, the server offers only ed25519 (key-type change)',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.multiRsa)] }),
    expect: 'changed',
  },
  {
    name: 'ECDSA recorded, the server offers only ed25519',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.otherEcdsa)] }),
    expect: 'changed',
  },
  {
    name: 'key-type change is refused with accept-new too',
    server: 'single',
    strict: 'accept-new',
    files: (k, hp) => ({ user: [entry(hp, k.otherRsa)] }),
    expect: 'changed',
  },
  {
    name: 'DSA recorded (a type neither side offers), the server offers ed25519',
    server: 'multi',
    files: (k, hp) => ({ user: [entry(hp, k.otherDsa)] }),
    expect: 'changed',
  },
  {
    name: 'multi-key server, only its RSA key recorded',
    server: 'multi',
    files: (k, hp) => ({ user: [entry(hp, k.multiRsa)] }),
    expect: 'connected',
  },
  {
    name: 'multi-key server, only its ECDSA key recorded',
    server: 'multi',
    files: (k, hp) => ({ user: [entry(hp, k.multiEcdsa)] }),
    expect: 'connected',
  },
  {
    name: 'multi-key server, its RSA key and a wrong ed25519 (ed25519 is offered first)',
    server: 'multi',
    files: (k, hp) => ({ user: [entry(hp, k.multiRsa) + entry(hp, k.otherEd25519)] }),
    expect: 'changed',
  },
  {
    name: 'multi-key server, its RSA key listed before a wrong ECDSA (ECDSA is offered first)',
    server: 'multi',
    files: (k, hp) => ({ user: [entry(hp, k.multiRsa) + entry(hp, k.otherEcdsa)] }),
    expect: 'changed',
  },
  {
    name: 'ECDSA+RSA server, its RSA key and a wrong ed25519: ed25519 known, so the default order (ECDSA next) stays',
    server: 'noEd25519',
    files: (k, hp) => ({ user: [entry(hp, k.otherEd25519) + entry(hp, k.noEd25519Rsa)] }),
    expect: 'changed',
  },
  {
    name: 'ECDSA+RSA server, only its RSA key recorded',
    server: 'noEd25519',
    files: (k, hp) => ({ user: [entry(hp, k.noEd25519Rsa)] }),
    expect: 'connected',
  },
  {
    name: 'multi-key server, nothing recorded, accept-new records the ed25519 key',
    server: 'multi',
    strict: 'accept-new',
    files: () => ({ user: [''] }),
    expect: 'accepted-new',
  },
  {
    name: 'nothing recorded',
    server: 'single',
    files: () => ({ user: [''] }),
    expect: 'unknown',
  },
  {
    name: 'nothing recorded, accept-new',
    server: 'single',
    strict: 'accept-new',
    files: () => ({ user: [''] }),
    expect: 'accepted-new',
  },
  {
    name: 'another ed25519 key, accept-new',
    server: 'single',
    strict: 'accept-new',
    files: (k, hp) => ({ user: [entry(hp, k.otherEd25519)] }),
    expect: 'changed',
  },
  {
    name: '@revoked beside a plain entry for the same key',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.single) + entry('@revoked *', k.single)] }),
    expect: 'revoked',
  },
  {
    name: '@revoked alone',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`@revoked ${hp}`, k.single)] }),
    expect: 'revoked',
  },
  {
    name: '@revoked with accept-new',
    server: 'single',
    strict: 'accept-new',
    files: (k) => ({ user: [entry('@revoked *', k.single)] }),
    expect: 'revoked',
  },
  {
    name: '@revoked for another key does not matter',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.single) + entry('@revoked *', k.otherEd25519)] }),
    expect: 'connected',
  },
  {
    name: '@revoked for the port-less name',
    server: 'single',
    files: (k) => ({ user: [entry('@revoked 127.0.0.1', k.single)] }),
    expect: 'revoked',
  },
  {
    name: 'hashed [host]:port (ssh-keygen -H)',
    server: 'single',
    files: (k, hp) => ({ user: [hashedBySshKeygen(entry(hp, k.single))] }),
    expect: 'connected',
  },
  {
    name: 'hashed [host]:port holding another key',
    server: 'single',
    files: (k, hp) => ({ user: [hashedBySshKeygen(entry(hp, k.otherEd25519))] }),
    expect: 'changed',
  },
  {
    name: 'hashed port-less host (ssh-keygen -H)',
    server: 'single',
    files: (k) => ({ user: [hashedBySshKeygen(entry('127.0.0.1', k.single))] }),
    expect: 'connected',
  },
  {
    name: 'hashed port-less host holding another key',
    server: 'single',
    files: (k) => ({ user: [hashedBySshKeygen(entry('127.0.0.1', k.otherEd25519))] }),
    expect: 'unknown',
  },
  {
    name: 'hashed entry with another host after a comma',
    server: 'single',
    files: (k, hp) => ({ user: [hashedBySshKeygen(entry(hp, k.single)).replace(/ ssh-ed25519 /, ',gpu9$&')] }),
    expect: 'unknown',
  },
  {
    name: 'port-less host entry with the exact key',
    server: 'single',
    files: (k) => ({ user: [entry('127.0.0.1', k.single)] }),
    expect: 'connected',
  },
  {
    name: 'port-less host entry with another key',
    server: 'single',
    files: (k) => ({ user: [entry('127.0.0.1', k.otherEd25519)] }),
    expect: 'unknown',
  },
  {
    name: 'port-less host entry with another key, accept-new',
    server: 'single',
    strict: 'accept-new',
    files: (k) => ({ user: [entry('127.0.0.1', k.otherEd25519)] }),
    expect: 'accepted-new',
  },
  {
    name: 'port-less exact key, but [host]:port records another',
    server: 'single',
    files: (k, hp) => ({ user: [entry('127.0.0.1', k.single) + entry(hp, k.otherEd25519)] }),
    expect: 'changed',
  },
  {
    name: "another port's entry",
    server: 'single',
    files: (k) => ({ user: [entry('[127.0.0.1]:1', k.single)] }),
    expect: 'unknown',
  },
  {
    name: 'wildcards [127.0.0.*]:*',
    server: 'single',
    files: (k) => ({ user: [entry('[127.0.0.*]:*', k.single)] }),
    expect: 'connected',
  },
  {
    name: '? wildcard',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp.replace('127.0.0.1', '127.0.0.?'), k.single)] }),
    expect: 'connected',
  },
  {
    name: '* with another key',
    server: 'single',
    files: (k) => ({ user: [entry('*', k.otherEd25519)] }),
    expect: 'changed',
  },
  {
    name: 'a negation beats a matching wildcard',
    server: 'single',
    files: (k) => ({ user: [entry('*,!*127.0.0.1*', k.single)] }),
    expect: 'unknown',
  },
  {
    name: 'negating only [host]:port leaves the port-less fallback, where * matches',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`*,!${hp}`, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'a negated line with another key does not count as recorded',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`!${hp},*`, k.otherEd25519)] }),
    expect: 'unknown',
  },
  {
    name: 'a negation in one line, the key in another',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`*,!${hp}`, k.otherEd25519) + entry(hp, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'malformed lines around the right one',
    server: 'single',
    files: (k, hp) => ({
      user: [
        [
          `${hp} ssh-ed25519 !!notbase64!!`,
          `${hp} ssh-foo ${k.otherEd25519.b64}`,
          `${hp}`,
          `${hp} ssh-ed25519`,
          `@bogus ${hp} ssh-ed25519 ${k.otherEd25519.b64}`,
          entry(hp, k.single).trim(),
          `${hp} ssh-rsa ${k.otherEd25519.b64}`,
          '# the end',
        ].join('\n'),
      ],
    }),
    expect: 'connected',
  },
  malformedOnly('bad base64', (k, hp) => `${hp} ssh-ed25519 !!${k.otherEd25519.b64}\n`),
  malformedOnly('unknown key type', (k, hp) => `${hp} ssh-foo ${k.otherEd25519.b64}\n`),
  malformedOnly('host only', (_k, hp) => `${hp}\n`),
  malformedOnly('no key after the type', (_k, hp) => `${hp} ssh-ed25519\n`),
  malformedOnly('unknown marker', (k, hp) => `@bogus ${hp} ssh-ed25519 ${k.otherEd25519.b64}\n`),
  malformedOnly('ed25519 key under the ssh-rsa name', (k, hp) => `${hp} ssh-rsa ${k.otherEd25519.b64}\n`),
  malformedOnly('nistp256 key under the nistp384 name', (k, hp) => `${hp} ecdsa-sha2-nistp384 ${k.otherEcdsa.b64}\n`),
  malformedOnly('ed25519 key 4 bytes short', (k, hp) => {
    const blob = blobOf(k.otherEd25519);
    const short = Buffer.concat([blob.subarray(0, 15), sshString(blob.subarray(19 + 4))]);
    return `${hp} ssh-ed25519 ${short.toString('base64')}\n`;
  }),
  malformedOnly('trailing bytes after the key', (k, hp) => {
    const padded = Buffer.concat([blobOf(k.otherEd25519), Buffer.from([0, 0, 0, 0])]);
    return `${hp} ssh-ed25519 ${padded.toString('base64')}\n`;
  }),
  malformedOnly('base64 without its padding', (k, hp) => {
    if (!k.otherEcdsa.b64.endsWith('=')) throw new Error('an ECDSA P-256 key blob (104 bytes) encodes with padding');
    return `${hp} ${k.otherEcdsa.type} ${k.otherEcdsa.b64.replace(/=+$/, '')}\n`;
  }),
  malformedOnly('base64 with non-zero bits past the last byte', (k, hp) => {
    const b64 = k.otherEcdsa.b64;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const last = alphabet.indexOf(b64[b64.length - 2] ?? 'A');
    return `${hp} ${k.otherEcdsa.type} ${b64.slice(0, -2)}${alphabet[last ^ 1]}=\n`;
  }),
  malformedOnly('768-bit RSA key', (_k, hp) => `${hp} ssh-rsa ${shortRsaBlob().toString('base64')}\n`),
  malformedOnly('ECDSA point off the curve', (k, hp) => {
    const b64 = ecdsaWithPoint(k.otherEcdsa, (p) => {
      p[p.length - 1] = (p[p.length - 1] ?? 0) ^ 1;
      return p;
    });
    return `${hp} ecdsa-sha2-nistp256 ${b64}\n`;
  }),
  malformedOnly('compressed ECDSA point', (k, hp) => {
    const compress = (p: Buffer) => {
      const yIsOdd = ((p[p.length - 1] ?? 0) & 1) === 1;
      return Buffer.concat([Buffer.from([yIsOdd ? 0x03 : 0x02]), p.subarray(1, 33)]);
    };
    const b64 = ecdsaWithPoint(k.otherEcdsa, compress);
    return `${hp} ecdsa-sha2-nistp256 ${b64}\n`;
  }),
  {
    name: 'rsa-sha2-512 as the key type name',
    server: 'multi',
    files: (k, hp) => ({ user: [`${hp} rsa-sha2-512 ${k.multiRsa.b64}\n`] }),
    expect: 'connected',
  },
  {
    name: 'tabs between fields and leading whitespace',
    server: 'single',
    files: (k, hp) => ({ user: [` \t${hp}\t${k.single.type} \t${k.single.b64}\tcomment\n`] }),
    expect: 'connected',
  },
  {
    name: 'CRLF line ends',
    server: 'single',
    files: (k, hp) => ({ user: [`# windows\r\n${entry(hp, k.single).trim()}\r\n`] }),
    expect: 'connected',
  },
  {
    name: 'a host pattern of 1023 characters ends the pattern list unmatched (match_pattern_list gives up)',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`${'x'.repeat(1023)},${hp}`, k.single)] }),
    expect: 'unknown',
  },
  {
    name: 'a host pattern of 1022 characters is read',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`${'x'.repeat(1022)},${hp}`, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'a 20000-character comment',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.single, 'c'.repeat(20000))] }),
    expect: 'connected',
  },
  {
    name: '@cert-authority only (the server presents a plain key)',
    server: 'single',
    files: (k, hp) => ({ user: [entry(`@cert-authority ${hp}`, k.otherEd25519)] }),
    expect: 'unknown',
  },
  {
    name: "@cert-authority holding the server's own key",
    server: 'single',
    files: (k) => ({ user: [entry('@cert-authority *', k.single)] }),
    expect: 'unknown',
  },
  {
    name: 'two user files: another key in the first, the right one in the second',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.otherEd25519), entry(hp, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'two user files: the right key, then @revoked in the second',
    server: 'single',
    files: (k, hp) => ({ user: [entry(hp, k.single), entry('@revoked *', k.single)] }),
    expect: 'revoked',
  },
  {
    name: 'HostKeyAlias entry with the exact key',
    server: 'single',
    alias: 'gpu-a',
    files: (k) => ({ user: [entry('gpu-a', k.single)] }),
    expect: 'connected',
  },
  {
    name: 'HostKeyAlias replaces [host]:port: its entry is not consulted',
    server: 'single',
    alias: 'gpu-a',
    files: (k, hp) => ({ user: [entry(hp, k.single) + entry('127.0.0.1', k.single)] }),
    expect: 'unknown',
  },
  {
    name: 'HostKeyAlias entry with another key',
    server: 'single',
    alias: 'gpu-a',
    files: (k) => ({ user: [entry('gpu-a', k.otherEd25519)] }),
    expect: 'changed',
  },
  {
    name: 'HostKeyAlias in capitals, hashed lower-case entry',
    server: 'single',
    alias: 'GPU-A',
    files: (k) => ({ user: [hashedBySshKeygen(entry('gpu-a', k.single))] }),
    expect: 'connected',
  },
  {
    name: 'HostKeyAlias, accept-new records the key under the alias',
    server: 'single',
    alias: 'GPU-A',
    strict: 'accept-new',
    files: () => ({ user: [''] }),
    expect: 'accepted-new',
  },
  {
    name: 'UserKnownHostsFile none, the key in the global file',
    server: 'single',
    files: (k, hp) => ({ user: [], global: [entry(hp, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'UserKnownHostsFile none, accept-new: nowhere to record, so refused',
    server: 'single',
    strict: 'accept-new',
    files: () => ({ user: [], global: [''] }),
    expect: 'unknown',
  },
  {
    name: 'the key only in the global file',
    server: 'single',
    files: (k, hp) => ({ user: [''], global: [entry(hp, k.single)] }),
    expect: 'connected',
  },
  {
    name: 'the global file records another key',
    server: 'single',
    files: (k, hp) => ({ user: [''], global: [entry(hp, k.otherEd25519)] }),
    expect: 'changed',
  },
];

beforeAll(async () => {
  try {
    execFileSync('ssh', ['-V'], { stdio: 'ignore' });
  } catch (err) {
    const why = (err as Error).message;
    throw new Error(`the known_hosts oracle needs the OpenSSH client (Debian package openssh-client): ${why}`, {
      cause: err,
    });
  }
  dir = mkdtempSync(join(tmpdir(), 'l20-kh-oracle-'));
  [single, multi, noEd25519] = await Promise.all([
    startSshd(),
    startSshd({ hostKeyTypes: ['ed25519', 'ecdsa', 'rsa'] }),
    startSshd({ hostKeyTypes: ['ecdsa', 'rsa'] }),
  ]);
  const keyOf = (sshd: Sshd, type: string) => pubOf(sshd.hostKeys.find((k) => k.type === type)?.publicLine ?? '');
  const multiKey = (type: string) => keyOf(multi, type);
  keys = {
    single: pubOf(single.hostPublicKeyLine),
    multiEd25519: multiKey('ed25519'),
    multiEcdsa: multiKey('ecdsa'),
    multiRsa: multiKey('rsa'),
    noEd25519Rsa: keyOf(noEd25519, 'rsa'),
    otherEd25519: freshKey('ed25519'),
    otherEcdsa: freshKey('ecdsa'),
    otherRsa: freshKey('rsa'),
    otherDsa: freshKey('dsa'),
  };
}, 60_000);

afterAll(async () => {
  await Promise.all([single?.stop(), multi?.stop(), noEd25519?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Writes the case's files under `side` and an ssh_config naming them; returns the config and a reader of
 * every known_hosts file's text (to see what a side recorded).
 */
function writeSide(side: string, c: Case, files: Files, sshd: Sshd): { config: string; recorded: () => string } {
  mkdirSync(side, { recursive: true });
  const user = files.user.map((text, i) => {
    const path = join(side, `known_hosts_${i}`);
    writeFileSync(path, text, { mode: 0o600 });
    return path;
  });
  const global = (files.global ?? []).map((text, i) => {
    const path = join(side, `global_known_hosts_${i}`);
    writeFileSync(path, text, { mode: 0o644 });
    return path;
  });
  const config = join(side, 'ssh_config');
  writeFileSync(
    config,
    [
      'Host oracle',
      '  HostName 127.0.0.1',
      `  Port ${sshd.port}`,
      `  User ${sshd.users.nopw}`,
      `  IdentityFile ${sshd.clientKeyPath}`,
      '  IdentitiesOnly yes',
      '  IdentityAgent none',
      `  UserKnownHostsFile ${user.length > 0 ? user.join(' ') : 'none'}`,
      `  GlobalKnownHostsFile ${global.length > 0 ? global.join(' ') : '/dev/null'}`,
      `  StrictHostKeyChecking ${c.strict ?? 'yes'}`,
      ...(c.alias !== undefined ? [`  HostKeyAlias ${c.alias}`] : []),
      '  BatchMode yes',
      '  CheckHostIP no',
      '  UpdateHostKeys no',
      '  HashKnownHosts no',
      '  ConnectTimeout 20',
      '',
    ].join('\n'),
  );
  return { config, recorded: () => [...user, ...global].map((f) => readFileSync(f, 'utf8')).join('\0') };
}

function runSsh(config: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile('ssh', ['-F', config, 'oracle', 'true'], { timeout: 30_000 }, (err, _stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stderr: String(stderr) });
    });
  });
}

/** OpenSSH's outcome, from its exit status and the messages sshconnect.c check_host_key prints. */
function classifyOpenSsh(code: number, stderr: string, appended: boolean): Outcome {
  if (code === 0) return appended && /Permanently added/.test(stderr) ? 'accepted-new' : 'connected';
  if (/REVOKED HOST KEY DETECTED/.test(stderr) && /marked as revoked/.test(stderr)) return 'revoked';
  const changed = /REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr);
  if (changed && /has changed and you have requested strict checking/.test(stderr)) return 'changed';
  if (/No \S+ host key is known for .* and you have requested strict checking/.test(stderr)) return 'unknown';
  // With no UserKnownHostsFile, ssh cannot record a new key and refuses it without saying more.
  if (stderr.trim() === 'Host key verification failed.') return 'unknown';
  throw new Error(`ssh exited ${code} for a reason the oracle does not classify:\n${stderr}`);
}

async function ourOutcome(config: string, appended: () => boolean): Promise<{ outcome: Outcome; detail: string }> {
  const resolved = resolveSshConfig('oracle', defaultSshConfigContext(), [{ path: config, kind: 'user' }]);
  const { options, unsupported } = sshHostOptionsFromConfig('oracle', resolved, { env: {} });
  expect(unsupported).toEqual([]);
  const host = new SshHost(options);
  try {
    await host.connect();
    const r = await host.run({ argv: ['true'] });
    expect(r.exitCode).toBe(0);
    return { outcome: appended() ? 'accepted-new' : 'connected', detail: 'connected' };
  } catch (err) {
    if (err instanceof HostKeyError) return { outcome: err.kind, detail: err.message };
    throw err;
  } finally {
    await host.close();
  }
}

describe('known_hosts: SshHost agrees with the real OpenSSH client', () => {
  it(`classifies ${CASES.length} cases as ssh does`, async () => {
    const disagreements: string[] = [];
    let agree = 0;
    for (const [i, c] of CASES.entries()) {
      const sshd = { single, multi, noEd25519 }[c.server];
      const caseDir = join(dir, `case-${i}`);
      const files = c.files(keys, `[127.0.0.1]:${sshd.port}`); // once: hashing salts and made-up keys are random
      const theirs = writeSide(join(caseDir, 'openssh'), c, files, sshd);
      const ours = writeSide(join(caseDir, 'ours'), c, files, sshd);
      const before = theirs.recorded();
      const { code, stderr } = await runSsh(theirs.config);
      const openssh = classifyOpenSsh(code, stderr, theirs.recorded() !== before);
      const mine = await ourOutcome(ours.config, () => ours.recorded() !== before);
      // What each side recorded must be the same line (accept-new), or nothing.
      const recordedAlike = theirs.recorded() === ours.recorded();
      if (openssh !== c.expect || mine.outcome !== openssh || !recordedAlike) {
        const sshTail = stderr.trim().split('\n').slice(-3).join(' | ');
        disagreements.push(
          `#${i} ${c.name}: expected ${c.expect}, OpenSSH ${openssh}, ours ${mine.outcome}` +
            `${recordedAlike ? '' : ' (recorded different lines)'}\n  ssh: ${sshTail}\n  ours: ${mine.detail}`,
        );
      } else {
        agree++;
      }
    }
    console.log(`known_hosts oracle: ${agree} cases agree`);
    expect(disagreements).toEqual([]);
    expect(agree).toBe(CASES.length);
    expect(agree).toBeGreaterThanOrEqual(20);
  }, 240_000);
});
