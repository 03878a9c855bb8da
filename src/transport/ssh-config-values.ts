/**
 * The values of the options the transport reads, as one pass over the config obtains them: each value checked
 * where ssh checks it (in every block, matching or not, so a config ssh refuses is refused here too), and the
 * first obtained value of an option kept with the line that set it; IdentityFile and CertificateFile accumulate
 * (duplicates dropped). ssh-config.ts fills the gaps with OpenSSH's defaults.
 */
import {
  parseFlag,
  parseInteger,
  parsePort,
  parseProxyJump,
  parseStrict,
  parseTime,
  type StrictHostKeyChecking,
} from './ssh-config-parse.js';
import type { ConfigFail, OptionLine } from './ssh-config-read.js';

const MAX_IDENTITY_FILES = 100;
const MAX_HOSTS_FILES = 16;
const INT_MAX = 2_147_483_647;

export interface Sourced<T> {
  value: T;
  where: string;
}

export interface Collected {
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

type Settable = Exclude<keyof Collected, 'identityFiles' | 'certificateFiles'>;

/** Nothing obtained yet. */
export function emptyCollected(): Collected {
  return { identityFiles: [], certificateFiles: [] };
}

/**
 * Checks an option line's value and, when its block applies (`active`), records it in `c`. Options the
 * transport does not read are accepted and ignored. `servicePort` resolves `Port ssh` and ProxyJump ports.
 */
export function applyOption(
  c: Collected,
  { keyword, args, rest, where }: OptionLine,
  active: boolean,
  fail: ConfigFail,
  servicePort?: (name: string) => number | undefined,
): void {
  /** Records a value unless an earlier line already set the option (ssh: the first obtained value wins). */
  const set = <K extends Settable>(key: K, value: NonNullable<Collected[K]>['value'], at: string): void => {
    if (c[key] === undefined) (c as unknown as Record<string, Sourced<unknown>>)[key] = { value, where: at };
  };
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
      const port = parsePort(v, servicePort);
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
      const jump = parseProxyJump(value, servicePort);
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
}
