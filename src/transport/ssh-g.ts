/**
 * `ssh -G` as the source of truth for resolution where OpenSSH is installed (issue 17): the built-in resolver
 * (ssh-config.ts) still runs — it knows which line decided each value and works where there is no `ssh` — and
 * where the two disagree the real ssh's value wins, with a warning naming the field, both values and the line
 * the built-in resolver took its value from. `ssh -G` runs `Match exec` commands, as `ssh` itself does (so a
 * Match exec command runs once for each resolver). ssh takes `~` and ~/.ssh/config from the password database:
 * with HOME pointed elsewhere (tests, a sandbox) it would read other files than the built-in resolver, so it
 * is not consulted then.
 */
import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { SshSyntaxError } from './ssh-config-parse.js';
import { resolveSshConfig, type ResolvedSshConfig } from './ssh-config.js';
import { defaultSshConfigFiles, explicitSshConfigFiles, type SshConfigContext } from './ssh-config-context.js';
import { expandConfigPath } from './ssh-config-match.js';
import { SshConfigError } from './ssh-config-read.js';
import type { StrictHostKeyChecking } from './ssh-config-parse.js';

/** The source recorded for a value that `ssh -G` decided against the built-in resolver. */
export const SSH_G_SOURCE = 'ssh -G';

const SSH_G_TIMEOUT_MS = 10_000;

export interface SshGOptions {
  /** Like `ssh -F FILE`: only this file is read. */
  configFile?: string;
  /** The ssh client to run (default `ssh` from PATH). */
  sshBinary?: string;
  /** Environment of the ssh child (PATH, SHELL for Match exec); default process.env. */
  env?: NodeJS.ProcessEnv;
  /**
   * The home directory ssh will use: it takes `~` and ~/.ssh/config from the password database, not $HOME.
   * Default: the account's. When the context's homeDir differs, ssh would read other files: not consulted.
   */
  accountHome?: string;
}

/** `keyword value` lines of `ssh -G`, values per keyword in order (identityfile and others repeat). */
export type SshGValues = ReadonlyMap<string, readonly string[]>;

export type SshGRun = { ran: true; values: SshGValues } | { ran: false; why: string };

export function parseSshG(stdout: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const line of stdout.split('\n')) {
    const space = line.indexOf(' ');
    if (space <= 0) continue;
    const key = line.slice(0, space).toLowerCase();
    values.set(key, [...(values.get(key) ?? []), line.slice(space + 1)]);
  }
  return values;
}

/**
 * Runs `ssh -G [-F file] alias` (argv, no shell). `{ ran: false }` when there is no ssh client; a config ssh
 * refuses (non-zero exit) throws SshConfigError with the file and line from its stderr.
 */
export function runSshG(alias: string, options: SshGOptions = {}): SshGRun {
  // ssh -G takes no `--`: an alias starting with '-' would be read as an option.
  if (alias.startsWith('-')) {
    throw new SshConfigError(`host ${JSON.stringify(alias)}`, undefined, 'hostname contains invalid characters');
  }
  const binary = options.sshBinary ?? 'ssh';
  const argv = ['-G', ...(options.configFile === undefined ? [] : ['-F', options.configFile]), alias];
  const r = spawnSync(binary, argv, {
    env: options.env ?? process.env,
    input: '',
    encoding: 'utf8',
    timeout: SSH_G_TIMEOUT_MS,
    maxBuffer: 4 * 1024 * 1024,
  });
  if (r.error) {
    if ((r.error as NodeJS.ErrnoException).code === 'ENOENT') return { ran: false, why: `no ${binary} on PATH` };
    throw new SshConfigError(`${binary} -G ${alias}`, undefined, r.error.message);
  }
  // OpenSSH refuses a config with exit 255; another status is a client that is not OpenSSH's (no -G).
  if (r.status === 255) throw sshGRefusal(binary, alias, r.status, r.stderr);
  if (r.status !== 0) {
    return { ran: false, why: `${binary} -G exited ${r.status ?? 'on a signal'}: not OpenSSH's ssh?` };
  }
  return { ran: true, values: parseSshG(r.stdout) };
}

/** ssh's refusal as the SshConfigError the built-in resolver throws: `FILE line N: reason`. */
function sshGRefusal(binary: string, alias: string, status: number | null, stderr: string): SshConfigError {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  for (const line of lines) {
    const m = /^(\/\S*?):? line (\d+): (.*?)\.?$/.exec(line);
    if (m) return new SshConfigError(m[1] as string, Number(m[2]), m[3] as string);
  }
  const reason = lines.find((l) => !/^Pseudo-terminal/.test(l)) ?? `exit ${status ?? 'signal'}`;
  return new SshConfigError(`${binary} -G ${alias}`, undefined, `${reason} (exit ${status ?? 'signal'})`);
}

const STRICT_FROM_SSH_G: Record<string, StrictHostKeyChecking> = {
  true: 'yes',
  yes: 'yes',
  false: 'no',
  no: 'no',
  ask: 'ask',
  'accept-new': 'accept-new',
};

