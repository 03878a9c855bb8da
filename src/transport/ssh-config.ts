/**
 * Resolves a host alias through OpenSSH client configuration files, for the options the SSH transport needs.
 *
 * Follows readconf.c: files are read in order (user config, then system config); within them `Host` lines
 * switch matching on and off (patterns with `*`, `?` and `!` negation, matched case-insensitively against the
 * alias given on the command line); the first obtained value of an option wins, except IdentityFile, which
 * accumulates. `Include` takes paths relative to ~/.ssh (user files) or /etc/ssh (system files), with globs;
 * an Include inside a non-matching block reads nothing. Keywords are case-insensitive, `key value`,
 * `key=value` and quoted values are accepted, `#` starts a comment.
 *
 * Limitation: `Match` blocks are skipped (treated as not matching) except `Match all`; a warning says so.
 * ProxyJump/ProxyCommand are returned so the caller can say they are not supported.
 *
 * Pure: all file access goes through the injected `readFile`/`listDir`. This file is the resolver (matching,
 * precedence, Include, defaults); line splitting and value parsing are in ssh-config-parse.ts, whose public
 * functions are re-exported here for existing importers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { homedir, hostname, userInfo } from 'node:os';
import { posix } from 'node:path';
import { matchPattern } from './known-hosts.js';
import {
  parseFlag,
  parseInteger,
  parseStrict,
  percentExpand,
  splitArgs,
  splitConfigLine,
  tildeExpand,
  type StrictHostKeyChecking,
} from './ssh-config-parse.js';

export { percentExpand, splitArgs, splitConfigLine, type StrictHostKeyChecking } from './ssh-config-parse.js';

export interface SshConfigContext {
  /** Home directory of the local user (for `~` and `%d`). */
  homeDir: string;
  /** Local user name (for `%u`, and the default `User`). */
  localUser: string;
  /** Local host name (for `%l`); defaults to "localhost". */
  localHostName?: string;
  /** Local uid (for `%i`). */
  uid?: number;
  /** Returns a file's text, or undefined when it cannot be read. */
  readFile: (path: string) => string | undefined;
  /** Returns the entry names of a directory, or [] when it cannot be read (used for Include globs). */
  listDir?: (path: string) => string[];
}

export interface SshConfigFile {
  path: string;
  /** Base directory for relative Include paths: ~/.ssh for user files, /etc/ssh for system files. */
  kind: 'user' | 'system';
}

export interface ResolvedSshConfig {
  /** The alias that was resolved (what `Host` patterns were matched against). */
  alias: string;
  hostName: string;
  port: number;
  user: string;
  /** Expanded identity files, in the order ssh would try them. */
  identityFiles: string[];
  /** True when no IdentityFile was configured and these are OpenSSH's defaults (skip the missing ones). */
  identityFilesDefaulted: boolean;
  identitiesOnly: boolean;
  /** Expanded; empty when `UserKnownHostsFile none`. */
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  strictHostKeyChecking: StrictHostKeyChecking;
  /** HostKeyAlias: the known_hosts name used instead of the host (and port); undefined when not set. */
  hostKeyAlias?: string;
  /** Seconds; 0 disables. */
  serverAliveInterval: number;
  serverAliveCountMax: number;
  /** `IdentityAgent` as configured (expanded), undefined when not set; `none` disables the agent. */
  identityAgent?: string;
  /** Recorded, not supported by the transport: the caller should refuse or explain. */
  proxyJump?: string;
  proxyCommand?: string;
  /** Things we skipped or could not parse, with file:line. */
  warnings: string[];
  /** Config files actually read, in order (includes). */
  filesRead: string[];
}

const MAX_INCLUDE_DEPTH = 16;

const DEFAULT_IDENTITY_FILES = ['id_rsa', 'id_ecdsa', 'id_ecdsa_sk', 'id_ed25519', 'id_ed25519_sk', 'id_xmss', 'id_dsa'];

/** The context for the current process: real home, user and file system. */
export function defaultSshConfigContext(): SshConfigContext {
  const info = userInfo();
  return {
    homeDir: homedir(),
    localUser: info.username,
    localHostName: hostname(),
    uid: info.uid,
    readFile: (path) => {
      try {
        return readFileSync(path, 'utf8');
      } catch {
        return undefined;
      }
    },
    listDir: (path) => {
      try {
        return readdirSync(path);
      } catch {
        return [];
      }
    },
  };
}

