/**
 * The argv the OpenSSH transport gives the system `ssh`, in one place. A value from the inventory or the ssh
 * config never passes through a shell here except in the ProxyCommand that reaches a jump host's master, and
 * that one is built from quoted words. Paths are quoted as ssh_config values (sshConfigPath): ssh splits `-o`
 * lines like a shell and expands %-tokens in ControlPath, IdentityFile and UserKnownHostsFile.
 *
 * ssh takes the first value it obtains for an option, and the command line comes before any config file, so
 * what is set here wins over ~/.ssh/config; everything not set here (certificates, Match exec, GSSAPI,
 * PKCS#11, FIDO keys, the user's own ProxyCommand) is left to the user's config.
 */
import { quoteWord, sshConfigPath } from './quote.js';
import type { SshHostOptions } from './ssh-options.js';

/** One ssh destination: the target (its alias, so the user's config applies) or a jump host. */
export interface SshDestination {
  /** The name given to ssh. */
  alias: string;
  opts: SshHostOptions;
  /** -p / -l / IdentityFile only where these are set (the inventory's values, or a hop's resolved ones). */
  port?: number;
  user?: string;
  identityFiles?: readonly string[];
  /** Keys our host-key policy accepted that no known_hosts file of the options holds (pins; failed appends). */
  sessionKnownHosts: string;
  /** The jump host's control socket this destination is reached through (ssh -W over its master). */
  viaControlPath?: string;
  /** The hop reached through `viaControlPath`, as ssh is given it. */
  viaAlias?: string;
  /** Connect directly even if the user's config names a ProxyJump / ProxyCommand (inventory `jump: none`). */
  direct?: boolean;
  /** `-F`: this config file instead of ~/.ssh/config (tests). */
  configFile?: string;
}

const SAFE_ALIAS = /^[A-Za-z0-9._:@[\]-]+$/;

function opt(name: string, value: string): string[] {
  return ['-o', `${name}=${value}`];
}

/** A name ssh takes as a destination or HostKeyAlias: no option-like or shell-special text. */
export function checkedSshName(name: string, what: string): string {
  if (!SAFE_ALIAS.test(name) || name.startsWith('-')) {
    throw new Error(`refusing ${what} ${JSON.stringify(name)}: use letters, digits and . _ : @ [ ] -`);
  }
  return name;
}

/** Options every ssh invocation of one destination shares, before the destination-specific ones. */
function configFileArgs(d: SshDestination): string[] {
  return d.configFile !== undefined ? ['-F', d.configFile] : [];
}

/**
 * What a master (and the host-key fetch) connects with: batch mode (no prompt ever), our host-key policy
 * (strict, our known_hosts files only, ssh never writes them), keepalives and timeouts from the options.
 */
export function connectionArgs(d: SshDestination): string[] {
  const o = d.opts;
  const knownHosts = [...o.knownHostsFiles, d.sessionKnownHosts].map(sshConfigPath).join(' ');
  const interval = o.keepaliveIntervalMs ?? 5000;
  const args = [
    ...configFileArgs(d),
    ...opt('BatchMode', 'yes'),
    ...opt('StrictHostKeyChecking', 'yes'),
    ...opt('UserKnownHostsFile', knownHosts),
    ...opt('GlobalKnownHostsFile', 'none'),
    ...opt('KnownHostsCommand', 'none'),
    ...opt('UpdateHostKeys', 'no'),
    ...opt('ConnectTimeout', String(Math.max(1, Math.ceil((o.readyTimeoutMs ?? 20_000) / 1000)))),
    ...opt('ServerAliveInterval', String(interval > 0 ? Math.max(1, Math.round(interval / 1000)) : 0)),
    ...opt('ServerAliveCountMax', String(o.keepaliveCountMax ?? 3)),
  ];
  if (o.hostKeyAlias !== undefined) {
    args.push(...opt('HostKeyAlias', checkedSshName(o.hostKeyAlias, 'the HostKeyAlias')));
  }
  if (d.port !== undefined) args.push('-p', String(d.port));
  if (d.user !== undefined) args.push('-l', d.user);
  for (const file of d.identityFiles ?? []) args.push(...opt('IdentityFile', sshConfigPath(file)));
  if (d.viaControlPath !== undefined && d.viaAlias !== undefined) {
    args.push(...opt('ProxyCommand', proxyThroughMaster(d.viaControlPath, d.viaAlias, d.configFile)));
  } else if (d.direct) {
    args.push(...opt('ProxyCommand', 'none'));
  }
  return args;
}

/**
 * The ProxyCommand that reaches the next hop through a jump host's master (`ssh -W`). ssh runs it with the
 * user's shell after expanding %-tokens, so every word is shell-quoted and then has its `%` doubled; `%h`
 * and `%p` are left for ssh to fill in.
 */
function proxyThroughMaster(controlPath: string, hopAlias: string, configFile: string | undefined): string {
  const words = ['ssh', ...(configFile !== undefined ? ['-F', configFile] : []), ...muxClientOptions(controlPath)];
  const quoted = [...words, hopAlias].map((w) => quoteWord(w).replace(/%/g, '%%'));
  return [...quoted.slice(0, -1), '-W', '[%h]:%p', ...quoted.slice(-1)].join(' ');
}

/**
 * A client of a running master: ControlMaster=no, and ProxyCommand=false so that when the master is gone
 * ssh's fallback to a connection of its own fails at once instead of connecting around the master
 * ("kex_exchange_identification", see NOT_SENT in openssh-exec.ts). LogLevel=ERROR keeps ssh's own notes
 * out of the command's stderr.
 */
function muxClientOptions(controlPath: string): string[] {
  return [
    ...opt('ControlMaster', 'no'),
    ...opt('ControlPath', sshConfigPath(controlPath)),
    ...opt('ProxyCommand', 'false'),
    ...opt('BatchMode', 'yes'),
    ...opt('LogLevel', 'ERROR'),
  ];
}

/** `ssh … alias` for a command (`-- LINE` follows) or a control request (`-O` goes first). */
export function muxClientArgs(d: SshDestination, controlPath: string): string[] {
  return [...configFileArgs(d), '-T', ...muxClientOptions(controlPath), d.alias];
}

/** `ssh -O <request> …` for the master at `controlPath`. */
export function controlArgs(d: SshDestination, controlPath: string, request: 'check' | 'exit'): string[] {
  return ['-O', request, ...muxClientArgs(d, controlPath)];
}

/** The master: -M with its socket, ControlPersist so it exits by itself `idleExitS` after its last session. */
export function masterArgs(d: SshDestination, controlPath: string, idleExitS: number): string[] {
  return [
    '-M',
    ...opt('ControlPath', sshConfigPath(controlPath)),
    ...opt('ControlPersist', `${Math.max(1, Math.round(idleExitS))}s`),
    ...connectionArgs(d),
  ];
}
