/**
 * Resolves a host alias through OpenSSH client configuration files, for the options the SSH transport needs,
 * the way OpenSSH 9.2p1's `ssh` does it (readconf.c, ssh.c); test/transport/ssh-config-oracle.test.ts checks
 * it against the real `ssh -G` field by field.
 *
 * What it follows: files in order (user config, then system config), read by ssh-config-read.ts (Include,
 * unknown keywords, the refusals with file and line); the first obtained value of an option wins
 * (ssh-config-values.ts); `Host` and `Match` lines decide which blocks apply (ssh-config-match.ts). `Match final`
 * (or CanonicalizeHostname) makes a second pass in which Host patterns see the resolved HostName, as ssh does.
 * HostName expands %h; the path values expand `~` and the %-tokens (ssh-config-match.ts). What is not set gets
 * OpenSSH's default, and every value says which line (or "default") decided it.
 *
 * Not done: CanonicalizeHostname's DNS look-ups (the name is kept; a warning says so); ssh's owner and mode
 * check of config files is done only when the context offers `statFile`.
 *
 * Pure: file access, environment, user database and `Match exec` go through the injected context
 * (ssh-config-context.ts). Line splitting and value parsing are in ssh-config-parse.ts.
 */
import { defaultSshConfigFiles, type SshConfigContext, type SshConfigFile } from './ssh-config-context.js';
import {
  evaluateMatch,
  expandConfigPath,
  hostPatternsMatch,
  type MatchExecEvaluated,
  type MatchObserver,
  type MatchSubject,
} from './ssh-config-match.js';
import {
  isAddress,
  percentExpand,
  SshSyntaxError,
  tildeExpand,
  type StrictHostKeyChecking,
} from './ssh-config-parse.js';
import { readConfigFiles, splitWhere, SshConfigError, type ConfigLineHandler } from './ssh-config-read.js';
import { applyOption, emptyCollected, type Collected, type Sourced } from './ssh-config-values.js';

/** Where a value came from: `file:line`, or "default" for OpenSSH's default. */
export type SshConfigSource = string;

export interface SshConfigSources {
  hostName: SshConfigSource;
  port: SshConfigSource;
  user: SshConfigSource;
  /** One per configured IdentityFile line kept (same order as identityFilesConfigured), or ["default"]. */
  identityFiles: SshConfigSource[];
  identitiesOnly: SshConfigSource;
  userKnownHostsFiles: SshConfigSource;
  globalKnownHostsFiles: SshConfigSource;
  strictHostKeyChecking: SshConfigSource;
  serverAliveInterval: SshConfigSource;
  serverAliveCountMax: SshConfigSource;
  connectTimeout: SshConfigSource;
  identityAgent: SshConfigSource;
  proxyJump: SshConfigSource;
  proxyCommand: SshConfigSource;
  gssapiAuthentication: SshConfigSource;
  pkcs11Provider: SshConfigSource;
  /** One per CertificateFile line kept (same order as certificateFiles). */
  certificateFiles: SshConfigSource[];
}

export interface ResolvedSshConfig {
  /** The alias that was resolved (what `Host` patterns were matched against). */
  alias: string;
  /** HostName with %h expanded, lower-cased unless it is an address (as ssh -G prints it). */
  hostName: string;
  port: number;
  user: string;
  /** Expanded identity files, in the order ssh would try them; `none` entries are dropped. */
  identityFiles: string[];
  /** IdentityFile values as configured (unexpanded, `none` kept), as `ssh -G` prints them. */
  identityFilesConfigured: string[];
  /** True when no IdentityFile was configured and these are OpenSSH's defaults (skip the missing ones). */
  identityFilesDefaulted: boolean;
  identitiesOnly: boolean;
  /** Expanded; empty when `UserKnownHostsFile none`. */
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  strictHostKeyChecking: StrictHostKeyChecking;
  /** HostKeyAlias as written (known_hosts lookups lower-case it, as ssh does): the name used instead of the host. */
  hostKeyAlias?: string;
  /** Seconds; 0 disables. */
  serverAliveInterval: number;
  serverAliveCountMax: number;
  /** Seconds; undefined when not set (`none`). */
  connectTimeout?: number;
  /** `IdentityAgent` as configured (expanded), undefined when not set; `none` disables the agent. */
  identityAgent?: string;
  /** Recorded, not supported by the transport: the caller should refuse or explain. Formatted as ssh -G does. */
  proxyJump?: string;
  proxyCommand?: string;
  /** GSSAPIAuthentication (default no; Debian's /etc/ssh/ssh_config sets yes for every host). */
  gssapiAuthentication: boolean;
  /** PKCS11Provider as configured, undefined when not set or `none`. */
  pkcs11Provider?: string;
  /**
   * CertificateFile values, expanded like IdentityFile, in order (duplicates dropped); `none` is a file name
   * here (ssh.c gives CertificateFile no `none`). When any is set, ssh looks for no `<identity>-cert.pub`.
   */
  certificateFiles: string[];
  /** `Match exec` lines whose command ran while resolving this host (ssh2 cannot repeat them at connect time). */
  matchExec: MatchExecEvaluated[];
  /** Which config line decided each value. */
  sources: SshConfigSources;
  /** Things OpenSSH accepts that l20-setup does not follow, with file:line. */
  warnings: string[];
  /** Config files actually read, in order (includes). */
  filesRead: string[];
}