/** Default files: `~/.ssh/config` then `/etc/ssh/ssh_config`, as ssh reads them. */
export function defaultSshConfigFiles(homeDir: string): SshConfigFile[] {
  return [
    { path: posix.join(homeDir, '.ssh', 'config'), kind: 'user' },
    { path: '/etc/ssh/ssh_config', kind: 'system' },
  ];
}

/** Expands a path pattern with `*`, `?` (and `[...]` treated literally) against the directory listing. */
function globPaths(pattern: string, listDir: (path: string) => string[]): string[] {
  if (!/[*?]/.test(pattern)) return [pattern];
  const absolute = pattern.startsWith('/');
  const segments = pattern.split('/').filter((s) => s !== '');
  let current: string[] = [absolute ? '/' : '.'];
  for (const seg of segments) {
    const next: string[] = [];
    for (const base of current) {
      if (/[*?]/.test(seg)) {
        const names = listDir(base)
          .filter((name) => (name.startsWith('.') ? seg.startsWith('.') : true))
          .filter((name) => matchPattern(name, seg))
          .sort();
        for (const name of names) next.push(posix.join(base, name));
      } else {
        next.push(posix.join(base, seg));
      }
    }
    current = next;
  }
  return current;
}

interface Collected {
  hostName?: string;
  port?: number;
  user?: string;
  identityFiles: string[];
  identitiesOnly?: boolean;
  userKnownHostsFiles?: string[];
  globalKnownHostsFiles?: string[];
  strictHostKeyChecking?: StrictHostKeyChecking;
  hostKeyAlias?: string;
  serverAliveInterval?: number;
  serverAliveCountMax?: number;
  identityAgent?: string;
  proxyJump?: string;
  proxyCommand?: string;
}

/**
 * Resolves `alias` through `files` (default: ~/.ssh/config then /etc/ssh/ssh_config). Missing files are
 * skipped; the result always has a host name, port and user (OpenSSH's defaults fill the gaps).
 */
