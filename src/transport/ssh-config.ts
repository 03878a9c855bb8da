/**
 * Resolves a host alias through OpenSSH client configuration files, for the options the SSH transport needs,
 * the way OpenSSH 9.2p1's `ssh` does it (readconf.c, ssh.c); test/transport/ssh-config-oracle.test.ts checks
 * it against the real `ssh -G` field by field.
 *
 * What it follows: files in order (user config, then system config); the first obtained value of an option
 * wins, IdentityFile accumulates (duplicates dropped). `Host` patterns (`*`, `?`, `!`) are matched
 * case-sensitively against the name as given; `Match` takes host / originalhost (case-insensitive), user,
 * localuser, exec (run through the injected runner, tokens expanded), all, canonical and final, each
 * negatable with `!`. `Match final` (or CanonicalizeHostname) makes a second pass in which Host patterns see
 * the resolved HostName, as ssh does. `Include` takes globs, relative paths (~/.ssh for user files, /etc/ssh
 * for system files), and refuses nesting deeper than 16. Values are validated where ssh validates them — in
 * every block, matching or not — and a config ssh refuses throws `SshConfigError` naming the file, line and
 * reason. HostName expands %h; IdentityFile, CertificateFile, UserKnownHostsFile and IdentityAgent expand `~`,
 * `~user`, %%, %C, %d, %h, %i, %k, %L, %l, %n, %p, %r, %u and `${ENV}`.
 *
 * Not done: CanonicalizeHostname's DNS look-ups (the name is kept; a warning says so); ssh's owner and mode
 * check of config files is done only when the context offers `statFile`.
 *
 * Pure: file access, environment, user database and `Match exec` go through the injected context.
 * Line splitting and value parsing are in ssh-config-parse.ts.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { FileRefusedError, readFileSafelySync } from '../util/read-file-safely.js';
import { homedir, hostname, userInfo } from 'node:os';
import { posix } from 'node:path';
import { OPENSSH_KEYWORDS } from './ssh-config-keywords.js';
import { matchPattern } from './ssh-pattern.js';
import {
  globSegmentMatch,
  isAddress,
  matchPatternList,
  parseFlag,
  parseInteger,
  parsePort,
  parseProxyJump,
  parseStrict,
  parseTime,
  percentExpand,
  splitArgs,
  splitConfigLine,
  SshSyntaxError,
  strdelim,
  tildeExpand,
  type StrictHostKeyChecking,
} from './ssh-config-parse.js';

export interface SshConfigContext {
  /** Home directory of the local user (for `~` and `%d`); ssh takes it from the password database. */
  homeDir: string;
  /** Local user name (for `%u`, `Match localuser` and the default `User`). */
  localUser: string;
  /** Local host name as gethostname(2) gives it (for `%l`, `%L`, `%C`); defaults to "localhost". */
  localHostName?: string;
  /** Local uid (for `%i`). */
  uid?: number;
  /** Returns a file's text, or undefined when it cannot be read; may throw FileRefusedError (a FIFO, a device). */
  readFile: (path: string) => string | undefined;
  /** Returns the entry names of a directory, or [] when it cannot be read (used for Include globs). */
  listDir?: (path: string) => string[];
  /** Environment for `${NAME}` and for `~` in Include (glob(3) takes it from $HOME). Default: none set. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Home directory of another user, for `~user` (ssh asks getpwnam). */
  userHome?: (name: string) => string | undefined;
  /** Port of a TCP service name, for `Port ssh` (ssh asks getservbyname). */
  servicePort?: (name: string) => number | undefined;
  /**
   * Runs a `Match exec` command through the shell, as ssh does; returns its exit status, or undefined when it
   * could not run or died of a signal (ssh then refuses the config). Without it, `Match exec` is refused.
   */
  runMatchExec?: (command: string) => number | undefined;
  /** Owner uid and mode of a file, for ssh's "Bad owner or permissions" check of ~/.ssh/config and includes. */
  statFile?: (path: string) => { uid: number; mode: number } | undefined;
}

export interface SshConfigFile {
  path: string;
  /** Base directory for relative Include paths: ~/.ssh for user files, /etc/ssh for system files. */
  kind: 'user' | 'system';
  /** True when a missing file is an error, as for `ssh -F FILE`. */
  required?: boolean;
  /** True when ssh checks the file's owner and mode (the default ~/.ssh/config; every included file). */
  checkPerm?: boolean;
}