const DEFAULT_IDENTITY_FILES = [
  'id_rsa',
  'id_ecdsa',
  'id_ecdsa_sk',
  'id_ed25519',
  'id_ed25519_sk',
  'id_xmss',
  'id_dsa',
];

interface Pass {
  /** What Host patterns and `Match host` see: the alias in the first pass, the HostName in the final one. */
  host: string;
  final: boolean;
}

/**
 * Resolves `alias` through `files` (default: ~/.ssh/config then /etc/ssh/ssh_config). Missing files are
 * skipped (unless `required`); the result always has a host name, port and user (OpenSSH's defaults fill the
 * gaps). Throws SshConfigError where `ssh` would refuse the configuration.
 */
export function resolveSshConfig(
  alias: string,
  ctx: SshConfigContext,
  files: readonly SshConfigFile[] = defaultSshConfigFiles(ctx.homeDir),
): ResolvedSshConfig {
  if (!validHostArgument(alias)) {
    throw new SshConfigError(`host ${JSON.stringify(alias)}`, undefined, 'hostname contains invalid characters');
  }
  const c: Collected = emptyCollected();
  const matchExec: MatchExecEvaluated[] = [];
  const warnings: string[] = [];
  const filesRead: string[] = [];
  let wantFinal = false;

  /** The host `Match host` and `%h` in Match exec see at this point (readconf.c match_cfg_line). */
  const hostSoFar = (pass: Pass): string => {
    if (pass.final) return c.hostName?.value ?? pass.host;
    const configured = c.hostName;
    if (configured === undefined) return alias;
    return expandAt(configured.where, () => percentExpand(configured.value, { h: alias }));
  };

  const expandAt = <T>(where: string, run: () => T): T => {
    try {
      return run();
    } catch (e) {
      if (!(e instanceof SshSyntaxError)) throw e;
      const [file, line] = splitWhere(where);
      throw new SshConfigError(file, line, e.reason);
    }
  };

  const runPass = (pass: Pass): void => {
    const observer: MatchObserver = {
      wantFinal: () => {
        wantFinal = true;
      },
      execEvaluated: (evaluated) => matchExec.push(evaluated),
    };
    const handler: ConfigLineHandler = {
      ignoreUnknown: () => c.ignoreUnknown?.value,
      host: (patterns, fail) => hostPatternsMatch(pass.host, patterns, fail),
      match: (criteria, where, fail) => {
        const subject: MatchSubject = {
          host: hostSoFar(pass),
          alias,
          user: c.user?.value ?? ctx.localUser,
          port: c.port?.value ?? 22,
          final: pass.final,
          ...(c.hostKeyAlias !== undefined ? { hostKeyAlias: c.hostKeyAlias.value } : {}),
        };
        return evaluateMatch(criteria, subject, ctx, where, observer, fail);
      },
      option: (line, active, fail) => applyOption(c, line, active, fail, ctx.servicePort),
    };
    readConfigFiles(files, ctx, handler, filesRead);
  };

  runPass({ host: alias, final: false });

  // ssh.c: HostName is expanded (%h only) and lower-cased unless it is an address, then used by the final pass.
  const hostSource = c.hostName?.where ?? 'default';
  let hostName = c.hostName === undefined ? alias : hostSoFar({ host: alias, final: false });
  if (!isAddress(hostName)) hostName = hostName.toLowerCase();
  const canonicalize = c.canonicalizeHostname?.value ?? 'no';
  if (canonicalize !== 'no') {
    warnings.push(
      `${c.canonicalizeHostname!.where}: CanonicalizeHostname ${canonicalize} is not applied (no DNS look-ups);` +
        ' the name is used as written',
    );
  }
  if (wantFinal || canonicalize !== 'no') {
    c.hostName = { value: hostName, where: hostSource };
    runPass({ host: hostName, final: true });
  }

  const port = c.port?.value ?? 22;
  const user = c.user?.value ?? ctx.localUser;
  const target = { alias, hostName, port, user, ...(c.hostKeyAlias ? { hostKeyAlias: c.hostKeyAlias.value } : {}) };
  const expandPath = (p: string, where: string): string => expandAt(where, () => expandConfigPath(p, target, ctx));
  const isNone = (v: string) => v.toLowerCase() === 'none';

  const identityFilesDefaulted = c.identityFiles.length === 0;
  const configured = identityFilesDefaulted
    ? DEFAULT_IDENTITY_FILES.map((f) => ({ value: `~/.ssh/${f}`, where: 'default' }))
    : c.identityFiles;
  const identityFiles = configured.filter((f) => !isNone(f.value)).map((f) => expandPath(f.value, f.where));

  const ukh = c.userKnownHostsFiles ?? { value: ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'], where: 'default' };
  const gkh = c.globalKnownHostsFiles ?? {
    value: ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2'],
    where: 'default',
  };
  const userKnownHostsFiles = isNone(ukh.value[0] ?? '') ? [] : ukh.value.map((p) => expandPath(p, ukh.where));
  const globalKnownHostsFiles = isNone(gkh.value[0] ?? '')
    ? []
    : gkh.value.map((p) => expandAt(gkh.where, () => tildeExpand(p, ctx.homeDir, ctx.userHome)));

  const source = (s: Sourced<unknown> | undefined): SshConfigSource => s?.where ?? 'default';
  const result: ResolvedSshConfig = {
    alias,
    hostName,
    port,
    user,
    identityFiles,
    identityFilesConfigured: configured.map((f) => f.value),
    identityFilesDefaulted,
    identitiesOnly: c.identitiesOnly?.value ?? false,
    userKnownHostsFiles,
    globalKnownHostsFiles,
    strictHostKeyChecking: c.strictHostKeyChecking?.value ?? 'ask',
    serverAliveInterval: c.serverAliveInterval?.value ?? 0,
    serverAliveCountMax: c.serverAliveCountMax?.value ?? 3,
    sources: {
      hostName: hostSource,
      port: source(c.port),
      user: source(c.user),
      identityFiles: identityFilesDefaulted ? ['default'] : c.identityFiles.map((f) => f.where),
      identitiesOnly: source(c.identitiesOnly),
      userKnownHostsFiles: source(c.userKnownHostsFiles),
      globalKnownHostsFiles: source(c.globalKnownHostsFiles),
      strictHostKeyChecking: source(c.strictHostKeyChecking),
      serverAliveInterval: source(c.serverAliveInterval),
      serverAliveCountMax: source(c.serverAliveCountMax),
      connectTimeout: source(c.connectTimeout),
      identityAgent: source(c.identityAgent),
      proxyJump: source(c.proxyJump),
      proxyCommand: source(c.proxyCommand),
      gssapiAuthentication: source(c.gssapiAuthentication),
      pkcs11Provider: source(c.pkcs11Provider),
      certificateFiles: c.certificateFiles.map((f) => f.where),
    },
    gssapiAuthentication: c.gssapiAuthentication?.value ?? false,
    certificateFiles: c.certificateFiles.map((f) => expandPath(f.value, f.where)),
    matchExec: matchExec.filter(
      (m, i) => matchExec.findIndex((o) => o.where === m.where && o.command === m.command) === i,
    ),
    warnings,
    filesRead,
  };
  if (c.connectTimeout !== undefined) result.connectTimeout = c.connectTimeout.value;
  if (c.identityAgent !== undefined) {
    const agent = c.identityAgent.value;
    const literal = isNone(agent) || agent === 'SSH_AUTH_SOCK' || (agent.startsWith('$') && !agent.startsWith('${'));
    result.identityAgent = isNone(agent) ? 'none' : literal ? agent : expandPath(agent, c.identityAgent.where);
  }
  if (c.hostKeyAlias !== undefined) result.hostKeyAlias = c.hostKeyAlias.value;
  if (c.pkcs11Provider !== undefined && !isNone(c.pkcs11Provider.value)) result.pkcs11Provider = c.pkcs11Provider.value;
  if (c.proxyJump !== undefined && !isNone(c.proxyJump.value)) result.proxyJump = c.proxyJump.value;
  else if (c.proxyCommand !== undefined && !isNone(c.proxyCommand.value)) result.proxyCommand = c.proxyCommand.value;
  return result;
}

/**
 * ssh refuses a host argument that could smuggle shell syntax into %-tokens (ssh_valid_hostname, in
 * Debian's 9.2p1 as a security fix): a leading `-`, quotes, `$`, `\\`, `;&<>|(){},`, spaces and controls.
 */
function validHostArgument(name: string): boolean {
  return !name.startsWith('-') && !/[\s'`"$\\;&<>|(){},\x00-\x1f\x7f]/.test(name);
}
