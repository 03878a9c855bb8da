/**
 * What the ssh_config resolver reads the world through (ssh-config.ts is pure): files, directory listings, the
 * environment, the user and service databases and `Match exec`'s shell, as an injected context; the context of
 * the current process; and the config files ssh reads by default or with `-F`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir, hostname, userInfo } from 'node:os';
import { posix } from 'node:path';
import { FileRefusedError, readFileSafelySync } from '../util/read-file-safely.js';

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
 * ssh: see the oracle test); a FIFO, device or oversized file throws FileRefusedError, which the reader
 * (ssh-config-read.ts) turns into an SshConfigError naming the file (ssh itself would hang on a FIFO or read /dev/zero for ever).
 */
function readConfigFile(path: string): string | undefined {
  try {
    return readFileSafelySync(path, 'ssh config').toString('utf8');
  } catch (err) {
    if (err instanceof FileRefusedError && !/^is a directory/.test(err.reason)) throw err;
    return undefined;
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
