/**
 * SSH public key blobs (RFC 4253 §6.6 wire format) checked the way OpenSSH's sshkey_read() checks a
 * known_hosts line's key, so a line OpenSSH would skip as malformed is skipped here too. This matters for
 * the host key verdict: OpenSSH calls a host whose valid entries all hold other keys "changed", so a line
 * we wrongly took for a key would turn an unknown host into a refused one, and a line we wrongly dropped
 * would let a man in the middle be offered for trust.
 *
 * Checked per type (OpenSSH 9.x, sshkey.c and ssh-*.c deserialize_public):
 *   ssh-ed25519                 string pk of exactly 32 bytes
 *   ssh-rsa                     mpint e, mpint n; n at least 1024 bits (SSH_RSA_MINIMUM_MODULUS_SIZE)
 *   ecdsa-sha2-nistpN           string curve ("nistpN", matching the type), string point: uncompressed, on
 *                               the curve
 *   ssh-dss                     mpint p, q, g, y
 *   sk-ssh-ed25519@openssh.com  as ssh-ed25519, then string application
 *   sk-ecdsa-sha2-nistp256@…    as ecdsa-sha2-nistp256, then string application
 * and no bytes may follow. mpints must be non-negative and at most 16384 bits (SSHBUF_MAX_BIGNUM).
 * Certificates (`…-cert-v01@openssh.com`) are only checked for their type name: we never present or
 * accept certificates, so such a line can only ever be a non-matching key, and counting a malformed one
 * errs towards refusing.
 */
import { createPublicKey } from 'node:crypto';

const MAX_BIGNUM_BYTES = 16384 / 8;
const RSA_MIN_MODULUS_BITS = 1024;
const ED25519_PUBLIC_KEY_BYTES = 32;

const EC_CURVES: Readonly<Record<string, { jwk: string; fieldBytes: number }>> = {
  nistp256: { jwk: 'P-256', fieldBytes: 32 },
  nistp384: { jwk: 'P-384', fieldBytes: 48 },
  nistp521: { jwk: 'P-521', fieldBytes: 66 },
};

const CERT_SUFFIX = '-cert-v01@openssh.com';

/**
 * The key type names OpenSSH accepts at the start of a key (peek_type_nid over its key implementations),
 * mapped to the type the blob itself must name. The rsa-sha2-* names are signature algorithms, but OpenSSH
 * lists them among its key implementations, so a line naming one holds an ordinary ssh-rsa key.
 */
const LINE_TYPE_TO_BLOB_TYPE: ReadonlyMap<string, string> = new Map(
  [
    'ssh-ed25519',
    'ssh-rsa',
    'ssh-dss',
    'ecdsa-sha2-nistp256',
    'ecdsa-sha2-nistp384',
    'ecdsa-sha2-nistp521',
    'sk-ssh-ed25519@openssh.com',
    'sk-ecdsa-sha2-nistp256@openssh.com',
  ]
    .flatMap((t) => {
      const cert = t.endsWith('@openssh.com') ? t.replace('@openssh.com', CERT_SUFFIX) : `${t}${CERT_SUFFIX}`;
      return [
        [t, t],
        [cert, cert],
      ] as Array<[string, string]>;
    })
    .concat([
      ['rsa-sha2-256', 'ssh-rsa'],
      ['rsa-sha2-512', 'ssh-rsa'],
      [`rsa-sha2-256${CERT_SUFFIX}`, `ssh-rsa${CERT_SUFFIX}`],
      [`rsa-sha2-512${CERT_SUFFIX}`, `ssh-rsa${CERT_SUFFIX}`],
    ]),
);

/** Reads SSH wire-format fields; every read returns null once the data runs out or is malformed. */
class WireReader {
  private offset = 0;

  constructor(private readonly data: Buffer) {}

  bytes(): Buffer | null {
    if (this.offset + 4 > this.data.length) return null;
    const len = this.data.readUInt32BE(this.offset);
    if (this.offset + 4 + len > this.data.length) return null;
    const value = this.data.subarray(this.offset + 4, this.offset + 4 + len);
    this.offset += 4 + len;
    return value;
  }

