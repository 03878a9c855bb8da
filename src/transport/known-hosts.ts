/**
 * OpenSSH known_hosts: lookup and append.
 *
 * Supported line forms (see sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"):
 *   host,host2 keytype base64 [comment]          plain patterns (`*`, `?`, `!` negation allowed)
 *   [host]:2222 keytype base64                   non-22 ports
 *   |1|base64salt|base64hash keytype base64      hashed (HMAC-SHA1 keyed with the salt over the host string)
 *   @revoked <patterns> keytype base64           a revoked key: presenting it is refused
 *   @cert-authority <patterns> ...               host CAs: ignored (certificates are not supported)
 * Blank lines and `#` comments are skipped; malformed lines are skipped (OpenSSH does the same).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join, basename } from 'node:path';

export interface KnownHostEntry {
  file: string;
  /** 1-based line number. */
  line: number;
  marker: 'revoked' | 'cert-authority' | null;
  /** The raw host field (comma-separated patterns, or a `|1|salt|hash` hashed entry). */
  hosts: string;
  keyType: string;
  keyBlob: Buffer;
}

export type HostKeyVerdict =
  | { status: 'known' }
  | { status: 'unknown'; fingerprint: string }
  | {
      status: 'changed';
      fingerprint: string;
      knownFingerprint: string;
      file: string;
      line: number;
      /** True when the presented key itself is listed as `@revoked`. */
      revoked?: boolean;
    };

/** `SHA256:<base64 without padding>` of the public key blob, as `ssh-keygen -lf` prints it. */
export function fingerprintSha256(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, …), or null if malformed. */
export function keyTypeOfBlob(keyBlob: Buffer): string | null {
  if (keyBlob.length < 4) return null;
  const len = keyBlob.readUInt32BE(0);
  if (len === 0 || len > 64 || 4 + len > keyBlob.length) return null;
  return keyBlob.subarray(4, 4 + len).toString('latin1');
}

/** The string OpenSSH looks up: `host` for port 22, `[host]:port` otherwise (lower-cased). */
export function knownHostsName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

/** Parses one known_hosts file's text. Malformed lines are skipped. */
export function parseKnownHosts(text: string, file = '<memory>'): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? '').replace(/\r$/, '').trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const fields = raw.split(/[ \t]+/);
    let marker: KnownHostEntry['marker'] = null;
    if (fields[0]?.startsWith('@')) {
      const m = fields.shift();
      if (m === '@revoked') marker = 'revoked';
      else if (m === '@cert-authority') marker = 'cert-authority';
      else continue; // unknown marker: OpenSSH rejects the line
    }
    const [hosts, keyType, b64] = fields;
    if (hosts === undefined || keyType === undefined || b64 === undefined) continue;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) continue;
    const keyBlob = Buffer.from(b64, 'base64');
    if (keyBlob.length === 0) continue;
    entries.push({ file, line: i + 1, marker, hosts, keyType, keyBlob });
  }
  return entries;
}

