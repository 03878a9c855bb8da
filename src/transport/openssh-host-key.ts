/**
 * Host-key policy for the OpenSSH transport: ours, not ssh's. ssh runs with StrictHostKeyChecking=yes against
 * our known_hosts files, so it connects only to a key already recorded (or accepted this session). When it
 * refuses ("Host key verification failed": unknown, changed or revoked), the key the server presents is
 * fetched over a connection that authenticates with nothing (PreferredAuthentications=none, into a scratch
 * known_hosts file with accept-new) and put to the same HostKeyVerifier the ssh2 transport uses: a changed or
 * revoked key is refused naming both fingerprints, an unknown one goes to onUnknownHostKey and, when trusted,
 * is recorded in the first known_hosts file. A pinned fingerprint is checked the same way before connecting.
 * An accepted key is also written to the session's own known_hosts file, which ssh is given too, so a pinned
 * key or one that could not be recorded is still accepted by ssh.
 */
import { readFileSync, rmSync } from 'node:fs';
import { connectionArgs, type SshDestination } from './openssh-args.js';
import { runSsh } from './openssh-master.js';
import { appendKnownHost, parseKnownHosts } from './known-hosts.js';
import { sshConfigPath } from './quote.js';
import { keyTypeOfBlob } from './ssh-public-key.js';
import type { HostKeyVerifier } from './ssh-host-key.js';
import { tailLines } from './output.js';
import { TransportError } from './types.js';

/** ssh's last words when it refused the host key (any reason: our verifier says which). */
export function isHostKeyRefusal(stderr: string): boolean {
  return /Host key verification failed/.test(stderr);
}

/** The host key `dest` presents, via a connection that records it in `scratchFile` and authenticates with nothing. */
export async function presentedHostKey(binary: string, dest: SshDestination, scratchFile: string): Promise<Buffer> {
  rmSync(scratchFile, { force: true });
  const args = [
    '-o',
    'StrictHostKeyChecking=accept-new',
    '-o',
    `UserKnownHostsFile=${sshConfigPath(scratchFile)}`,
    '-o',
    'PreferredAuthentications=none',
    '-o',
    'ControlMaster=no',
    '-o',
    'ControlPath=none',
    ...connectionArgs(dest),
    dest.alias,
    'true',
  ];
  try {
    const r = await runSsh(binary, args);
    let text = '';
    try {
      text = readFileSync(scratchFile, 'utf8');
    } catch {
      // nothing recorded: the connection failed before the key exchange
    }
    const entry = parseKnownHosts(text, scratchFile)[0];
    if (entry === undefined) {
      const said = tailLines(r.stderr, 3).join(' / ');
      const why = `${dest.opts.name}: cannot read the host key ${dest.alias} presents: ${said}`;
      throw new TransportError(why, dest.opts.name);
    }
    return entry.keyBlob;
  } finally {
    rmSync(scratchFile, { force: true });
  }
}

/**
 * Puts the presented key to our policy: throws HostKeyError (changed, revoked, not trusted); otherwise the key
 * is accepted, and added to the session's known_hosts file so that ssh accepts it too.
 */
export async function acceptPresentedKey(
  binary: string,
  dest: SshDestination,
  verifier: HostKeyVerifier,
  scratchFile: string,
): Promise<void> {
  const key = await presentedHostKey(binary, dest, scratchFile);
  await verifier.check(key);
  const o = dest.opts;
  appendKnownHost(dest.sessionKnownHosts, o.host, o.port ?? 22, keyTypeOfBlob(key) ?? 'unknown', key, o.hostKeyAlias);
}