type Comparable = string | number | boolean | undefined | readonly string[];

/** One compared field: how to read ssh's value, our value, and how to take ssh's. */
interface FieldMap {
  keyword: string;
  field: keyof ResolvedSshConfig['sources'];
  ours: (r: ResolvedSshConfig) => Comparable;
  theirs: (v: readonly string[] | undefined, r: ResolvedSshConfig, expand: (p: string) => string) => Comparable;
  take: (r: ResolvedSshConfig, value: Comparable) => void;
}

const first = (v: readonly string[] | undefined): string | undefined => v?.[0];
const unlessNone = (v: string | undefined): string | undefined => (v === undefined || v === 'none' ? undefined : v);
const words = (v: string | undefined): string[] => (v === undefined || v === 'none' ? [] : v.split(' '));
const setOptional = <K extends 'proxyJump' | 'proxyCommand' | 'pkcs11Provider' | 'hostKeyAlias' | 'connectTimeout'>(
  r: ResolvedSshConfig,
  key: K,
  value: ResolvedSshConfig[K] | undefined,
): void => {
  if (value === undefined) delete r[key];
  else r[key] = value;
};

const FIELDS: readonly FieldMap[] = [
  {
    keyword: 'hostname',
    field: 'hostName',
    ours: (r) => r.hostName,
    theirs: first,
    take: (r, v) => (r.hostName = v as string),
  },
  {
    keyword: 'port',
    field: 'port',
    ours: (r) => r.port,
    theirs: (v) => Number(first(v)),
    take: (r, v) => (r.port = v as number),
  },
  { keyword: 'user', field: 'user', ours: (r) => r.user, theirs: first, take: (r, v) => (r.user = v as string) },
  {
    // ssh -G prints IdentityFile as configured: compare those, expand ssh's when it wins.
    keyword: 'identityfile',
    field: 'identityFiles',
    ours: (r) => r.identityFilesConfigured,
    theirs: (v) => v ?? [],
    take: (r, v) => {
      r.identityFilesConfigured = [...(v as string[])];
      r.identityFilesDefaulted = false;
    },
  },
  {
    keyword: 'certificatefile',
    field: 'certificateFiles',
    ours: (r) => r.certificateFiles,
    // ssh has no `none` for CertificateFile: `ssh -v` shows it loading a file by that name.
    theirs: (v, _r, expand) => (v ?? []).map(expand),
    take: (r, v) => (r.certificateFiles = [...(v as string[])]),
  },
  {
    keyword: 'userknownhostsfile',
    field: 'userKnownHostsFiles',
    ours: (r) => r.userKnownHostsFiles,
    theirs: (v) => words(first(v)),
    take: (r, v) => (r.userKnownHostsFiles = [...(v as string[])]),
  },
  {
    keyword: 'globalknownhostsfile',
    field: 'globalKnownHostsFiles',
    ours: (r) => r.globalKnownHostsFiles,
    theirs: (v) => words(first(v)),
    take: (r, v) => (r.globalKnownHostsFiles = [...(v as string[])]),
  },
  {
    keyword: 'stricthostkeychecking',
    field: 'strictHostKeyChecking',
    ours: (r) => r.strictHostKeyChecking,
    theirs: (v) => STRICT_FROM_SSH_G[first(v) ?? ''] ?? first(v),
    take: (r, v) => (r.strictHostKeyChecking = v as StrictHostKeyChecking),
  },
  {
    keyword: 'identitiesonly',
    field: 'identitiesOnly',
    ours: (r) => r.identitiesOnly,
    theirs: (v) => first(v) === 'yes',
    take: (r, v) => (r.identitiesOnly = v as boolean),
  },
  {
    keyword: 'serveraliveinterval',
    field: 'serverAliveInterval',
    ours: (r) => r.serverAliveInterval,
    theirs: (v) => Number(first(v) ?? 0),
    take: (r, v) => (r.serverAliveInterval = v as number),
  },
  {
    keyword: 'serveralivecountmax',
    field: 'serverAliveCountMax',
    ours: (r) => r.serverAliveCountMax,
    theirs: (v) => Number(first(v) ?? 3),
    take: (r, v) => (r.serverAliveCountMax = v as number),
  },
  {
    keyword: 'connecttimeout',
    field: 'connectTimeout',
    ours: (r) => r.connectTimeout,
    theirs: (v) => (unlessNone(first(v)) === undefined ? undefined : Number(first(v))),
    take: (r, v) => setOptional(r, 'connectTimeout', v as number | undefined),
  },
  {
    keyword: 'proxyjump',
    field: 'proxyJump',
    ours: (r) => r.proxyJump,
    theirs: (v) => unlessNone(first(v)),
    take: (r, v) => setOptional(r, 'proxyJump', v as string | undefined),
  },
  {
    keyword: 'proxycommand',
    field: 'proxyCommand',
    ours: (r) => r.proxyCommand,
    theirs: (v) => unlessNone(first(v)),
    take: (r, v) => setOptional(r, 'proxyCommand', v as string | undefined),
  },
  {
    keyword: 'gssapiauthentication',
    field: 'gssapiAuthentication',
    ours: (r) => r.gssapiAuthentication,
    theirs: (v) => first(v) === 'yes',
    take: (r, v) => (r.gssapiAuthentication = v as boolean),
  },
  {
    keyword: 'pkcs11provider',
    field: 'pkcs11Provider',
    ours: (r) => r.pkcs11Provider,
    theirs: (v) => unlessNone(first(v)),
    take: (r, v) => setOptional(r, 'pkcs11Provider', v as string | undefined),
  },
];