/** OpenSSH's match_pattern: `*` any run, `?` one character, everything else literal. */
export function matchPattern(text: string, pattern: string): boolean {
  // Iterative wildcard match with backtracking on the last `*`.
  let t = 0;
  let p = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const pc = pattern[p];
    if (pc === '*') {
      starP = p++;
      starT = t;
    } else if (pc !== undefined && (pc === '?' || pc === text[t])) {
      p++;
      t++;
    } else if (starP !== -1) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * OpenSSH's match_hostname over a comma-separated pattern list: 1 if a positive pattern matches and no
 * negated one does, -1 if a negated pattern matches, 0 otherwise. Case-insensitive.
 */
export function matchHostPatternList(name: string, patternList: string): -1 | 0 | 1 {
  const host = name.toLowerCase();
  let got: 0 | 1 = 0;
  for (const raw of patternList.split(',')) {
    if (raw === '') continue;
    const negated = raw.startsWith('!');
    const pattern = (negated ? raw.slice(1) : raw).toLowerCase();
    if (matchPattern(host, pattern)) {
      if (negated) return -1;
      got = 1;
    }
  }
  return got;
}

function hashedMatches(hosts: string, name: string): boolean {
  // |1|salt|hash
  const parts = hosts.split('|');
  if (parts.length !== 4 || parts[0] !== '' || parts[1] !== '1') return false;
  const salt = Buffer.from(parts[2] ?? '', 'base64');
  const want = Buffer.from(parts[3] ?? '', 'base64');
  if (salt.length === 0 || want.length !== 20) return false;
  const got = createHmac('sha1', salt).update(name).digest();
  return timingSafeEqual(got, want);
}

/** Whether an entry's host field names `host:port`. */
export function entryMatchesHost(entry: Pick<KnownHostEntry, 'hosts'>, host: string, port: number): boolean {
  const name = knownHostsName(host, port);
  if (entry.hosts.startsWith('|')) return hashedMatches(entry.hosts, name);
  return matchHostPatternList(name, entry.hosts) === 1;
}

/** Hashes a host name the way `ssh-keygen -H` does (used by tests and for HashKnownHosts). */
export function hashKnownHostName(host: string, port: number, salt: Buffer = randomBytes(20)): string {
  const name = knownHostsName(host, port);
  const hash = createHmac('sha1', salt).update(name).digest('base64');
  return `|1|${salt.toString('base64')}|${hash}`;
}

function readIfExists(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/** All entries (any marker) in `files` that name `host:port`. Missing files are skipped. */
export function findHostEntries(files: readonly string[], host: string, port: number): KnownHostEntry[] {
  const found: KnownHostEntry[] = [];
  for (const file of files) {
    const text = readIfExists(file);
    if (text === null) continue;
    for (const entry of parseKnownHosts(text, file)) {
      if (entry.marker === 'cert-authority') continue;
      if (entryMatchesHost(entry, host, port)) found.push(entry);
    }
  }
  return found;
}

/** Key types already recorded for the host (so the client can prefer them during key exchange). */
export function knownKeyTypes(files: readonly string[], host: string, port: number): string[] {
  const types: string[] = [];
  for (const e of findHostEntries(files, host, port)) {
    if (e.marker === null && !types.includes(e.keyType)) types.push(e.keyType);
  }
  return types;
}

/**
 * OpenSSH's rule: any entry with this exact key → known; a revoked entry with this key → changed (refused);
 * entries for the host with the same key type but a different key → changed; otherwise unknown.
 */
export function verifyHostKey(
  files: readonly string[],
  host: string,
  port: number,
  keyType: string,
  keyBlob: Buffer,
): HostKeyVerdict {
  const fingerprint = fingerprintSha256(keyBlob);
  const entries = findHostEntries(files, host, port);
  const revoked = entries.find((e) => e.marker === 'revoked' && e.keyBlob.equals(keyBlob));
  if (revoked) {
    return { status: 'changed', fingerprint, knownFingerprint: fingerprint, file: revoked.file, line: revoked.line, revoked: true };
  }
  const plain = entries.filter((e) => e.marker === null);
  if (plain.some((e) => e.keyBlob.equals(keyBlob))) return { status: 'known' };
  const sameType = plain.find((e) => e.keyType === keyType || keyTypeOfBlob(e.keyBlob) === keyType);
  if (sameType) {
    return {
      status: 'changed',
      fingerprint,
      knownFingerprint: fingerprintSha256(sameType.keyBlob),
      file: sameType.file,
      line: sameType.line,
    };
  }
  return { status: 'unknown', fingerprint };
}

/**
 * Appends `host keytype base64` (or `[host]:port …`) to `file` atomically: the new content is written to a
 * temporary file in the same directory and renamed over the original. The file keeps its mode (0600 when
 * new); a missing parent directory is created 0700.
 */
export function appendKnownHost(knownHostsFile: string, host: string, port: number, keyType: string, keyBlob: Buffer): void {
  let file = knownHostsFile;
  try {
    file = realpathSync(knownHostsFile); // a symlinked known_hosts stays a symlink
  } catch {
    /* does not exist yet */
  }
  if (/[\s,]/.test(host) || host === '') throw new Error(`refusing to record a host name with spaces or commas: ${JSON.stringify(host)}`);
  if (!/^[A-Za-z0-9@._+-]+$/.test(keyType)) throw new Error(`invalid key type ${JSON.stringify(keyType)}`);
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readIfExists(file);
  let mode = 0o600;
  if (existing !== null) mode = statSync(file).mode & 0o7777;
  const line = `${knownHostsName(host, port)} ${keyType} ${keyBlob.toString('base64')}\n`;
  const prefix = existing === null || existing === '' || existing.endsWith('\n') ? existing ?? '' : `${existing}\n`;
  const tmp = join(dir, `.${basename(file)}.l20tmp.${randomBytes(6).toString('hex')}`);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, 'wx', mode);
    writeSync(fd, prefix + line);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    chmodSync(tmp, mode); // openSync's mode is filtered by the umask
    renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
    throw err;
  }
}
