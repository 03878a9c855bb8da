/**
 * OpenSSH known_hosts: lookup, the host key verdict, and append. The rules follow OpenSSH 9.x
 * (hostfile.c hostkeys_foreach_file / check_hostkeys_by_key_or_type, sshconnect.c check_host_key) and are
 * checked against the real `ssh` by test/sshd/known-hosts-oracle.test.ts.
 *
 * Line forms (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"):
 *   host,host2 keytype base64 [comment]          plain patterns (`*`, `?`, `!` negation allowed)
 *   [host]:2222 keytype base64                   non-22 ports
 *   |1|base64salt|base64hash keytype base64      hashed (HMAC-SHA1 keyed with the salt over the host string)
 *   @revoked <patterns> keytype base64           a revoked key: presenting it is refused
 *   @cert-authority <patterns> ...               host CAs: never match a plain key; kept for
 *                                                hostCertificateAuthorities (OpenSSH verifies certificates)
 * Blank lines and `#` comments are skipped. A line OpenSSH would not read (unknown marker or key type, bad
 * base64, a key that does not parse or whose blob names another type, missing fields) is skipped too.
 *
 * The verdict for a presented key, over every file's entries for the host:
 *   revoked  an @revoked entry holds this key (whatever else the files say);
 *   known    a plain entry holds this key;
 *   changed  plain entries exist for the host but none holds this key, whatever their key types: a server
 *            that now offers ed25519 where RSA was recorded has changed (the client offers the recorded types
 *            first, see HostKeyVerifier.algorithms, so a server that still has the old key is not affected);
 *   unknown  no plain entry names the host.
 * For a non-22 port, `[host]:port` is looked up; only when that finds nothing is the port-less `host`
 * tried, and there only an exact key match counts (a different key there leaves the host unknown). With a
 * HostKeyAlias the alias is the only name looked up and recorded (no port added, no fallback).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join, basename } from 'node:path';
import { checkedPublicKeyType, keyTypeOfBlob } from './ssh-public-key.js';
import { matchPattern } from './ssh-pattern.js';
import { FileRefusedError, readFileSafely, readFileSafelySync } from '../util/read-file-safely.js';

export interface KnownHostEntry {
  file: string;
  /** 1-based line number. */
  line: number;
  marker: 'revoked' | 'cert-authority' | null;
  /** The raw host field (comma-separated patterns, or a `|1|salt|hash` hashed entry). */
  hosts: string;
  /** The key's type as its blob names it (`ssh-rsa` for a line that says `rsa-sha2-512`). */
  keyType: string;
  keyBlob: Buffer;
}

/** A recorded key, as the refusal names it. */
export interface KnownKeyRef {
  keyType: string;
  fingerprint: string;
  file: string;
  line: number;
}

export type HostKeyVerdict =
  | { status: 'known' }
  | { status: 'unknown'; fingerprint: string }
  | {
      status: 'changed';
      fingerprint: string;
      /** The recorded key most likely replaced: the first of the presented key's type, else the first. */
      knownFingerprint: string;
      file: string;
      line: number;
      /** Every plain entry recorded for the host, in file order. */
      known: KnownKeyRef[];
    }
  | { status: 'revoked'; fingerprint: string; file: string; line: number };

/** `SHA256:<base64 without padding>` of the public key blob, as `ssh-keygen -lf` prints it. */
export function fingerprintSha256(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The string OpenSSH looks up: `host` for port 22, `[host]:port` otherwise (lower-cased). */
export function knownHostsName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

/** The name a host's keys are looked up and recorded under: its HostKeyAlias (lower-cased, as ssh does) if set. */
export function hostKeyName(host: string, port: number, alias?: string): string {
  return alias !== undefined ? alias.toLowerCase() : knownHostsName(host, port);
}

/** Base64 as OpenSSH's b64_pton reads it: padded to whole groups, no stray bits; null otherwise. */
export function strictBase64(text: string): Buffer | null {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

/** Parses one known_hosts file's text. Lines OpenSSH would not read are skipped. */
export function parseKnownHosts(text: string, file = '<memory>'): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // OpenSSH reads a trailing CR as whitespace (b64_pton skips it).
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
    const [hosts, lineType, b64] = fields;
    if (hosts === undefined || lineType === undefined || b64 === undefined) continue;
    const keyBlob = strictBase64(b64);
    if (keyBlob === null) continue;
    const keyType = checkedPublicKeyType(lineType, keyBlob);
    if (keyType === null) continue;
    entries.push({ file, line: i + 1, marker, hosts, keyType, keyBlob });
  }
  return entries;
}

