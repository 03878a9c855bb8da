/**
 * Resolves a ProxyJump value (the inventory's `jump:` or ssh_config's ProxyJump) into the SshHost options of
 * each hop, as OpenSSH 9.2 follows it (ssh.c turns `-J a,b` into `ssh -J a -W %h:%p b`):
 * - each hop alias is resolved through the same ssh_config (HostName, Port, User, IdentityFile, known_hosts,
 *   StrictHostKeyChecking, keepalives); the user and port written in the hop (`user@host:port`) win;
 * - only the first hop's own ProxyJump is followed (its hops come before it, recursively) and only the first
 *   hop's own ProxyCommand is run: for a later hop ssh sets the jump host on the command line, which
 *   overrides that hop's ProxyJump and ProxyCommand from the config;
 * - a chain that comes back to a host already in it, or grows past MAX_JUMP_DEPTH, is refused naming the
 *   chain (ssh would recurse until something gave out).
 * Every hop's host key is checked against the inventory's known_hosts file first (the lab and tests record
 * keys there), then the hop's own files, with the same question for an unknown key, naming the hop.
 */
import { parseProxyJump } from './ssh-config-parse.js';
import { resolveSshConfig } from './ssh-config.js';
import type { SshConfigContext, SshConfigFile } from './ssh-config-context.js';
import { sshHostOptionsFromConfig } from './ssh-options-from-config.js';
import type { SshHostOptions, UnknownHostKeyInfo } from './ssh-options.js';

/** Hops in one chain, the recursion through first hops included. */
export const MAX_JUMP_DEPTH = 8;

/** A jump chain ssh would never finish: it loops, or is deeper than MAX_JUMP_DEPTH, or is not ProxyJump syntax. */
export class JumpChainError extends Error {
  constructor(
    message: string,
    readonly chain: readonly string[],
  ) {
    super(message);
    this.name = 'JumpChainError';
  }
}

/** An unknown host key of a hop: `name` is the hop's, `jumpHostFor` the inventory host it leads to. */
export type HopHostKeyInfo = UnknownHostKeyInfo & { name: string; jumpHostFor: string };

export interface JumpChainBase {
  /** The inventory host the chain leads to: named in errors and in host-key questions. */
  target: string;
  /** The inventory's known_hosts file (expanded): checked first for every hop, and where a trusted key goes. */
  knownHostsFile?: string;
  /** Asked about a hop's unknown host key (within the hop's StrictHostKeyChecking, as for a host). */
  onUnknownHostKey?: (info: HopHostKeyInfo) => Promise<boolean>;
  readyTimeoutMs?: number;
  /** Config files (default: ~/.ssh/config then /etc/ssh/ssh_config, as resolveSshConfig reads them). */
  files?: readonly SshConfigFile[];
}

/**
 * The hops of `jump`, in order (the first reached directly or through its own ProxyCommand). `none` gives [].
 * Throws SshConfigError where ssh refuses a hop's config, JumpChainError for a loop or a bad value.
 */
export function resolveJumpChain(jump: string, ctx: SshConfigContext, base: JumpChainBase): SshHostOptions[] {
  return resolveChain(jump, ctx, base, [base.target]);
}

function resolveChain(
  jump: string,
  ctx: SshConfigContext,
  base: JumpChainBase,
  path: readonly string[],
): SshHostOptions[] {
  const parsed = parseProxyJump(jump, ctx.servicePort);
  if (parsed === undefined) {
    const what = `jump hosts ${JSON.stringify(jump)} are not [user@]host[:port], comma-separated`;
    throw new JumpChainError(`${base.target}: ${what}`, path);
  }
  if (parsed.none) return [];
  const chain: SshHostOptions[] = [];
  parsed.hops.forEach((hop, index) => {
    const here = [...path, hop.host];
    if (path.slice(1).includes(hop.host) || here.length - 1 > MAX_JUMP_DEPTH) {
      const why = path.slice(1).includes(hop.host) ? 'loop' : `go deeper than ${MAX_JUMP_DEPTH} hops`;
      throw new JumpChainError(`${base.target}: the jump hosts ${why}: ${here.join(' → ')}`, here);
    }
    const resolved = resolveSshConfig(hop.host, ctx, base.files);
    if (base.knownHostsFile) resolved.userKnownHostsFiles = [base.knownHostsFile, ...resolved.userKnownHostsFiles];
    const ask = base.onUnknownHostKey;
    const { options } = sshHostOptionsFromConfig(hop.host, resolved, {
      ...(ask ? { onUnknownHostKey: (info) => ask({ ...info, name: hop.host, jumpHostFor: base.target }) } : {}),
      ...(base.readyTimeoutMs !== undefined ? { readyTimeoutMs: base.readyTimeoutMs } : {}),
      ...(ctx.env ? { env: ctx.env } : {}),
    });
    if (hop.user !== undefined) options.user = hop.user;
    if (hop.port !== undefined) options.port = hop.port;
    // Only the first hop is reached the way its own config says; the later ones go through the hop before.
    if (index === 0 && resolved.proxyJump !== undefined) {
      chain.push(...resolveChain(resolved.proxyJump, ctx, base, here));
    } else if (index !== 0) delete options.proxyCommand;
    chain.push(options);
  });
  return chain;
}