/** A config that OpenSSH refuses (`ssh` exits 255): the file, line and reason. */
export class SshConfigError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
  ) {
    super(`${file}${line === undefined ? '' : ` line ${line}`}: ${reason}`);
    this.name = 'SshConfigError';
  }
}

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

/** A `Match exec` line that was evaluated for this host (its command ran), and whether it matched. */
export interface MatchExecEvaluated {
  /** The command as run (tokens expanded). */
  command: string;
  /** `file:line` of the Match line. */
  where: string;
  matched: boolean;
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

const MAX_INCLUDE_DEPTH = 16;
const MAX_IDENTITY_FILES = 100;
const MAX_HOSTS_FILES = 16;
const INT_MAX = 2_147_483_647;

const DEFAULT_IDENTITY_FILES = [
  'id_rsa',
  'id_ecdsa',
  'id_ecdsa_sk',
  'id_ed25519',
  'id_ed25519_sk',
  'id_xmss',
  'id_dsa',
];

function readTextOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * An ssh config file (or an Include'd one) as the default context reads it: undefined when it cannot be
 * opened, or is a directory, as ssh skips both (`Include inc.d` naming a directory resolves fine with the real
 * ssh: see the oracle test); a FIFO, device or oversized file throws FileRefusedError, which readConfig turns
 * into an SshConfigError naming the file (ssh itself would hang on a FIFO or read /dev/zero for ever).
 */
function readConfigFile(path: string): string | undefined {
  try {
    return readFileSafelySync(path, 'ssh config').toString('utf8');
  } catch (err) {
    if (err instanceof FileRefusedError && !/^is a directory/.test(err.reason)) throw err;
    return undefined;
  }
}

/** ctx.readFile with a refused file reported as ssh reports a bad config: by file. */
function readConfigText(ctx: SshConfigContext, path: string): string | undefined {
  try {
    return ctx.readFile(path);
  } catch (err) {
    if (err instanceof FileRefusedError) throw new SshConfigError(path, undefined, err.reason);
    throw err;
  }
}

/** `getpwnam`-like look-up in /etc/passwd (ssh would also ask NSS; local accounts are what matter here). */
function passwdHome(name: string): string | undefined {
  for (const line of (readTextOrUndefined('/etc/passwd') ?? '').split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields[5] !== undefined) return fields[5];
  }
  return undefined;
}

/** `getservbyname(name, "tcp")` from /etc/services. */
function servicesPort(name: string): number | undefined {
  for (const line of (readTextOrUndefined('/etc/services') ?? '').split('\n')) {
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    const m = /^(\d+)\/tcp$/.exec(words[1] ?? '');
    if (m && (words[0] === name || words.slice(2).includes(name))) return Number(m[1]);
  }
  return undefined;
}

/** Runs a `Match exec` command like ssh's execute_in_shell: $SHELL -c, stdin and stdout to /dev/null. */
export function runInShell(command: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const shell = env.SHELL || '/bin/sh';
  const r = spawnSync(shell, ['-c', command], { stdio: ['ignore', 'ignore', 'pipe'], env });
  return r.error || r.status === null ? undefined : r.status;
}

/**
 * The context for the current process: real user, host name, files, environment and shell. The home
 * directory honours $HOME (os.homedir) where ssh reads the password database; they agree whenever HOME is
 * the account's home, and tests rely on pointing HOME elsewhere.
 */
export function defaultSshConfigContext(): SshConfigContext {
  const info = userInfo();
  return {
    homeDir: homedir(),
    localUser: info.username,
    localHostName: hostname(),
    uid: info.uid,
    readFile: readConfigFile,
    listDir: (path) => {
      try {
        return readdirSync(path);
      } catch {
        return [];
      }
    },
    env: process.env,
    userHome: passwdHome,
    servicePort: servicesPort,
    runMatchExec: (command) => runInShell(command),
    statFile: (path) => {
      try {
        const st = statSync(path);
        return { uid: st.uid, mode: st.mode };
      } catch {
        return undefined;
      }
    },
  };
}

/** Default files: `~/.ssh/config` then `/etc/ssh/ssh_config`, as ssh reads them. */
export function defaultSshConfigFiles(homeDir: string): SshConfigFile[] {
  return [
    { path: posix.join(homeDir, '.ssh', 'config'), kind: 'user', checkPerm: true },
    { path: '/etc/ssh/ssh_config', kind: 'system' },
  ];
}

/** The files `ssh -F FILE` reads: only FILE, as a user file, which must exist. */
export function explicitSshConfigFiles(path: string): SshConfigFile[] {
  return [{ path, kind: 'user', required: true }];
}

const GLOB_MAGIC = /[*?[]/;

/** glob(3) without GLOB_NOCHECK: existing paths matching `pattern`, sorted per directory; dotfiles need a dot. */
function globPaths(pattern: string, ctx: SshConfigContext): string[] {
  if (!GLOB_MAGIC.test(pattern)) return readConfigText(ctx, pattern) === undefined ? [] : [pattern];
  const listDir = ctx.listDir ?? (() => []);
  const segments = pattern.split('/');
  let current = [segments[0] === '' ? '/' : '.'];
  for (const seg of segments.slice(segments[0] === '' ? 1 : 0)) {
    if (seg === '') continue;
    const next: string[] = [];
    for (const base of current) {
      if (GLOB_MAGIC.test(seg)) {
        const names = listDir(base)
          .filter((name) => !name.startsWith('.') || seg.startsWith('.'))
          .filter((name) => globSegmentMatch(name, seg))
          .sort();
        for (const name of names) next.push(posix.join(base, name));
      } else {
        next.push(posix.join(base, seg));
      }
    }
    current = next;
  }
  return current.filter((p) => readConfigText(ctx, p) !== undefined);
}

interface Sourced<T> {
  value: T;
  where: string;
}

interface Collected {
  hostName?: Sourced<string>;
  port?: Sourced<number>;
  user?: Sourced<string>;
  identityFiles: Sourced<string>[];
  certificateFiles: Sourced<string>[];
  identitiesOnly?: Sourced<boolean>;
  userKnownHostsFiles?: Sourced<string[]>;
  globalKnownHostsFiles?: Sourced<string[]>;
  strictHostKeyChecking?: Sourced<StrictHostKeyChecking>;
  serverAliveInterval?: Sourced<number>;
  serverAliveCountMax?: Sourced<number>;
  connectTimeout?: Sourced<number>;
  identityAgent?: Sourced<string>;
  hostKeyAlias?: Sourced<string>;
  ignoreUnknown?: Sourced<string>;
  canonicalizeHostname?: Sourced<'no' | 'yes' | 'always'>;
  proxyJump?: Sourced<string>;
  proxyCommand?: Sourced<string>;
  gssapiAuthentication?: Sourced<boolean>;
  pkcs11Provider?: Sourced<string>;
}

interface Pass {
  /** What Host patterns and `Match host` see: the alias in the first pass, the HostName in the final one. */
  host: string;
  final: boolean;
}

type Settable = Exclude<keyof Collected, 'identityFiles' | 'certificateFiles'>;

/** SHA-1 of %l%h%p%r, as ssh's %C (readconf.c ssh_connection_hash). */
function connectionHash(localHost: string, host: string, port: string, user: string): string {
  return createHash('sha1')
    .update(localHost + host + port + user)
    .digest('hex');
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
  const c: Collected = { identityFiles: [], certificateFiles: [] };
  const matchExec: MatchExecEvaluated[] = [];
  const warnings: string[] = [];
  const filesRead: string[] = [];
  const localHost = ctx.localHostName ?? 'localhost';
  const uid = String(ctx.uid ?? '');
  let wantFinal = false;

  const set = <K extends Settable>(key: K, value: NonNullable<Collected[K]>['value'], where: string): void => {
    if (c[key] === undefined) (c as unknown as Record<string, Sourced<unknown>>)[key] = { value, where };
  };

  /** The host `Match host` and `%h` in Match exec see at this point (readconf.c match_cfg_line). */
  const hostSoFar = (pass: Pass): string => {
    if (pass.final) return c.hostName?.value ?? pass.host;
    const configured = c.hostName;
    if (configured === undefined) return alias;
    return expandAt(configured.where, () => percentExpand(configured.value, { h: alias }));
  };

  const evaluateMatch = (rest: string, pass: Pass, matchWhere: string, fail: (reason: string) => never): boolean => {
    let result = true;
    let attributes = 0;
    let cursor: string | null = rest;
    const next = (): string | null => {
      if (cursor === null) return null;
      const d = strdelim(cursor);
      if (d === null) return (cursor = null);
      cursor = d.rest;
      return d.word;
    };
    const host = hostSoFar(pass);
    for (let word = next(); word !== null && word !== ''; word = next()) {
      if (word.startsWith('#')) break;
      const negate = word.startsWith('!');
      const attrib = (negate ? word.slice(1) : word).toLowerCase();
      if (attrib === 'all') {
        const after = next();
        if (attributes > 1 || (after !== null && after !== '' && !after.startsWith('#'))) {
          fail(`'${word}' cannot be combined with other Match attributes`);
        }
        if (result) result = !negate;
        return result;
      }
      attributes++;
      if (attrib === 'canonical' || attrib === 'final') {
        if (attrib === 'final') wantFinal = true;
        if (pass.final === negate) result = false;
        continue;
      }
      const arg = next();
      if (arg === null || arg === '' || arg.startsWith('#')) fail(`missing Match criteria for ${attrib}`);
      const user = c.user?.value ?? ctx.localUser;
      let matched: boolean;
      switch (attrib) {
        case 'host':
          matched = matchPatternList(host.toLowerCase(), arg, true) === 1;
          break;
        case 'originalhost':
          matched = matchPatternList(alias.toLowerCase(), arg, true) === 1;
          break;
        case 'user':
          matched = matchPatternList(user, arg, false) === 1;
          break;
        case 'localuser':
          matched = matchPatternList(ctx.localUser, arg, false) === 1;
          break;
        case 'exec': {
          const port = String(c.port?.value ?? 22);
          const tokens = {
            C: connectionHash(localHost, host, port, user),
            L: localHost.split('.')[0] as string,
            d: ctx.homeDir,
            h: host,
            k: c.hostKeyAlias?.value ?? host,
            l: localHost,
            n: alias,
            p: port,
            r: user,
            u: ctx.localUser,
            i: uid,
          };
          let command: string;
          try {
            command = percentExpand(arg, tokens);
          } catch (e) {
            return fail((e as Error).message);
          }
          if (!result) continue; // ssh skips the command once an earlier criterion failed
          if (!ctx.runMatchExec) fail(`Match exec "${command}" needs a command runner, and none was given`);
          const status = ctx.runMatchExec(command);
          if (status === undefined) fail(`match exec '${command}' error`);
          matched = status === 0;
          matchExec.push({ command, where: matchWhere, matched: matched !== negate });
          break;
        }
        default:
          return fail(`unsupported Match attribute ${attrib}`);
      }
      if (matched === negate) result = false;
    }
    if (attributes === 0) fail('one or more attributes required for Match');
    return result;
  };

  const readConfig = (
    file: SshConfigFile,
    pass: Pass,
    state: { active: boolean },
    neverMatch: boolean,
    depth: number,
    includedAt?: string,
  ): void => {
    if (depth > MAX_INCLUDE_DEPTH) {
      const [inFile, inLine] = splitWhere(includedAt ?? file.path);
      throw new SshConfigError(inFile, inLine, 'Too many recursive configuration includes');
    }
    const text = readConfigText(ctx, file.path);
    if (text === undefined) {
      if (file.required) throw new SshConfigError(file.path, undefined, "Can't open user config file");
      return;
    }
    if (file.checkPerm && ctx.statFile) {
      const st = ctx.statFile(file.path);
      if (st && ((st.uid !== 0 && st.uid !== ctx.uid) || (st.mode & 0o022) !== 0)) {
        throw new SshConfigError(file.path, undefined, `Bad owner or permissions on ${file.path}`);
      }
    }
    filesRead.push(file.path);
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const where = `${file.path}:${i + 1}`;
      const fail = (reason: string): never => {
        throw new SshConfigError(file.path, i + 1, reason);
      };
      const parsed = splitConfigLine(lines[i] ?? '');
      if (!parsed) continue;
      const { keyword, rest } = parsed;
      if (rest === '') fail(`no argument after keyword "${keyword}"`);
      if (!OPENSSH_KEYWORDS.has(keyword)) {
        const ignored = c.ignoreUnknown !== undefined && matchPatternList(keyword, c.ignoreUnknown.value, true) === 1;
        if (!ignored) fail(`Bad configuration option: ${keyword}`);
        continue;
      }
      let args: string[];
      try {
        args = splitArgs(rest);
      } catch {
        return fail('invalid quotes');
      }
      const active = state.active;
      switch (keyword) {
        case 'host': {
          state.active = false;
          for (const raw of args) {
            if (raw === '') fail('keyword host empty argument');
            if (neverMatch) break;
            const negated = raw.startsWith('!');
            if (matchPattern(pass.host, negated ? raw.slice(1) : raw)) {
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
          const value = evaluateMatch(rest, pass, where, fail);
          state.active = neverMatch ? false : value;
          break;
        }
        case 'include': {
          for (const raw of args) {
            if (raw === '') fail('keyword include empty argument');
            if (raw.startsWith('~') && file.kind !== 'user') fail(`bad include path ${raw}`);
            const anchored =
              raw.startsWith('/') || raw.startsWith('~')
                ? raw
                : `${file.kind === 'user' ? '~/.ssh' : '/etc/ssh'}/${raw}`;
            const pattern = globTilde(anchored, ctx);
            for (const path of globPaths(pattern, ctx)) {
              const sub: SshConfigFile = { path, kind: file.kind, checkPerm: true };
              readConfig(sub, pass, state, neverMatch || !active, depth + 1, where);
              state.active = active; // a Match inside an include does not change the including file's state
            }
          }
          break;
        }
        default:
          applyOption(keyword, args, rest, where, active, fail);
      }
    }
  };

  const applyOption = (
    keyword: string,
    args: string[],
    rest: string,
    where: string,
    active: boolean,
    fail: (reason: string) => never,
  ): void => {
    const arg = args[0];
    const single = (): string => {
      if (arg === undefined || arg === '') fail('missing argument');
      if (args.length > 1) fail(`keyword ${keyword} extra arguments at end of line`);
      return arg as string;
    };
    const time = (key: 'serverAliveInterval' | 'connectTimeout'): void => {
      if (arg === undefined || arg === '') fail('missing time value');
      if (args.length > 1) fail(`keyword ${keyword} extra arguments at end of line`);
      const seconds = arg === 'none' ? -1 : parseTime(arg as string);
      if (seconds === undefined) fail(`invalid time value "${arg}"`);
      if (active && seconds !== -1) set(key, seconds as number, where); // `none` leaves it unset, as in ssh
    };
    const hostsFiles = (key: 'userKnownHostsFiles' | 'globalKnownHostsFiles'): void => {
      args.forEach((a, i) => {
        if (a === '') fail(`keyword ${keyword} empty argument`);
        if (a.toLowerCase() === 'none' && (i > 0 || args.length > 1)) {
          fail(`keyword ${keyword} "none" argument must appear alone`);
        }
      });
      if (args.length > MAX_HOSTS_FILES && active && c[key] === undefined) fail(`too many ${keyword} entries`);
      if (active && args.length > 0) set(key, args, where);
    };
    switch (keyword) {
      case 'hostname': {
        const v = single();
        if (active) set('hostName', v, where);
        return;
      }
      case 'user': {
        const v = single();
        if (active) set('user', v, where);
        return;
      }
      case 'hostkeyalias': {
        const v = single();
        if (active) set('hostKeyAlias', v, where);
        return;
      }
      case 'identityagent': {
        const v = single();
        if (active) set('identityAgent', v, where);
        return;
      }
      case 'ignoreunknown': {
        const v = single();
        if (active) set('ignoreUnknown', v, where);
        return;
      }
      case 'port': {
        const v = single();
        const port = parsePort(v, ctx.servicePort);
        if (port === undefined) fail(`Bad port '${v}'`);
        if (active) set('port', port as number, where);
        return;
      }
      case 'identityfile':
      case 'identityfile2':
      case 'certificatefile': {
        const v = single();
        if (!active) return;
        const cert = keyword === 'certificatefile';
        const list = cert ? c.certificateFiles : c.identityFiles;
        if (list.length >= MAX_IDENTITY_FILES) {
          fail(`too many ${cert ? 'certificate' : 'identity'} files (max ${MAX_IDENTITY_FILES})`);
        }
        if (!list.some((f) => f.value === v)) list.push({ value: v, where });
        return;
      }
      case 'pkcs11provider': {
        const v = single();
        if (active) set('pkcs11Provider', v, where);
        return;
      }
      case 'identitiesonly':
      case 'gssapiauthentication': {
        const v = parseFlag(single());
        if (v === undefined) fail(`unsupported option "${arg}"`);
        if (active) set(keyword === 'identitiesonly' ? 'identitiesOnly' : 'gssapiAuthentication', v as boolean, where);
        return;
      }
      case 'stricthostkeychecking': {
        const v = parseStrict(single());
        if (v === undefined) fail(`unsupported option "${arg}"`);
        if (active) set('strictHostKeyChecking', v as StrictHostKeyChecking, where);
        return;
      }
      case 'canonicalizehostname': {
        const raw = single().toLowerCase();
        const flag = parseFlag(raw);
        const v = raw === 'always' ? 'always' : flag === undefined ? undefined : flag ? 'yes' : 'no';
        if (v === undefined) fail(`unsupported option "${arg}"`);
        if (active) set('canonicalizeHostname', v as 'no' | 'yes' | 'always', where);
        return;
      }
      case 'userknownhostsfile':
        return hostsFiles('userKnownHostsFiles');
      case 'globalknownhostsfile':
        return hostsFiles('globalKnownHostsFiles');
      case 'serveraliveinterval':
        return time('serverAliveInterval');
      case 'connecttimeout':
        return time('connectTimeout');
      case 'serveralivecountmax': {
        if (arg === undefined || arg === '') fail('integer value missing');
        if (args.length > 1) fail(`keyword ${keyword} extra arguments at end of line`);
        const v = parseInteger(arg, 0, INT_MAX);
        if (v === undefined) fail(`integer value ${JSON.stringify(arg)} is invalid`);
        if (active) set('serverAliveCountMax', v as number, where);
        return;
      }
      case 'proxycommand': {
        const command = rest.replace(/^[ \t\r\n=]+/, '');
        if (active && c.proxyJump === undefined) set('proxyCommand', command, where);
        return;
      }
      case 'proxyjump': {
        const value = rest.replace(/^[ \t\r\n=]+/, '');
        const jump = parseProxyJump(value, ctx.servicePort);
        if (jump === undefined) fail(`Invalid ProxyJump "${value}"`);
        if (active && c.proxyCommand === undefined && c.proxyJump === undefined) {
          set('proxyJump', jump!.none ? 'none' : jump!.text, where);
          if (!jump!.none) set('proxyCommand', 'none', where);
        }
        return;
      }
      default:
        return; // a known option the transport does not use
    }
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
    for (const f of files) readConfig(f, pass, { active: true }, false, 0);
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
 * A path value (IdentityFile, CertificateFile, UserKnownHostsFile) expanded as ssh expands it for this host:
 * `~`, `~user`, the %-tokens and `${ENV}`. Throws SshSyntaxError for an unknown token or unset variable.
 */
export function expandConfigPath(
  path: string,
  r: Pick<ResolvedSshConfig, 'alias' | 'hostName' | 'port' | 'user' | 'hostKeyAlias'>,
  ctx: SshConfigContext,
): string {
  const localHost = ctx.localHostName ?? 'localhost';
  const tokens: Record<string, string> = {
    C: connectionHash(localHost, r.hostName, String(r.port), r.user),
    L: localHost.split('.')[0] as string,
    i: String(ctx.uid ?? ''),
    k: r.hostKeyAlias?.toLowerCase() ?? r.alias,
    l: localHost,
    n: r.alias,
    p: String(r.port),
    d: ctx.homeDir,
    h: r.hostName,
    r: r.user,
    u: ctx.localUser,
  };
  return percentExpand(tildeExpand(path, ctx.homeDir, ctx.userHome), tokens, ctx.env ?? {});
}

/**
 * ssh refuses a host argument that could smuggle shell syntax into %-tokens (ssh_valid_hostname, in
 * Debian's 9.2p1 as a security fix): a leading `-`, quotes, `$`, `\\`, `;&<>|(){},`, spaces and controls.
 */
function validHostArgument(name: string): boolean {
  return !name.startsWith('-') && !/[\s'`"$\\;&<>|(){},\x00-\x1f\x7f]/.test(name);
}

/** Include's glob(3) GLOB_TILDE: `~` is $HOME (else the home directory), `~user` that user's home. */
function globTilde(pattern: string, ctx: SshConfigContext): string {
  if (!pattern.startsWith('~')) return pattern;
  const slash = pattern.indexOf('/');
  const name = slash < 0 ? pattern.slice(1) : pattern.slice(1, slash);
  const tail = slash < 0 ? '' : pattern.slice(slash);
  const home = name === '' ? (ctx.env?.HOME ?? ctx.homeDir) : ctx.userHome?.(name);
  return home === undefined ? pattern : `${home}${tail}`;
}

/** Splits "file:line" (the file may contain colons). */
function splitWhere(where: string): [string, number | undefined] {
  const m = /^(.*):(\d+)$/.exec(where);
  return m ? [m[1] as string, Number(m[2])] : [where, undefined];
}