/** match_pattern_list copies each sub-pattern into a 1024-byte buffer and gives up on a longer one. */
const MAX_SUBPATTERN_LENGTH = 1023;

/**
 * OpenSSH's match_hostname over a comma-separated pattern list: 1 if a positive pattern matches and no
 * negated one does, -1 if a negated pattern matches, 0 otherwise. Case-insensitive.
 */
export function matchHostPatternList(name: string, patternList: string): -1 | 0 | 1 {
  const host = name.toLowerCase();
  let got: 0 | 1 = 0;
  for (const raw of patternList.split(',')) {
    const negated = raw.startsWith('!');
    const pattern = (negated ? raw.slice(1) : raw).toLowerCase();
    if (pattern.length >= MAX_SUBPATTERN_LENGTH) return 0;
    if (matchPattern(host, pattern)) {
      if (negated) return -1;
      got = 1;
    }
  }
  return got;
}

const HASH_MAGIC = '|1|';
const HASH_SALT_BYTES = 20;

/** `|1|salt|hash` for `name` with the given salt, as OpenSSH's host_hash encodes it. */
function hashedName(name: string, salt: Buffer): string {
  return `${HASH_MAGIC}${salt.toString('base64')}|${createHmac('sha1', salt).update(name).digest('base64')}`;
}

/**
 * OpenSSH re-hashes the name with the entry's salt and compares the encoded strings, so anything after
 * the hash (another host, a comma) makes the entry not match; a salt that is not 20 bytes of base64 makes
 * OpenSSH skip the line.
 */
function hashedMatches(hosts: string, name: string): boolean {
  if (!hosts.startsWith(HASH_MAGIC)) return false;
  const end = hosts.indexOf('|', HASH_MAGIC.length);
  if (end === -1) return false;
  const salt = strictBase64(hosts.slice(HASH_MAGIC.length, end));
  if (salt === null || salt.length !== HASH_SALT_BYTES) return false;
  return hashedName(name, salt) === hosts;
}

/** Whether an entry's host field names exactly `name` (a knownHostsName). */
function entryNames(entry: Pick<KnownHostEntry, 'hosts'>, name: string): boolean {
  if (entry.hosts.startsWith('|')) return hashedMatches(entry.hosts, name);
  return matchHostPatternList(name, entry.hosts) === 1;
}

/** Whether an entry's host field names `host:port` (without the port-less fallback). */
export function entryMatchesHost(entry: Pick<KnownHostEntry, 'hosts'>, host: string, port: number): boolean {
  return entryNames(entry, knownHostsName(host, port));
}

/** Hashes a host name the way `ssh-keygen -H` does (used by tests and for HashKnownHosts). */
export function hashKnownHostName(host: string, port: number, salt: Buffer = randomBytes(HASH_SALT_BYTES)): string {
  return hashedName(knownHostsName(host, port), salt);
}

/** A known_hosts file's text, or null when it does not exist; a FIFO, device or directory is refused by name. */
function readIfExists(file: string): string | null {
  try {
    return readFileSafelySync(file, 'known_hosts').toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw err;
  }
}

/**
 * Checked before connecting, asynchronously: the first of `files` that exists but cannot be read (a
 * directory, a FIFO, too big, no permission), as "PATH is a directory, not a file…"; undefined when all are
 * readable or absent. The look-ups during the handshake are synchronous and rely on this having passed.
 */
