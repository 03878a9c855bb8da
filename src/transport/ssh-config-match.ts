/**
 * What a `Host` or `Match` line selects, as readconf.c decides it, and the %-tokens ssh expands for a host.
 * `Host` patterns (`*`, `?`, `!`) match the name case-sensitively; `Match` takes host / originalhost
 * (case-insensitive), user, localuser, exec (run through the context's runner, tokens expanded), all, canonical
 * and final, each negatable with `!`. Path values (IdentityFile, CertificateFile, UserKnownHostsFile,
 * IdentityAgent) expand `~`, `~user`, %%, %C, %d, %h, %i, %k, %L, %l, %n, %p, %r, %u and `${ENV}`.
 */
import { createHash } from 'node:crypto';
import type { SshConfigContext } from './ssh-config-context.js';
import { percentExpand, strdelim, tildeExpand } from './ssh-config-parse.js';
import type { ConfigFail } from './ssh-config-read.js';
import { matchPattern, matchPatternList } from './ssh-pattern.js';

/** A `Match exec` line that was evaluated for this host (its command ran), and whether it matched. */
export interface MatchExecEvaluated {
  /** The command as run (tokens expanded). */
  command: string;
  /** `file:line` of the Match line. */
  where: string;
  matched: boolean;
}

/** What a `Match` line is evaluated against: the values obtained so far in this pass. */
export interface MatchSubject {
  /** What `Match host` and `%h` see: the alias, its HostName once one is set, or the HostName in the final pass. */
  host: string;
  /** The alias as given (`Match originalhost`, `%n`). */
  alias: string;
  /** The User obtained so far, else the local user. */
  user: string;
  /** The Port obtained so far, else 22. */
  port: number;
  /** HostKeyAlias as written, when set (`%k`). */
  hostKeyAlias?: string;
  /** True in the final pass (`Match final`, `Match canonical`). */
  final: boolean;
}

/** What evaluating a `Match` line tells the resolver besides its result. */
export interface MatchObserver {
  /** A `Match final` was seen: ssh makes the final pass. */
  wantFinal(): void;
  /** A `Match exec` command ran. */
  execEvaluated(evaluated: MatchExecEvaluated): void;
}

/** The host the values of a resolution are expanded for. */
export interface TokenTarget {
  alias: string;
  hostName: string;
  port: number;
  user: string;
  hostKeyAlias?: string;
}

/**
 * Whether a `Host` line selects `host`: some pattern matches and no negated one does (a negated match ends the
 * line at once). An empty pattern refuses the config.
 */
export function hostPatternsMatch(host: string, patterns: readonly string[], fail: ConfigFail): boolean {
  let active = false;
  for (const raw of patterns) {
    if (raw === '') fail('keyword host empty argument');
    const negated = raw.startsWith('!');
    if (matchPattern(host, negated ? raw.slice(1) : raw)) {
      if (negated) return false;
      active = true;
    }
  }
  return active;
}

/**
 * Whether a `Match` line's criteria hold for `subject` (readconf.c match_cfg_line): every criterion must, `all`
 * stands alone, and a `Match exec` command runs only while the earlier criteria held.
 */
export function evaluateMatch(
  criteria: string,
  subject: MatchSubject,
  ctx: SshConfigContext,
  where: string,
  observer: MatchObserver,
  fail: ConfigFail,
): boolean {
  let result = true;
  let attributes = 0;
  let cursor: string | null = criteria;
  const next = (): string | null => {
    if (cursor === null) return null;
    const d = strdelim(cursor);
    if (d === null) return (cursor = null);
    cursor = d.rest;
    return d.word;
  };
  const { host, user } = subject;
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
      if (attrib === 'final') observer.wantFinal();
      if (subject.final === negate) result = false;
      continue;
    }
    const arg = next();
    if (arg === null || arg === '' || arg.startsWith('#')) fail(`missing Match criteria for ${attrib}`);
    let matched: boolean;
    switch (attrib) {
      case 'host':
        matched = matchPatternList(host.toLowerCase(), arg, true) === 1;
        break;
      case 'originalhost':
        matched = matchPatternList(subject.alias.toLowerCase(), arg, true) === 1;
        break;
      case 'user':
        matched = matchPatternList(user, arg, false) === 1;
        break;
      case 'localuser':
        matched = matchPatternList(ctx.localUser, arg, false) === 1;
        break;
      case 'exec': {
        let command: string;
        try {
          command = percentExpand(arg, matchExecTokens(subject, ctx));
        } catch (e) {
          return fail((e as Error).message);
        }
        if (!result) continue; // ssh skips the command once an earlier criterion failed
        if (!ctx.runMatchExec) fail(`Match exec "${command}" needs a command runner, and none was given`);
        const status = ctx.runMatchExec(command);
        if (status === undefined) fail(`match exec '${command}' error`);
        matched = status === 0;
        observer.execEvaluated({ command, where, matched: matched !== negate });
        break;
      }
      default:
        return fail(`unsupported Match attribute ${attrib}`);
    }
    if (matched === negate) result = false;
  }
  if (attributes === 0) fail('one or more attributes required for Match');
  return result;
}

/** The tokens of a `Match exec` command: the values so far, `%k` the HostKeyAlias as written. */
function matchExecTokens(subject: MatchSubject, ctx: SshConfigContext): Record<string, string> {
  const localHost = ctx.localHostName ?? 'localhost';
  const { host, user } = subject;
  const port = String(subject.port);
  return {
    C: connectionHash(localHost, host, port, user),
    L: localHost.split('.')[0] as string,
    d: ctx.homeDir,
    h: host,
    k: subject.hostKeyAlias ?? host,
    l: localHost,
    n: subject.alias,
    p: port,
    r: user,
    u: ctx.localUser,
    i: String(ctx.uid ?? ''),
  };
}

/**
 * A path value (IdentityFile, CertificateFile, UserKnownHostsFile) expanded as ssh expands it for this host:
 * `~`, `~user`, the %-tokens and `${ENV}`. Throws SshSyntaxError for an unknown token or unset variable.
 */
export function expandConfigPath(path: string, r: TokenTarget, ctx: SshConfigContext): string {
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

/** SHA-1 of %l%h%p%r, as ssh's %C (readconf.c ssh_connection_hash). */
function connectionHash(localHost: string, host: string, port: string, user: string): string {
  return createHash('sha1')
    .update(localHost + host + port + user)
    .digest('hex');
}
