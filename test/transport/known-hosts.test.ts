import { createHmac, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendKnownHost,
  fingerprintSha256,
  matchHostPatternList,
  parseKnownHosts,
  verifyHostKey,
} from '../../src/transport/known-hosts.js';
import { hostKeyAlgorithmsPreferring } from '../../src/transport/ssh-host-key.js';
import { checkedPublicKeyType, keyTypeOfBlob } from '../../src/transport/ssh-public-key.js';
import { generateEd25519 } from './helpers/ssh-server.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'l20-kh-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function blobOf(pubLine: string): Buffer {
  return Buffer.from(pubLine.trim().split(/\s+/)[1] as string, 'base64');
}

/** `|1|salt|hash` computed here, independently of the module. */
function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

function writeKh(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('fingerprintSha256', () => {
  for (const type of ['ed25519', 'rsa', 'ecdsa']) {
    it(`matches ssh-keygen -lf for a ${type} key`, () => {
      const key = join(dir, `id_${type}`);
      execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'test', '-f', key]);
      const pub = readFileSync(`${key}.pub`, 'utf8');
      const printed = execFileSync('ssh-keygen', ['-lf', `${key}.pub`], { encoding: 'utf8' }).split(' ')[1];
      expect(printed).toMatch(/^SHA256:[A-Za-z0-9+/]+$/);
      expect(fingerprintSha256(blobOf(pub))).toBe(printed);
      expect(keyTypeOfBlob(blobOf(pub))).toBe(pub.split(' ')[0]);
    });
  }
});

describe('verifyHostKey', () => {
  const a = generateEd25519();
  const b = generateEd25519();
  const a64 = a.blob.toString('base64');
  const b64 = b.blob.toString('base64');

  it('finds plain, multi-host and [host]:port entries; skips comments and blank lines', () => {
    const file = writeKh(
      'plain',
      [
        '# comment',
        '',
        `   `,
        `gpu1,10.0.0.5 ssh-ed25519 ${a64} root@gpu1`,
        `[127.0.0.1]:2222 ssh-ed25519 ${b64}`,
        'garbage line',
      ].join('\n'),
    );
    expect(verifyHostKey([file], 'gpu1', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], '10.0.0.5', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], 'GPU1', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], '127.0.0.1', 2222, b.blob)).toEqual({ status: 'known' });
    // OpenSSH falls back to the port-less name when `[host]:port` has no entry, and there only a match
    // counts; a `[host]:port` entry never covers port 22.
    expect(verifyHostKey([file], 'gpu1', 2222, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], 'gpu1', 2222, b.blob).status).toBe('unknown');
    expect(verifyHostKey([file], '127.0.0.1', 22, b.blob).status).toBe('unknown');
  });

  it('matches hashed entries for host and [host]:port', () => {
    const file = writeKh(
      'hashed',
      `${hashed('gpu1')} ssh-ed25519 ${a64}\n${hashed('[127.0.0.1]:2222')} ssh-ed25519 ${b64}\n`,
    );
    expect(verifyHostKey([file], 'gpu1', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], '127.0.0.1', 2222, b.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], 'gpu2', 22, a.blob).status).toBe('unknown');
    expect(verifyHostKey([file], '127.0.0.1', 22, b.blob).status).toBe('unknown');
    const changed = verifyHostKey([file], '127.0.0.1', 2222, a.blob);
    expect(changed).toMatchObject({ status: 'changed', knownFingerprint: fingerprintSha256(b.blob), file, line: 2 });
  });

  it('reads entries that ssh-keygen -H hashed', () => {
    const file = writeKh('tohash', `gpu1 ssh-ed25519 ${a64}\n[127.0.0.1]:2222 ssh-ed25519 ${b64}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('gpu1');
    expect(text.match(/^\|1\|/gm)).toHaveLength(2);
    expect(verifyHostKey([file], 'gpu1', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], '127.0.0.1', 2222, b.blob)).toEqual({ status: 'known' });
  });

  it("changed whenever the host's recorded keys all differ, whatever their type (OpenSSH's rule)", () => {
    const rsaKey = join(dir, 'kh_rsa');
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-N', '', '-f', rsaKey]);
    const rsaPub = readFileSync(`${rsaKey}.pub`, 'utf8');
    const rsaLine = `gpu1 ssh-rsa ${rsaPub.split(' ')[1]}\n`;
    const file = writeKh('types', rsaLine);
    // Only an RSA key is recorded and the server offers ed25519: a man in the middle needs only another type.
    expect(verifyHostKey([file], 'gpu1', 22, a.blob)).toEqual({
      status: 'changed',
      fingerprint: fingerprintSha256(a.blob),
      knownFingerprint: fingerprintSha256(blobOf(rsaPub)),
      file,
      line: 1,
      known: [{ keyType: 'ssh-rsa', fingerprint: fingerprintSha256(blobOf(rsaPub)), file, line: 1 }],
    });
    expect(verifyHostKey([file], 'gpu1', 22, blobOf(rsaPub))).toEqual({ status: 'known' });

    // With keys of both types recorded, the one of the presented key's type is named as the one replaced.
    const file2 = writeKh('types2', `${rsaLine}gpu1 ssh-ed25519 ${b64}\n`);
    expect(verifyHostKey([file2], 'gpu1', 22, a.blob)).toMatchObject({
      status: 'changed',
      fingerprint: fingerprintSha256(a.blob),
      knownFingerprint: fingerprintSha256(b.blob),
      file: file2,
      line: 2,
    });
    expect(verifyHostKey([file2], 'gpu1', 22, blobOf(rsaPub))).toEqual({ status: 'known' });
  });

  it('any matching entry makes the key known, across several files', () => {
    const f1 = writeKh('multi1', `gpu1 ssh-ed25519 ${b64}\n`);
    const f2 = writeKh('multi2', `gpu1 ssh-ed25519 ${a64}\n`);
    expect(verifyHostKey([f1, f2], 'gpu1', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([join(dir, 'missing'), f2], 'gpu1', 22, a.blob)).toEqual({ status: 'known' });
  });

  it('@revoked refuses the key even if also listed; @cert-authority is ignored', () => {
    const file = writeKh(
      'markers',
      `gpu1 ssh-ed25519 ${a64}\n@revoked * ssh-ed25519 ${a64}\n@cert-authority *.lab ssh-ed25519 ${b64}\n`,
    );
    expect(verifyHostKey([file], 'gpu1', 22, a.blob)).toMatchObject({ status: 'revoked', line: 2 });
    expect(verifyHostKey([file], 'n1.lab', 22, b.blob).status).toBe('unknown');
  });

  it('honours wildcards and negation in plain patterns', () => {
    const file = writeKh('patterns', `*.lab,!bad.lab ssh-ed25519 ${a64}\n`);
    expect(verifyHostKey([file], 'n1.lab', 22, a.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], 'bad.lab', 22, a.blob).status).toBe('unknown');
    expect(matchHostPatternList('n?.lab', 'n?.lab')).toBe(1);
    expect(matchHostPatternList('n12.lab', 'n?.lab')).toBe(0);
    expect(matchHostPatternList('[10.0.0.1]:2222', '[10.0.0.1]:*')).toBe(1);
  });

  it('parses line numbers and markers', () => {
    const entries = parseKnownHosts(
      `# x\n@revoked h ssh-ed25519 ${a64}\nh2 ssh-ed25519 ${b64} comment here\n@bogus h ssh-ed25519 ${a64}\n`,
      'f',
    );
    expect(entries.map((e) => [e.line, e.marker, e.hosts])).toEqual([
      [2, 'revoked', 'h'],
      [3, null, 'h2'],
    ]);
  });
});

