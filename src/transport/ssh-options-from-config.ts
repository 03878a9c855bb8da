/**
 * Maps a resolved ~/.ssh/config entry (ssh-config.ts) onto SshHost options, so an inventory host can be
 * reached the way the operator's own `ssh alias` reaches it. Kept out of ssh.ts because it is policy about
 * OpenSSH settings, not connection handling.
 */
import type { ResolvedSshConfig } from './ssh-config.js';
import type { SshHostOptions } from './ssh-options.js';

/**
 * SshHost options from a resolved ~/.ssh/config entry. `unsupported` lists what the transport cannot do: the
 * caller should refuse or explain rather than connect directly (empty today). ProxyCommand becomes
 * `proxyCommand`; ProxyJump is left to the caller (resolveJumpChain in ssh-hops.ts: the hops need the config
 * context to be resolved themselves).
 * StrictHostKeyChecking: `yes` refuses unknown keys (no prompt), `accept-new` trusts and records them without
 * asking, `ask`/`no` ask `onUnknownHostKey`. A changed key is always refused. With `UserKnownHostsFile none`
 * an unknown key is refused whatever StrictHostKeyChecking says, as ssh does: there is no user file to record
 * it in, and the global files are not ours to write.
 */
export function sshHostOptionsFromConfig(
  name: string,
  cfg: ResolvedSshConfig,
  extra: Partial<
    Pick<
      SshHostOptions,
      'onUnknownHostKey' | 'sudoPassword' | 'maxSessions' | 'readyTimeoutMs' | 'privateKey' | 'passphrase'
    >
  > & {
    /** Environment for SSH_AUTH_SOCK (default process.env). */
    env?: Readonly<Record<string, string | undefined>>;
  } = {},
): { options: SshHostOptions; unsupported: string[] } {
  const env = extra.env ?? process.env;
  const unsupported: string[] = [];
  let agent: string | undefined;
  if (cfg.identityAgent === undefined || cfg.identityAgent === 'SSH_AUTH_SOCK') agent = env.SSH_AUTH_SOCK;
  else if (cfg.identityAgent === 'none') agent = undefined;
  else if (cfg.identityAgent.startsWith('$')) agent = env[cfg.identityAgent.slice(1)];
  else agent = cfg.identityAgent;

  const options: SshHostOptions = {
    name,
    host: cfg.hostName,
    port: cfg.port,
    user: cfg.user,
    identityFiles: cfg.identityFiles,
    identityFilesDefaulted: cfg.identityFilesDefaulted,
    knownHostsFiles: [...cfg.userKnownHostsFiles, ...cfg.globalKnownHostsFiles],
    originalHost: cfg.alias,
  };
  if (cfg.proxyCommand !== undefined) options.proxyCommand = cfg.proxyCommand;
  if (agent) options.agent = agent;
  if (cfg.hostKeyAlias !== undefined) options.hostKeyAlias = cfg.hostKeyAlias;
  if (cfg.serverAliveInterval > 0) {
    options.keepaliveIntervalMs = cfg.serverAliveInterval * 1000;
    options.keepaliveCountMax = cfg.serverAliveCountMax;
  }
  // Without onUnknownHostKey an unknown key is refused: so it is when there is no user file to record it in.
  if (cfg.userKnownHostsFiles.length > 0) {
    const ask = extra.onUnknownHostKey;
    if (cfg.strictHostKeyChecking === 'accept-new') options.onUnknownHostKey = async () => true;
    else if (cfg.strictHostKeyChecking !== 'yes' && ask) options.onUnknownHostKey = ask;
  }
  for (const key of ['sudoPassword', 'maxSessions', 'readyTimeoutMs', 'privateKey', 'passphrase'] as const) {
    if (extra[key] !== undefined) (options as unknown as Record<string, unknown>)[key] = extra[key];
  }
  return { options, unsupported };
}
