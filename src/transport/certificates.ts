/**
 * What in a host's resolved ssh config needs OpenSSH certificates, which the built-in ssh2 transport can
 * neither offer nor check (mscdex/ssh2#551): the reasons transport `auto` picks the OpenSSH transport for it
 * (transport-choice.ts), each with the config or known_hosts line, or the agent, it comes from.
 *
 * Sources, as OpenSSH 9.2p1's ssh loads them (ssh.c load_public_identity_files, authfile.c
 * sshkey_load_public, sshconnect.c check_host_key):
 *   CertificateFile     each configured path (expanded by the resolver) whose file, or the file with `.pub`
 *                       added, holds a certificate; a missing one or a plain key is skipped, as ssh skips it;
 *   <identity>-cert     only when no CertificateFile is configured: beside every identity file (configured or
 *                       default), `<identity>-cert` or `<identity>-cert.pub` holding a certificate. ssh loads
 *                       it whether or not the private key is there (the agent may hold that key);
 *   the agent           identities whose type is a certificate (`…-cert-v01@openssh.com`), unless
 *                       IdentitiesOnly is set (ssh then offers only what the files name, covered above);
 *   @cert-authority     for a host with no plain key in its known_hosts files, each CA line that names it and
 *                       that no @revoked line cancels: only OpenSSH can check the host's certificate. A host
 *                       with a plain key is verified by ssh2 as it is.
 * Pure but for reading the key and known_hosts files; the agent's identities come in from listAgentIdentities
 * (ssh-agent-identities.ts), which is asynchronous, so that this stays synchronous for transport-choice.ts.
 */
import type { ResolvedSshConfig } from './ssh-config.js';
import { listAgentIdentities, type AgentIdentity } from './ssh-agent-identities.js';
import { hasPlainHostKey, hostCertificateAuthorities, strictBase64 } from './known-hosts.js';
import { checkedPublicKeyType } from './ssh-public-key.js';
import { readFileSafelySync } from '../util/read-file-safely.js';
import { clean } from '../util/sanitize.js';

/**
 * One reason, `{ what, source }`: the shape of transport-choice.ts's OpensshReason (source is `file:line`, or
 * where else it was found), declared here because transport-choice.ts imports this module.
 */
export interface CertificateReason {
  what: string;
  source: string;
}

export interface CertificateInputs {
  /**
   * The agent ssh would ask (SSH_AUTH_SOCK or IdentityAgent) and its identities as listAgentIdentities gave
   * them; absent when there is no agent or it could not be asked (an absent agent is no reason).
   */
  agent?: { socket: string; identities: readonly AgentIdentity[] };
  /** known_hosts files to look for CA lines in; default: the resolved user files, then the global ones. */
  knownHostsFiles?: readonly string[];
  /** A key file's text, or undefined when it cannot be read; default: the size- and type-checked reader. */
  readFile?: (path: string) => string | undefined;
}

const CERT_SUFFIX = '-cert-v01@openssh.com';

/**
 * CertificateInputs.agent for the agent at `socket` (SSH_AUTH_SOCK, or the options' `agent`): its identities,
 * or undefined when there is no socket or the agent cannot be asked within `timeoutMs` (then it is no reason).
 */
export async function agentInput(socket: string | undefined, timeoutMs?: number): Promise<CertificateInputs['agent']> {
  if (socket === undefined || socket === '') return undefined;
  try {
    return { socket, identities: await listAgentIdentities(socket, timeoutMs) };
  } catch {
    return undefined;
  }
}

function readKeyFile(path: string): string | undefined {
  try {
    return readFileSafelySync(path, 'SSH key').toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The type of the first public key in a file's text, as sshkey_try_load_public reads it: `#` and blank lines
 * skipped, a private key ends the search, a line that does not parse is passed over.
 */
function firstPublicKeyType(text: string): string | undefined {
  for (const raw of text.split('\n')) {
    if (raw.startsWith('#') || raw === '' || raw.startsWith('\r')) continue;
    if (raw.startsWith('-----BEGIN') || raw === 'SSH PRIVATE KEY FILE') return undefined;
    const [type, b64] = raw.replace(/^[ \t]+/, '').split(/[ \t\r]+/);
    if (type === undefined || b64 === undefined) continue;
    const blob = strictBase64(b64);
    const checked = blob === null ? null : checkedPublicKeyType(type, blob);
    if (checked !== null) return checked;
  }
  return undefined;
}

/** sshkey_load_public's look-up: `path`, then `path.pub`; the file and type found, if it is a certificate. */
function certificateAt(
  path: string,
  read: (path: string) => string | undefined,
): { path: string; type: string } | undefined {
  for (const candidate of [path, `${path}.pub`]) {
    const text = read(candidate);
    const type = text === undefined ? undefined : firstPublicKeyType(text);
    if (type !== undefined) return type.endsWith(CERT_SUFFIX) ? { path: candidate, type } : undefined;
  }
  return undefined;
}

/** Every reason (see the top of this file) that `resolved` needs certificates, in the order ssh meets them. */
export function certificateReasons(resolved: ResolvedSshConfig, inputs: CertificateInputs = {}): CertificateReason[] {
  const read = inputs.readFile ?? readKeyFile;
  const reasons: CertificateReason[] = [];
  resolved.certificateFiles.forEach((path, i) => {
    const cert = certificateAt(path, read);
    if (cert === undefined) return;
    reasons.push({
      what: `CertificateFile ${cert.path} holds a ${cert.type} user certificate`,
      source: resolved.sources.certificateFiles[i] ?? 'default',
    });
  });
  if (resolved.certificateFiles.length === 0) {
    resolved.identityFiles.forEach((identity, i) => {
      const cert = certificateAt(`${identity}-cert`, read);
      if (cert === undefined) return;
      reasons.push({
        what:
          `${cert.path} beside the identity ${identity} holds a ${cert.type} user certificate ` +
          '(ssh offers it automatically)',
        source: resolved.sources.identityFiles[i] ?? resolved.sources.identityFiles[0] ?? 'default',
      });
    });
  }
  if (inputs.agent !== undefined && !resolved.identitiesOnly) {
    for (const id of inputs.agent.identities) {
      if (!id.keyType.endsWith(CERT_SUFFIX)) continue;
      reasons.push({
        what: `the agent holds a ${id.keyType} user certificate ${id.fingerprint} (${clean(id.comment)})`,
        source: `ssh-agent ${inputs.agent.socket}`,
      });
    }
  }
  const files = inputs.knownHostsFiles ?? [...resolved.userKnownHostsFiles, ...resolved.globalKnownHostsFiles];
  const { hostName, port, hostKeyAlias } = resolved;
  if (!hasPlainHostKey(files, hostName, port, hostKeyAlias)) {
    for (const ca of hostCertificateAuthorities(files, hostName, port, hostKeyAlias)) {
      if (ca.revokedAt !== undefined) continue;
      reasons.push({
        what:
          `known_hosts trusts the host only through @cert-authority ${ca.keyType} ${ca.fingerprint}: ` +
          'its host certificate can be checked by OpenSSH only',
        source: `${ca.file}:${ca.line}`,
      });
    }
  }
  return reasons;
}
