/** Key generation shared by the lab and the tests. */
import ssh2 from 'ssh2';

/**
 * ssh2's generator drops a leading zero byte of the 32-byte ed25519 public key (about 1 key in 128),
 * producing a key that ssh2 itself then rejects as malformed. Generate again until both halves parse.
 */
export function generateEd25519(comment?: string): { private: string; public: string } {
  for (let attempt = 0; ; attempt++) {
    const k = ssh2.utils.generateKeyPairSync('ed25519', comment ? { comment } : {});
    const pub = ssh2.utils.parseKey(k.public);
    const priv = ssh2.utils.parseKey(k.private);
    if (!(pub instanceof Error) && !(priv instanceof Error)) return k;
    if (attempt >= 20)
      throw new Error(`lab: could not generate a valid ed25519 key: ${pub instanceof Error ? pub.message : ''}`);
  }
}