describe('verifyHostKey: the port-less fallback and hashed names', () => {
  const a = generateEd25519();
  const b = generateEd25519();
  const a64 = a.blob.toString('base64');

  it('a port-less @revoked entry refuses the key on other ports too; only an exact match is known there', () => {
    const file = writeKh('portless-revoked', `@revoked gpu1 ssh-ed25519 ${a64}\n`);
    expect(verifyHostKey([file], 'gpu1', 2222, a.blob)).toMatchObject({ status: 'revoked', file, line: 1 });
    expect(verifyHostKey([file], 'gpu1', 2222, b.blob).status).toBe('unknown');
  });

  it('a hashed entry matches only its exact encoding (nothing may follow the hash)', () => {
    const h = hashed('[127.0.0.1]:2222');
    const file = writeKh('hashed-suffix', `${h},gpu1 ssh-ed25519 ${a64}\n${h}x ssh-ed25519 ${a64}\n`);
    expect(verifyHostKey([file], '127.0.0.1', 2222, a.blob).status).toBe('unknown');
    expect(verifyHostKey([file], 'gpu1', 22, a.blob).status).toBe('unknown');
  });
});

describe('hostKeyAlgorithmsPreferring (OpenSSH order_hostkeyalgs)', () => {
  const defaults = [
    'ssh-ed25519',
    'ecdsa-sha2-nistp256',
    'ecdsa-sha2-nistp384',
    'ecdsa-sha2-nistp521',
    'rsa-sha2-512',
    'rsa-sha2-256',
    'ssh-rsa',
  ];

  it('keeps the default order when nothing, or a key of the first type, is recorded', () => {
    expect(hostKeyAlgorithmsPreferring([])).toEqual(defaults);
    expect(hostKeyAlgorithmsPreferring(['ssh-rsa', 'ssh-ed25519'])).toEqual(defaults);
  });

  it('otherwise offers the recorded types first, in the default order rather than the file order', () => {
    expect(hostKeyAlgorithmsPreferring(['ssh-rsa'])).toEqual([
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
      'ssh-ed25519',
      'ecdsa-sha2-nistp256',
      'ecdsa-sha2-nistp384',
      'ecdsa-sha2-nistp521',
    ]);
    expect(hostKeyAlgorithmsPreferring(['ssh-rsa', 'ecdsa-sha2-nistp384']).slice(0, 4)).toEqual([
      'ecdsa-sha2-nistp384',
      'rsa-sha2-512',
      'rsa-sha2-256',
      'ssh-rsa',
    ]);
  });
});