export async function unreadableKnownHostsFile(files: readonly string[]): Promise<string | undefined> {
  for (const file of files) {
    try {
      await readFileSafely(file, 'known_hosts');
    } catch (err) {
      if (err instanceof FileRefusedError) return err.message;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      return `${file}: ${(err as Error).message}`;
    }
  }
  return undefined;
}

/** All entries (any marker) in `files`, in order, that name `name`. Missing files are skipped. */
function findEntriesNamed(files: readonly string[], name: string): KnownHostEntry[] {
  const found: KnownHostEntry[] = [];
  for (const file of files) {
    const text = readIfExists(file);
    if (text === null) continue;
    for (const entry of parseKnownHosts(text, file)) {
      if (entryNames(entry, name)) found.push(entry);
    }
  }
  return found;
}

/** All entries (any marker) in `files` that name `host:port` (no port-less fallback). */
export function findHostEntries(files: readonly string[], host: string, port: number): KnownHostEntry[] {
  return findEntriesNamed(files, knownHostsName(host, port));
}

/**
 * Key types with a plain entry for `host:port` (or the HostKeyAlias), in file order, so the client can offer
 * them first. Like OpenSSH's order_hostkeyalgs this looks only at that name, not the port-less fallback.
 */
export function knownKeyTypes(files: readonly string[], host: string, port: number, alias?: string): string[] {
  const types: string[] = [];
  for (const e of findEntriesNamed(files, hostKeyName(host, port, alias))) {
    if (e.marker === null && !types.includes(e.keyType)) types.push(e.keyType);
  }
  return types;
}

/**
 * SHA256 fingerprints of the plain keys recorded for `host:port` (or the HostKeyAlias), sorted: who the
 * host is before any connection (the crash journal finds an apply of the same hosts by them).
 */
export function knownFingerprints(files: readonly string[], host: string, port: number, alias?: string): string[] {
  const entries = findEntriesNamed(files, hostKeyName(host, port, alias)).filter((e) => e.marker === null);
  return [...new Set(entries.map((e) => fingerprintSha256(e.keyBlob)))].sort();
}

/**
 * The names ssh looks a host up under: `[host]:port` (or the HostKeyAlias), then, for a non-22 port without
 * an alias, the port-less `host` (sshconnect.c "checking without port identifier").
 */
function lookupNames(host: string, port: number, alias?: string): string[] {
  const first = hostKeyName(host, port, alias);
  return port === 22 || alias !== undefined ? [first] : [first, knownHostsName(host, 22)];
}

/** A `@cert-authority` line naming a host. */
export interface HostCertificateAuthority {
  keyType: string;
  fingerprint: string;
  file: string;
  line: number;
  /**
   * The `@revoked` line holding the CA's key under the same name, if any: OpenSSH refuses every certificate it
   * signed there (hostfile.c check_key_not_revoked).
   */
  revokedAt?: { file: string; line: number };
}

/**
 * The `@cert-authority` entries that could vouch for a certificate presented by `host:port`, in lookup order
 * (see lookupNames: ssh retries without the port when no CA under `[host]:port` signed it), each with the
 * `@revoked` entry that cancels it under the same name. Plain-key verdicts (verifyHostKey) never look at them.
 */
export function hostCertificateAuthorities(
  files: readonly string[],
  host: string,
  port: number,
  alias?: string,
): HostCertificateAuthority[] {
  const found: HostCertificateAuthority[] = [];
  for (const name of lookupNames(host, port, alias)) {
    const entries = findEntriesNamed(files, name);
    for (const ca of entries.filter((e) => e.marker === 'cert-authority')) {
      const revoked = entries.find((e) => e.marker === 'revoked' && e.keyBlob.equals(ca.keyBlob));
      found.push({
        keyType: ca.keyType,
        fingerprint: fingerprintSha256(ca.keyBlob),
        file: ca.file,
        line: ca.line,
        ...(revoked ? { revokedAt: { file: revoked.file, line: revoked.line } } : {}),
      });
    }
  }
  return found;
}

