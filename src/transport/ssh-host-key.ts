/**
 * Host key verification for SshHost, run from ssh2's async hostVerifier before any credentials are sent.
 * A key in a known_hosts file (or matching the inventory's pinned fingerprint) is accepted; an unknown key
 * is put to `onUnknownHostKey` (refused without one) and recorded when trusted. A changed key — the host has
 * known_hosts entries and none holds the presented key, whatever their key types, as OpenSSH decides — or
 * an @revoked one is refused with a HostKeyError naming the presented and the recorded keys, and is never
 * put to `onUnknownHostKey`: that is what a man in the middle looks like. It also picks the host key
 * algorithms to offer, preferring the types already recorded for the host as OpenSSH does, so a server with
 * several host keys presents the one we can check. The verifier lives as long as its SshHost, so a key the
 * operator trusted is not asked about again on reconnect even when it could not be written to known_hosts.
 *
 * ssh2 can neither ask for nor check host certificates (mscdex/ssh2#551), so a host that known_hosts vouches
 * for only through `@cert-authority` presents a plain key we cannot tie to it: it stays unknown, and the
 * prompt and the refusal say that the OpenSSH transport would verify it (or that the CA is @revoked). The
 * OpenSSH transport checks certificates itself and comes here only once ssh refused the host, so there the
 * same CA line means the host presented no certificate that CA signed for it.
 */
import type { SshHostOptions, UnknownHostKeyInfo } from './ssh-options.js';
import {
  appendKnownHost,
  fingerprintSha256,
  hostCertificateAuthorities,
  hostKeyName,
  knownFingerprints,
  knownKeyTypes,
  verifyHostKey,
} from './known-hosts.js';
import { quoteWord } from './quote.js';
import { keyTypeOfBlob } from './ssh-public-key.js';
import { HostKeyError } from './types.js';

/** The SshHost options verification reads; read at check time, as SshHost did. */
export type HostKeyOptions = Pick<
  SshHostOptions,
  'host' | 'knownHostsFiles' | 'hostKeyAlias' | 'expectedFingerprint' | 'onUnknownHostKey' | 'debug'
>;

/** ssh2's async hostVerifier signature. */
export type HostVerifier = (key: Buffer, verify: (valid: boolean) => void) => void;

/** Offered in OpenSSH's default HostKeyAlgorithms order (certificates aside: ssh2 has none). */
const DEFAULT_HOST_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'rsa-sha2-512',
  'rsa-sha2-256',
  'ssh-rsa',
];

/** The key type a host key algorithm's keys have. */
function keyTypeOfAlgorithm(algorithm: string): string {
  return algorithm.startsWith('rsa-sha2-') ? 'ssh-rsa' : algorithm;
}

/**
 * OpenSSH's order_hostkeyalgs: when a key of the first algorithm's type is recorded for the host, the list
 * is offered as it is; otherwise the algorithms whose key types are recorded come first, each group keeping
 * the default order. (The server takes the first algorithm of ours that it has a key for.)
 */
export function hostKeyAlgorithmsPreferring(knownTypes: readonly string[]): string[] {
  const known = (algorithm: string) => knownTypes.includes(keyTypeOfAlgorithm(algorithm));
  const [best] = DEFAULT_HOST_KEY_ALGORITHMS;
  if (best !== undefined && known(best)) return [...DEFAULT_HOST_KEY_ALGORITHMS];
  return [...DEFAULT_HOST_KEY_ALGORITHMS.filter(known), ...DEFAULT_HOST_KEY_ALGORITHMS.filter((a) => !known(a))];
}

/** Which transport verifies: OpenSSH checks host certificates itself before asking us; ssh2 cannot. */
export type HostKeyTransport = 'ssh2' | 'openssh';

/**
 * What known_hosts' `@cert-authority` lines say about an unknown host, as a sentence for the prompt and the
 * refusal; undefined when none names it.
 */
export function certificateAuthorityNote(
  knownHostsFiles: readonly string[],
  host: string,
  port: number,
  alias?: string,
  transport: HostKeyTransport = 'ssh2',
): string | undefined {
  const cas = hostCertificateAuthorities(knownHostsFiles, host, port, alias);
  const where = (c: { file: string; line: number }) => `${c.file}:${c.line}`;
  const active = cas.filter((c) => c.revokedAt === undefined);
  if (active.length > 0) {
    const named = active.map((c) => `${c.keyType} ${c.fingerprint} (${where(c)})`).join(', ');
    if (transport === 'openssh') {
      return (
        `known_hosts trusts a certificate authority for the host, @cert-authority ${named}, but OpenSSH ` +
        'found no host certificate signed by it for this name (another CA, another principal, or expired)'
      );
    }
    return (
      `The host is vouched for by a certificate authority, @cert-authority ${named}, which the built-in ` +
      'ssh2 transport cannot check; with `transport: openssh` (or auto) for this host, OpenSSH verifies its ' +
      'host certificate against that CA'
    );
  }
  const revoked = cas[0];
  if (revoked?.revokedAt === undefined) return undefined;
  return (
    `known_hosts names a certificate authority for the host (${where(revoked)}), but ` +
    `${where(revoked.revokedAt)} marks that CA key @revoked: certificates it signed are refused`
  );
}

export class HostKeyVerifier {
  /** Keys the operator trusted in this session (in case recording them failed). */
  private readonly trustedKeys: Buffer[] = [];