describe('checkedPublicKeyType', () => {
  const wire = (...fields: Array<Buffer | string>) =>
    Buffer.concat(
      fields.map((f) => {
        const body = Buffer.from(f);
        const len = Buffer.alloc(4);
        len.writeUInt32BE(body.length);
        return Buffer.concat([len, body]);
      }),
    );

  it('reads the key types ssh-keygen makes, including DSA and rsa-sha2-* names for RSA keys', () => {
    for (const type of ['ed25519', 'ecdsa', 'rsa', 'dsa']) {
      const key = join(dir, `ck_${type}`);
      execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', key]);
      const [name, b64] = readFileSync(`${key}.pub`, 'utf8').trim().split(/\s+/);
      const blob = Buffer.from(b64 ?? '', 'base64');
      expect(checkedPublicKeyType(name ?? '', blob)).toBe(name);
      if (name === 'ssh-rsa') expect(checkedPublicKeyType('rsa-sha2-512', blob)).toBe('ssh-rsa');
    }
  });

  it('checks security-key and certificate blobs by their structure or type name', () => {
    const pk = randomBytes(32);
    expect(checkedPublicKeyType('sk-ssh-ed25519@openssh.com', wire('sk-ssh-ed25519@openssh.com', pk, 'ssh:'))).toBe(
      'sk-ssh-ed25519@openssh.com',
    );
    expect(checkedPublicKeyType('sk-ssh-ed25519@openssh.com', wire('sk-ssh-ed25519@openssh.com', pk))).toBeNull();
    const cert = 'ssh-ed25519-cert-v01@openssh.com';
    expect(checkedPublicKeyType(cert, wire(cert, randomBytes(32), pk))).toBe(cert);
    expect(checkedPublicKeyType(cert, wire('ssh-ed25519', pk))).toBeNull();
    expect(checkedPublicKeyType('ssh-ed25519', wire('ssh-ed25519', pk))).toBe('ssh-ed25519');
    expect(checkedPublicKeyType('ssh-ed25519', wire('ssh-ed25519', pk.subarray(1)))).toBeNull();
  });

  it('keyTypeOfBlob passes only printable ASCII (the server picks these bytes)', () => {
    expect(keyTypeOfBlob(wire('ssh-ed25519', randomBytes(32)))).toBe('ssh-ed25519');
    expect(keyTypeOfBlob(wire('ssh-\x1b[31med25519', randomBytes(32)))).toBeNull();
    expect(keyTypeOfBlob(wire('', randomBytes(32)))).toBeNull();
    expect(keyTypeOfBlob(Buffer.from([0, 0, 0]))).toBeNull();
  });
});

describe('appendKnownHost', () => {
  it('creates ~/.ssh 0700 and known_hosts 0600, appends without touching existing lines; ssh-keygen -F finds it', () => {
    const a = generateEd25519();
    const b = generateEd25519();
    const sshDir = join(dir, 'home', '.ssh');
    const file = join(sshDir, 'known_hosts');
    appendKnownHost(file, '127.0.0.1', 2222, 'ssh-ed25519', a.blob);
    expect(statSync(sshDir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`[127.0.0.1]:2222 ssh-ed25519 ${a.blob.toString('base64')}\n`);

    writeFileSync(file, `${readFileSync(file, 'utf8')}# no trailing newline`, { mode: 0o644 });
    execFileSync('chmod', ['644', file]);
    appendKnownHost(file, 'gpu1', 22, 'ssh-ed25519', b.blob);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')).toEqual([
      `[127.0.0.1]:2222 ssh-ed25519 ${a.blob.toString('base64')}`,
      '# no trailing newline',
      `gpu1 ssh-ed25519 ${b.blob.toString('base64')}`,
      '',
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o644); // existing mode kept
    expect(verifyHostKey([file], 'gpu1', 22, b.blob)).toEqual({ status: 'known' });
    expect(verifyHostKey([file], '127.0.0.1', 2222, a.blob)).toEqual({ status: 'known' });
    expect(execFileSync('ssh-keygen', ['-F', '[127.0.0.1]:2222', '-f', file], { encoding: 'utf8' })).toContain(
      a.blob.toString('base64'),
    );
    expect(execFileSync('ssh-keygen', ['-F', 'gpu1', '-f', file], { encoding: 'utf8' })).toContain(
      b.blob.toString('base64'),
    );
  });

  it('refuses host names that would corrupt the file', () => {
    const a = generateEd25519();
    expect(() => appendKnownHost(join(dir, 'x'), 'evil host', 22, 'ssh-ed25519', a.blob)).toThrow();
    expect(() => appendKnownHost(join(dir, 'x'), 'a,b', 22, 'ssh-ed25519', a.blob)).toThrow();
  });
});