const show = (v: Comparable): string => (v === undefined ? '(unset)' : Array.isArray(v) ? v.join(' ') : String(v));
const sourceText = (s: string | string[]): string => (Array.isArray(s) ? [...new Set(s)].join(', ') || 'default' : s);

/**
 * `ours` with every value where `ssh -G` disagrees replaced by ssh's, its source set to "ssh -G" and a warning
 * per field: "ssh -G disagrees on port: ssh 2222, built-in 22 (from FILE:LINE); ssh's value is used".
 */
export function reconcileWithSshG(
  ours: ResolvedSshConfig,
  values: SshGValues,
  ctx: SshConfigContext,
): ResolvedSshConfig {
  const r: ResolvedSshConfig = {
    ...ours,
    sources: { ...ours.sources },
    warnings: [...ours.warnings],
  };
  for (const f of FIELDS) {
    const expand = (p: string): string => {
      try {
        return expandConfigPath(p, r, ctx);
      } catch (e) {
        if (e instanceof SshSyntaxError) return p;
        throw e;
      }
    };
    const mine = f.ours(r);
    const theirs = f.theirs(values.get(f.keyword), r, expand);
    if (JSON.stringify(mine) === JSON.stringify(theirs)) continue;
    r.warnings.push(
      `ssh -G disagrees on ${f.field}: ssh ${show(theirs)}, built-in ${show(mine)} ` +
        `(from ${sourceText(ours.sources[f.field])}); ssh's value is used`,
    );
    f.take(r, theirs);
    const sources = r.sources as unknown as Record<string, string | string[]>;
    sources[f.field] = Array.isArray(theirs) ? theirs.map(() => SSH_G_SOURCE) : SSH_G_SOURCE;
    if (f.field === 'identityFiles') {
      r.identityFiles = r.identityFilesConfigured.filter((p) => p.toLowerCase() !== 'none').map(expand);
    }
  }
  return r;
}

export interface ResolvedThroughSsh {
  resolved: ResolvedSshConfig;
  /** Who had the last word: the real ssh, or the built-in resolver alone. */
  by: 'ssh -G' | 'built-in';
  /** Why ssh -G was not consulted, when it was not. */
  note?: string;
}

/**
 * Resolves `alias` with the built-in resolver and, where OpenSSH is installed, checks it against `ssh -G`
 * (ssh's values win). Throws SshConfigError where ssh (or, without ssh, the built-in resolver) refuses.
 */
export function resolveThroughSsh(alias: string, ctx: SshConfigContext, options: SshGOptions = {}): ResolvedThroughSsh {
  const files =
    options.configFile === undefined ? defaultSshConfigFiles(ctx.homeDir) : explicitSshConfigFiles(options.configFile);
  let ours: ResolvedSshConfig | SshConfigError;
  try {
    ours = resolveSshConfig(alias, ctx, files);
  } catch (e) {
    if (!(e instanceof SshConfigError)) throw e;
    ours = e;
  }
  const builtIn = (note: string): ResolvedThroughSsh => {
    if (ours instanceof SshConfigError) throw ours;
    return { resolved: ours, by: 'built-in', note };
  };
  const accountHome = options.accountHome ?? userInfo().homedir;
  if (ctx.homeDir !== accountHome) {
    return builtIn(`ssh -G not consulted: HOME ${ctx.homeDir} is not the account's home ${accountHome}`);
  }
  let run: SshGRun;
  try {
    run = runSshG(alias, options);
  } catch (e) {
    // Both refuse: the built-in error, whose file and line the oracle test holds to ssh's.
    if (e instanceof SshConfigError && ours instanceof SshConfigError) throw ours;
    throw e;
  }
  if (!run.ran) return builtIn(`ssh -G not consulted (${run.why}): the built-in resolver alone`);
  if (ours instanceof SshConfigError) {
    // ssh accepts what the built-in resolver refuses: start from OpenSSH's defaults and take ssh's values.
    const base = resolveSshConfig(alias, { ...ctx, readFile: () => undefined }, []);
    const resolved = reconcileWithSshG(base, run.values, ctx);
    resolved.warnings.unshift(`built-in resolver refused the config (${ours.message}); ssh -G accepted it`);
    return { resolved, by: 'ssh -G' };
  }
  return { resolved: reconcileWithSshG(ours, run.values, ctx), by: 'ssh -G' };
}
