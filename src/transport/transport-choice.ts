/**
 * Which transport reaches a host (issue 17 item 2): the built-in ssh2 one, or the operator's own OpenSSH.
 * `auto` takes OpenSSH when the resolved config uses what ssh2 cannot do — a `Match exec` evaluated for the
 * host (ssh2 connects without re-running it), GSSAPI with a Kerberos ticket at hand, a PKCS#11 provider,
 * FIDO (`sk-`) keys, certificates — or when the inventory asks for it. Forcing ssh2 while such a reason exists
 * still connects over ssh2; the reasons are said (resolve, the setup screen) as what will not work.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { ConfigError } from '../config/errors.js';
import type { HostConfig } from '../config/schema.js';
import { certificateReasons, type CertificateInputs } from './certificates.js';
import type { ResolvedSshConfig } from './ssh-config.js';
import { keyTypeOfBlob } from './ssh-public-key.js';

/** One thing ssh2 cannot do for this host; `source` is the config's `file:line` or "inventory". */
export interface OpensshReason {
  what: string;
  source: string;
}

export type TransportName = 'ssh2' | 'openssh';

export interface TransportChoice {
  transport: TransportName;
  why: string;
}

/** What opensshReasons looks at outside the resolved config (injectable for tests). */
export interface ReasonProbe {
  /** A file's bytes, or undefined when it cannot be read (key files and their .pub). */
  readFile: (path: string) => Buffer | undefined;
  /** True when a Kerberos credential cache is at hand: without one GSSAPI authenticates nothing. */
  kerberosTicket: boolean;
  /**
   * The agent's identities (certificates.ts agentInput), for callers that could ask it beforehand: listing is
   * asynchronous and this is not. Absent: agent certificates are not looked for.
   */
  agent?: CertificateInputs['agent'];
}

export function defaultReasonProbe(env: NodeJS.ProcessEnv = process.env): ReasonProbe {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  return {
    readFile: (path) => {
      try {
        return readFileSync(path);
      } catch {
        return undefined;
      }
    },
    kerberosTicket: Boolean(env.KRB5CCNAME) || (uid !== undefined && existsSync(`/tmp/krb5cc_${uid}`)),
  };
}

const FIDO_KEY_TYPES = new Set([
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
  'sk-ssh-ed25519-cert-v01@openssh.com',
  'sk-ecdsa-sha2-nistp256-cert-v01@openssh.com',
]);

const OPENSSH_KEY_MAGIC = 'openssh-key-v1\0';

/** The key type in an OpenSSH private key file's (unencrypted) public part, or undefined. */
function privateKeyType(text: string): string | undefined {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(text);
  if (!m) return undefined;
  const data = Buffer.from((m[1] as string).replace(/\s+/g, ''), 'base64');
  if (data.subarray(0, OPENSSH_KEY_MAGIC.length).toString('latin1') !== OPENSSH_KEY_MAGIC) return undefined;
  let offset = OPENSSH_KEY_MAGIC.length;
  const skipString = (): boolean => {
    if (offset + 4 > data.length) return false;
    offset += 4 + data.readUInt32BE(offset);
    return offset <= data.length;
  };
  // ciphername, kdfname, kdfoptions, then the number of keys and the first public key blob
  if (!skipString() || !skipString() || !skipString() || offset + 8 > data.length) return undefined;
  offset += 4;
  const length = data.readUInt32BE(offset);
  const blob = data.subarray(offset + 4, offset + 4 + length);
  return keyTypeOfBlob(blob) ?? undefined;
}

/** The key type of an identity file: from its .pub beside it, else from the private key file. */
function identityKeyType(path: string, probe: ReasonProbe): string | undefined {
  const pub = probe.readFile(`${path}.pub`)?.toString('utf8');
  const word = pub?.trim().split(/\s+/)[0];
  if (word) return word;
  const key = probe.readFile(path);
  return key === undefined ? undefined : privateKeyType(key.toString('utf8'));
}

/** What ssh2 cannot do in this resolved config, each with the line that asks for it. */
export function opensshReasons(r: ResolvedSshConfig, probe: ReasonProbe = defaultReasonProbe()): OpensshReason[] {
  const reasons: OpensshReason[] = [];
  for (const m of r.matchExec) {
    reasons.push({ what: `Match exec "${m.command}" (${m.matched ? 'matched' : 'evaluated'})`, source: m.where });
  }
  // Debian's ssh_config turns GSSAPI on for every host: it only matters with a Kerberos ticket to offer.
  if (r.gssapiAuthentication && probe.kerberosTicket) {
    const what = 'GSSAPIAuthentication yes (a Kerberos ticket is at hand)';
    reasons.push({ what, source: r.sources.gssapiAuthentication });
  }
  if (r.pkcs11Provider !== undefined) {
    reasons.push({ what: `PKCS11Provider ${r.pkcs11Provider}`, source: r.sources.pkcs11Provider });
  }
  r.identityFiles.forEach((path, i) => {
    const type = identityKeyType(path, probe);
    if (type !== undefined && FIDO_KEY_TYPES.has(type)) {
      const source = r.identityFilesDefaulted ? 'default' : (r.sources.identityFiles[i] ?? 'default');
      reasons.push({ what: `FIDO key ${path} (${type})`, source });
    }
  });
  const readFile = (path: string) => probe.readFile(path)?.toString('utf8');
  reasons.push(...certificateReasons(r, { readFile, ...(probe.agent ? { agent: probe.agent } : {}) }));
  return reasons;
}

const reasonText = (reasons: readonly OpensshReason[]): string =>
  reasons.map((x) => `${x.what} (${x.source})`).join('; ');

/**
 * ssh2 or openssh for `h`: the inventory's `transport` wins; `auto` (the default) takes openssh when any
 * reason exists. `why` says it in one line, naming the reasons (and, for a forced ssh2, what will not work).
 */
export function chooseTransport(
  h: Pick<HostConfig, 'transport'>,
  resolved: Pick<ResolvedSshConfig, 'alias'>,
  reasons: readonly OpensshReason[],
): TransportChoice {
  const asked = h.transport ?? 'auto';
  if (asked === 'openssh') {
    return { transport: 'openssh', why: 'inventory transport: openssh' };
  }
  if (asked === 'ssh2') {
    const why =
      reasons.length === 0
        ? 'inventory transport: ssh2'
        : `inventory transport: ssh2; will not work over ssh2: ${reasonText(reasons)}`;
    return { transport: 'ssh2', why };
  }
  if (reasons.length > 0) return { transport: 'openssh', why: `auto: ssh2 cannot do ${reasonText(reasons)}` };
  return { transport: 'ssh2', why: `auto: nothing in the ssh config for ${resolved.alias} needs OpenSSH` };
}

/** Refuses the openssh transport where there is no `ssh` client, naming the package that brings it. */
export function requireOpensshClient(hostName: string, why: string, sshBinary = 'ssh'): void {
  const r = spawnSync(sshBinary, ['-V'], { stdio: 'ignore', timeout: 10_000 });
  const missing = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
  if (!missing) return;
  throw new ConfigError(
    `${hostName}: the OpenSSH transport is chosen (${why}) but there is no ${sshBinary} client on PATH; ` +
      'install the package openssh-client (apt-get install openssh-client), or set transport: ssh2',
    'transport',
    [`no ${sshBinary} on PATH`],
  );
}