  /** A string without NUL bytes (sshbuf_get_cstring). */
  text(): string | null {
    const value = this.bytes();
    if (value === null || value.includes(0)) return null;
    return value.toString('latin1');
  }

  /** A non-negative mpint's magnitude without leading zeros (sshbuf_get_bignum2), or null. */
  mpint(): Buffer | null {
    const value = this.bytes();
    if (value === null) return null;
    if (value.length > 0 && ((value[0] ?? 0) & 0x80) !== 0) return null; // negative
    if (value.length > MAX_BIGNUM_BYTES + 1 || (value.length === MAX_BIGNUM_BYTES + 1 && value[0] !== 0)) return null;
    let start = 0;
    while (start < value.length && value[start] === 0) start++;
    return value.subarray(start);
  }

  atEnd(): boolean {
    return this.offset === this.data.length;
  }
}

/**
 * The key type named inside an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, …), or null if malformed. The
 * server chooses these bytes and they reach messages and the trust prompt, so only printable ASCII passes.
 */
export function keyTypeOfBlob(keyBlob: Buffer): string | null {
  const name = new WireReader(keyBlob).text();
  return name === null || !/^[\x21-\x7e]{1,64}$/.test(name) ? null : name;
}

function bitLength(magnitude: Buffer): number {
  const top = magnitude[0];
  return top === undefined ? 0 : (magnitude.length - 1) * 8 + (32 - Math.clz32(top));
}

function validEcPoint(curveName: string, point: Buffer | null): boolean {
  const curve = EC_CURVES[curveName];
  if (curve === undefined || point === null) return false;
  if (point.length !== 1 + 2 * curve.fieldBytes || point[0] !== 0x04) return false; // uncompressed only
  const x = point.subarray(1, 1 + curve.fieldBytes).toString('base64url');
  const y = point.subarray(1 + curve.fieldBytes).toString('base64url');
  try {
    createPublicKey({ key: { kty: 'EC', crv: curve.jwk, x, y }, format: 'jwk' }); // OpenSSL refuses off-curve points
    return true;
  } catch {
    return false;
  }
}

/** Whether the fields after the type name form a valid public key of `blobType` (not a certificate). */
function validKeyBody(blobType: string, r: WireReader): boolean {
  switch (blobType) {
    case 'ssh-ed25519':
      return r.bytes()?.length === ED25519_PUBLIC_KEY_BYTES;
    case 'sk-ssh-ed25519@openssh.com':
      return r.bytes()?.length === ED25519_PUBLIC_KEY_BYTES && r.text() !== null;
    case 'ssh-rsa': {
      const e = r.mpint();
      const n = r.mpint();
      return e !== null && n !== null && bitLength(n) >= RSA_MIN_MODULUS_BITS;
    }
    case 'ssh-dss':
      return [r.mpint(), r.mpint(), r.mpint(), r.mpint()].every((v) => v !== null);
    case 'sk-ecdsa-sha2-nistp256@openssh.com': {
      const curve = r.text();
      return curve === 'nistp256' && validEcPoint(curve, r.bytes()) && r.text() !== null;
    }
    default: {
      const curve = /^ecdsa-sha2-(nistp\d+)$/.exec(blobType)?.[1];
      return curve !== undefined && r.text() === curve && validEcPoint(curve, r.bytes());
    }
  }
}

/**
 * The blob's key type if `lineType keyBlob` is a public key OpenSSH would read from a known_hosts (or
 * authorized_keys) line, else null.
 */
export function checkedPublicKeyType(lineType: string, keyBlob: Buffer): string | null {
  const wanted = LINE_TYPE_TO_BLOB_TYPE.get(lineType);
  if (wanted === undefined) return null;
  const r = new WireReader(keyBlob);
  if (r.text() !== wanted) return null;
  if (wanted.endsWith(CERT_SUFFIX)) return wanted;
  return validKeyBody(wanted, r) && r.atEnd() ? wanted : null;
}