  constructor(
    private readonly name: string,
    private readonly address: string,
    private readonly port: number,
    private readonly opts: HostKeyOptions,
    private readonly transport: HostKeyTransport = 'ssh2',
  ) {}

  /**
   * Host key algorithms to offer, preferring the key types already recorded for this host as OpenSSH does,
   * so a server with several host keys presents the one we know (and a server offering none of them is
   * refused as changed).
   */
  algorithms(): string[] {
    const { knownHostsFiles, host, hostKeyAlias } = this.opts;
    return hostKeyAlgorithmsPreferring(knownKeyTypes(knownHostsFiles, host, this.port, hostKeyAlias));
  }

  /**
   * An ssh2 hostVerifier around `check`. `timer` is paused while the key is checked (the operator may take
   * a while to answer) and resumed once it is accepted; `onRefused` gets the reason before ssh2 is told.
   */
  hostVerifier(timer: { pause(): void; resume(): void }, onRefused: (err: unknown) => void): HostVerifier {
    return (key, verify) => {
      timer.pause();
      this.check(key).then(
        (ok) => {
          timer.resume();
          verify(ok);
        },
        (err: unknown) => {
          onRefused(err);
          verify(false);
        },
      );
    };
  }

  /** The fingerprints this host is known by without connecting: the inventory's pin, known_hosts, keys trusted now. */
  knownFingerprints(): string[] {
    const { knownHostsFiles, host, hostKeyAlias, expectedFingerprint } = this.opts;
    const pinned = expectedFingerprint?.trim().replace(/=+$/, '');
    const all = [
      ...(pinned ? [pinned] : []),
      ...knownFingerprints(knownHostsFiles, host, this.port, hostKeyAlias),
      ...this.trustedKeys.map((k) => fingerprintSha256(k)),
    ];
    return [...new Set(all)].sort();
  }

  /** Resolves true to accept the key; throws HostKeyError to refuse. */
  async check(key: Buffer): Promise<boolean> {
    const { host } = this.opts;
    const port = this.port;
    const keyType = keyTypeOfBlob(key) ?? 'unknown';
    const fingerprint = fingerprintSha256(key);
    if (this.trustedKeys.some((k) => k.equals(key))) return true;
    const pinned = this.opts.expectedFingerprint?.trim();
    if (pinned && pinned.replace(/=+$/, '') !== fingerprint) {
      throw new HostKeyError(
        `${this.name}: the host key of ${this.address} does not match the inventory: the server presented ${keyType} ${fingerprint}, ` +
          `the inventory pins ${pinned}. Someone could be intercepting the connection, or the server was reinstalled; refusing to connect.`,
        this.name,
        'changed',
        fingerprint,
        pinned,
      );
    }
    const alias = this.opts.hostKeyAlias;
    const verdict = verifyHostKey(this.opts.knownHostsFiles, host, port, key, alias);
    if (verdict.status === 'known') return true;
    const presented = `the server presented ${keyType} ${fingerprint}`;
    const interception = 'Someone could be intercepting the connection';
    if (verdict.status === 'revoked') {
      throw new HostKeyError(
        `${this.name}: the host key of ${this.address} is REVOKED: ${presented}, which ` +
          `${verdict.file}:${verdict.line} marks @revoked. ${interception} with a stolen key; refusing to connect.`,
        this.name,
        'revoked',
        fingerprint,
      );
    }
    if (verdict.status === 'changed') {
      const recorded = verdict.known.map((k) => `${k.keyType} ${k.fingerprint} (${k.file}:${k.line})`).join(', ');
      throw new HostKeyError(
        `${this.name}: the host key of ${this.address} has CHANGED: ${presented}, ` +
          `but known_hosts records ${recorded}. ${interception}, or the server was reinstalled; refusing to ` +
          'connect. If the change is expected, remove the old keys ' +
          `(ssh-keygen -R ${quoteWord(hostKeyName(host, port, alias))}) and connect again.`,
        this.name,
        'changed',
        fingerprint,
        verdict.knownFingerprint,
      );
    }
    if (pinned) return true; // matches the pinned fingerprint; known_hosts has nothing for this host
    const ca = certificateAuthorityNote(this.opts.knownHostsFiles, host, port, alias, this.transport);
    const refuse = (why: string) =>
      new HostKeyError(
        `${this.name}: the host key of ${this.address} (${keyType} ${fingerprint}) is not known: ${why}` +
          (ca === undefined ? '' : `. ${ca}`),
        this.name,
        'unknown',
        fingerprint,
      );
    const missing = ca === undefined ? 'no known_hosts entry' : 'no plain key in known_hosts';
    if (!this.opts.onUnknownHostKey) throw refuse(`${missing} and no one to ask; refusing`);
    const file = this.opts.knownHostsFiles[0];
    const asked: UnknownHostKeyInfo = {
      host,
      port,
      fingerprint,
      keyType,
      ...(file !== undefined ? { recordIn: file } : {}),
      ...(ca !== undefined ? { certificateAuthority: ca } : {}),
    };
    const trusted = await this.opts.onUnknownHostKey(asked);
    if (!trusted) throw refuse('not trusted');
    this.trustedKeys.push(Buffer.from(key));
    if (file !== undefined) {
      try {
        appendKnownHost(file, host, port, keyType, key, alias);
      } catch (err) {
        this.opts.debug?.(`could not record the host key in ${file}: ${(err as Error).message}`);
      }
    }
    return true;
  }
}
