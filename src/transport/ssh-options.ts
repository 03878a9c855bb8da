/** What an SshHost is configured with: address, credentials, host-key policy, limits and timing. */

/** What onUnknownHostKey is asked with (ssh-host-key.ts puts the question). */
export interface UnknownHostKeyInfo {
  host: string;
  port: number;
  /** `SHA256:…` as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  keyType: string;
  /**
   * For a jump host's key: the inventory host it is a jump host for (the hop's own name is the question's
   * `name`, set by whoever wraps onUnknownHostKey: ssh-hops.ts for hops, target.ts for hosts).
   */
  jumpHostFor?: string;
  /** The known_hosts file a trusted key is added to (the first of knownHostsFiles); absent when there is none. */
  recordIn?: string;
  /**
   * Set when known_hosts names a certificate authority for the host (and no plain key): a sentence saying
   * that the built-in transport cannot check it and OpenSSH would, or that the CA is @revoked.
   */
  certificateAuthority?: string;
}

export interface SshHostOptions {
  /** Inventory name (used in errors, logs and state details). */
  name: string;
  host: string;
  port?: number;
  user: string;
  /** A private key (OpenSSH/PEM text or buffer). Tried before `identityFiles`. */
  privateKey?: Buffer | string;
  /** Passphrase for an encrypted `privateKey` / identity file. */
  passphrase?: string;
  /** Private key files, tried in order; missing or unreadable ones are skipped (and named in the error). */
  identityFiles?: readonly string[];
  /** True when identityFiles are OpenSSH's defaults: then a missing one is skipped without a note. */
  identityFilesDefaulted?: boolean;
  /** ssh-agent socket (e.g. process.env.SSH_AUTH_SOCK); tried first when set. */
  agent?: string;
  /** known_hosts files to check, in order; a trusted new key is appended to the first. */
  knownHostsFiles: readonly string[];
  /**
   * OpenSSH's HostKeyAlias: the name the host key is looked up and recorded under in known_hosts, instead of
   * `host` / `[host]:port` (lower-cased; no port is added and there is no port-less fallback).
   */
  hostKeyAlias?: string;
  /**
   * A pinned host key fingerprint (`SHA256:…`, e.g. from the inventory). A different key is refused as
   * 'changed'; the pinned key is accepted even when no known_hosts file lists it.
   */
  expectedFingerprint?: string;
  /** Asked when the host key is not in any known_hosts file: resolve true to trust (and record) it. */
  onUnknownHostKey?: (info: UnknownHostKeyInfo) => Promise<boolean>;
  /** SSH keepalive interval (default 5000 ms); 0 disables. */
  keepaliveIntervalMs?: number;
  /** Unanswered keepalives before the connection counts as lost (default 3). */
  keepaliveCountMax?: number;
  /** Most exec channels open at once (default 10, OpenSSH's MaxSessions default). */
  maxSessions?: number;
  /** Handshake + authentication limit (default 20000 ms); time spent in onUnknownHostKey is not counted. */
  readyTimeoutMs?: number;
  /** Password for `sudo -S`, sent on stdin only when the host's sudo asks for one. Never logged. */
  sudoPassword?: string;
  /** Wait before reconnecting after a loss (default 1000 ms; doubles after each failed attempt, max 30 s). */
  reconnectBackoffMs?: number;
  /** Backup folder for writeFileAtomic (default /var/lib/l20-setup/backup/<UTC timestamp of this host object>). */
  defaultBackupDir?: string;
  /**
   * Jump hosts (ProxyJump), in order: the first is reached directly (or through its own `proxyCommand`), each
   * later hop and then this host through a `forwardOut` tunnel over the one before. Each hop keeps its own
   * host-key policy (known_hosts files, hostKeyAlias, onUnknownHostKey), keys and user; a hop's own `jump` is
   * not followed (resolveJumpChain in ssh-hops.ts flattens the chain). Wins over `proxyCommand`.
   */
  jump?: readonly SshHostOptions[];
  /**
   * OpenSSH's ProxyCommand as configured, tokens (%h %p %r %n %%) unexpanded: run with `/bin/sh -c 'exec …'`,
   * its stdin/stdout are the connection (ssh-tunnel.ts). Absent (or `none`): connect directly.
   */
  proxyCommand?: string;
  /** The name the host was given by (the alias), for ProxyCommand's %n; default `host`. */
  originalHost?: string;
  /** ssh2 debug output (may include key-exchange details; never includes passwords). */
  debug?: (message: string) => void;
}