/** Whether any plain (unmarked) key is recorded for the host under the names ssh looks it up by. */
export function hasPlainHostKey(files: readonly string[], host: string, port: number, alias?: string): boolean {
  return lookupNames(host, port, alias).some((name) => findEntriesNamed(files, name).some((e) => e.marker === null));
}

/** check_hostkeys_by_key_or_type for a plain key over one name's entries. */
function verdictOver(entries: readonly KnownHostEntry[], keyBlob: Buffer): HostKeyVerdict {
  const fingerprint = fingerprintSha256(keyBlob);
  const revoked = entries.find((e) => e.marker === 'revoked' && e.keyBlob.equals(keyBlob));
  if (revoked) return { status: 'revoked', fingerprint, file: revoked.file, line: revoked.line };
  const plain = entries.filter((e) => e.marker === null);
  if (plain.some((e) => e.keyBlob.equals(keyBlob))) return { status: 'known' };
  const first = plain[0];
  if (first === undefined) return { status: 'unknown', fingerprint };
  const presentedType = keyTypeOfBlob(keyBlob);
  const likely = plain.find((e) => e.keyType === presentedType) ?? first;
  return {
    status: 'changed',
    fingerprint,
    knownFingerprint: fingerprintSha256(likely.keyBlob),
    file: likely.file,
    line: likely.line,
    known: plain.map((e) => ({
      keyType: e.keyType,
      fingerprint: fingerprintSha256(e.keyBlob),
      file: e.file,
      line: e.line,
    })),
  };
}

/**
 * The verdict on the key `host:port` presented (see the top of this file). For a non-22 port with nothing
 * recorded under `[host]:port`, a port-less `host` entry holding this exact key makes it known, as OpenSSH's
 * "checking without port identifier" does; a port-less @revoked entry for it is refused (OpenSSH refuses it
 * too unless StrictHostKeyChecking is off or accept-new).
 */
export function verifyHostKey(
  files: readonly string[],
  host: string,
  port: number,
  keyBlob: Buffer,
  alias?: string,
): HostKeyVerdict {
  const verdict = verdictOver(findEntriesNamed(files, hostKeyName(host, port, alias)), keyBlob);
  if (verdict.status !== 'unknown' || port === 22 || alias !== undefined) return verdict;
  const portless = verdictOver(findEntriesNamed(files, knownHostsName(host, 22)), keyBlob);
  return portless.status === 'known' || portless.status === 'revoked' ? portless : verdict;
}

/**
 * Appends `host keytype base64` (or `[host]:port …`, or `alias …` for a HostKeyAlias) to `file` atomically:
 * the new content is written to a temporary file in the same directory and renamed over the original. The
 * file keeps its mode (0600 when new); a missing parent directory is created 0700.
 */
export function appendKnownHost(
  knownHostsFile: string,
  host: string,
  port: number,
  keyType: string,
  keyBlob: Buffer,
  alias?: string,
): void {
  let file = knownHostsFile;
  try {
    file = realpathSync(knownHostsFile); // a symlinked known_hosts stays a symlink
  } catch {
    /* does not exist yet */
  }
  const name = hostKeyName(host, port, alias);
  if (/[\s,]/.test(name) || host === '' || name === '') {
    throw new Error(`refusing to record a host name with spaces or commas: ${JSON.stringify(name)}`);
  }
  if (!/^[A-Za-z0-9@._+-]+$/.test(keyType)) throw new Error(`invalid key type ${JSON.stringify(keyType)}`);
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const existing = readIfExists(file);
  let mode = 0o600;
  if (existing !== null) mode = statSync(file).mode & 0o7777;
  const line = `${name} ${keyType} ${keyBlob.toString('base64')}\n`;
  const prefix = existing === null || existing === '' || existing.endsWith('\n') ? (existing ?? '') : `${existing}\n`;
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