export function resolveSshConfig(
  alias: string,
  ctx: SshConfigContext,
  files: readonly SshConfigFile[] = defaultSshConfigFiles(ctx.homeDir),
): ResolvedSshConfig {
  const host = alias.toLowerCase();
  const c: Collected = { identityFiles: [] };
  const warnings: string[] = [];
  const filesRead: string[] = [];
  const listDir = ctx.listDir ?? (() => []);

  const readConfig = (path: string, kind: SshConfigFile['kind'], state: { active: boolean }, neverMatch: boolean, depth: number): void => {
    if (depth > MAX_INCLUDE_DEPTH) {
      warnings.push(`${path}: too many nested Include directives; ignored`);
      return;
    }
    const text = ctx.readFile(path);
    if (text === undefined) return;
    filesRead.push(path);
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const where = `${path}:${i + 1}`;
      const parsed = splitConfigLine(lines[i] ?? '');
      if (!parsed) continue;
      const { keyword, rest } = parsed;
      let args: string[];
      try {
        args = splitArgs(rest);
      } catch {
        warnings.push(`${where}: cannot parse arguments`);
        continue;
      }
      const arg = args[0];
      switch (keyword) {
        case 'host': {
          state.active = false;
          if (neverMatch) break;
          for (const raw of args) {
            const negated = raw.startsWith('!');
            const pattern = (negated ? raw.slice(1) : raw).toLowerCase();
            if (matchPattern(host, pattern)) {
              if (negated) {
                state.active = false;
                break;
              }
              state.active = true;
            }
          }
          break;
        }
        case 'match': {
          if (!neverMatch && args.length === 1 && arg?.toLowerCase() === 'all') {
            state.active = true;
          } else {
            state.active = false;
            warnings.push(`${where}: "Match ${rest}" is not supported; the block is skipped`);
          }
          break;
        }
        case 'include': {
          const outerActive = state.active;
          for (const raw of args) {
            let p = tildeExpand(raw, ctx.homeDir);
            if (!p.startsWith('/')) p = posix.join(kind === 'user' ? posix.join(ctx.homeDir, '.ssh') : '/etc/ssh', p);
            for (const file of globPaths(p, listDir)) {
              readConfig(file, kind, state, neverMatch || !outerActive, depth + 1);
              state.active = outerActive;
            }
          }
          break;
        }
        default:
          if (state.active) apply(keyword, args, rest, where);
      }
    }
  };

  const apply = (keyword: string, args: string[], rest: string, where: string): void => {
    const arg = args[0];
    const bad = () => warnings.push(`${where}: bad value for ${keyword}: ${JSON.stringify(rest)}`);
    switch (keyword) {
      case 'hostname':
        if (arg === undefined) return void bad();
        c.hostName ??= percentExpand(arg, { h: alias });
        return;
      case 'port': {
        const port = parseInteger(arg, 1, 65535);
        if (port === undefined) return void bad();
        c.port ??= port;
        return;
      }
      case 'user':
        if (arg === undefined) return void bad();
        c.user ??= arg;
        return;
      case 'identityfile':
      case 'identityfile2':
        if (arg === undefined) return void bad();
        if (!c.identityFiles.includes(arg)) c.identityFiles.push(arg);
        return;
      case 'identitiesonly': {
        const v = parseFlag(arg);
        if (v === undefined) return void bad();
        c.identitiesOnly ??= v;
        return;
      }
      case 'userknownhostsfile':
        if (args.length === 0) return void bad();
        c.userKnownHostsFiles ??= args;
        return;
      case 'globalknownhostsfile':
        if (args.length === 0) return void bad();
        c.globalKnownHostsFiles ??= args;
        return;
      case 'stricthostkeychecking': {
        const v = parseStrict(arg);
        if (v === undefined) return void bad();
        c.strictHostKeyChecking ??= v;
        return;
      }
      case 'serveraliveinterval': {
        const v = parseInteger(arg, 0, 2_147_483);
        if (v === undefined) return void bad();
        c.serverAliveInterval ??= v;
        return;
      }
      case 'serveralivecountmax': {
        const v = parseInteger(arg, 0, 2_147_483_647);
        if (v === undefined) return void bad();
        c.serverAliveCountMax ??= v;
        return;
      }
      case 'identityagent':
        if (arg === undefined) return void bad();
        c.identityAgent ??= arg;
        return;
      case 'hostkeyalias':
        if (arg === undefined) return void bad();
        c.hostKeyAlias ??= arg;
        return;
      case 'proxyjump':
        if (arg === undefined) return void bad();
        c.proxyJump ??= arg;
        return;
      case 'proxycommand':
        if (rest === '') return void bad();
        c.proxyCommand ??= rest;
        return;
      default:
        return; // options the transport does not use
    }
  };

  for (const f of files) readConfig(f.path, f.kind, { active: true }, false, 0);

  const hostName = c.hostName ?? alias;
  const port = c.port ?? 22;
  const user = c.user ?? ctx.localUser;
  const tokens: Record<string, string> = {
    d: ctx.homeDir,
    u: ctx.localUser,
    l: ctx.localHostName ?? 'localhost',
    h: hostName,
    r: user,
    p: String(port),
    n: alias,
    i: String(ctx.uid ?? ''),
  };
  const expandPath = (p: string): string =>
    tildeExpand(percentExpand(p, tokens, (t) => warnings.push(`unsupported token ${t} in ${JSON.stringify(p)}; left as is`)), ctx.homeDir);

  const identityFilesDefaulted = c.identityFiles.length === 0;
  const identityFiles = identityFilesDefaulted
    ? DEFAULT_IDENTITY_FILES.map((f) => posix.join(ctx.homeDir, '.ssh', f))
    : c.identityFiles.map(expandPath);
  const ukh = c.userKnownHostsFiles ?? ['~/.ssh/known_hosts', '~/.ssh/known_hosts2'];
  const gkh = c.globalKnownHostsFiles ?? ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2'];
  const none = (list: string[]) => list.length === 1 && list[0]?.toLowerCase() === 'none';

  const result: ResolvedSshConfig = {
    alias,
    hostName,
    port,
    user,
    identityFiles,
    identityFilesDefaulted,
    identitiesOnly: c.identitiesOnly ?? false,
    userKnownHostsFiles: none(ukh) ? [] : ukh.map(expandPath),
    globalKnownHostsFiles: none(gkh) ? [] : gkh.map(expandPath),
    strictHostKeyChecking: c.strictHostKeyChecking ?? 'ask',
    serverAliveInterval: c.serverAliveInterval ?? 0,
    serverAliveCountMax: c.serverAliveCountMax ?? 3,
    warnings,
    filesRead,
  };
  if (c.identityAgent !== undefined) {
    result.identityAgent = c.identityAgent.toLowerCase() === 'none' ? 'none' : expandPath(c.identityAgent);
  }
  if (c.hostKeyAlias !== undefined) result.hostKeyAlias = c.hostKeyAlias;
  if (c.proxyJump !== undefined && c.proxyJump.toLowerCase() !== 'none') result.proxyJump = c.proxyJump;
  if (c.proxyCommand !== undefined && c.proxyCommand.toLowerCase() !== 'none') result.proxyCommand = c.proxyCommand;
  return result;
}
