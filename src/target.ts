/**
 * Resolves where to run: the built-in lab, an inventory file, or the saved inventory. Produces the
 * cluster config and one transport Host per configured host.
 */
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir, homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { ClusterConfig, HostConfig } from './config/schema.js';
import { loadInventoryFile, SavedConfig } from './config/store.js';
import { SshHost } from './transport/ssh.js';
import { sshHostOptionsFromConfig } from './transport/ssh-options-from-config.js';
import type { SshHostOptions } from './transport/ssh-options.js';
import { OpensshHost } from './transport/openssh.js';
import { ConfigError } from './config/errors.js';
import type { ResolvedSshConfig } from './transport/ssh-config.js';
import { defaultSshConfigContext, type SshConfigContext } from './transport/ssh-config-context.js';
import { SshConfigError } from './transport/ssh-config-read.js';
import { resolveThroughSsh } from './transport/ssh-g.js';
import { JumpChainError, resolveJumpChain } from './transport/ssh-hops.js';
import { chooseTransport, opensshReasons, requireOpensshClient } from './transport/transport-choice.js';
import type { Host } from './transport/types.js';
import type { UnknownHostKeyInfo } from './transport/ssh-options.js';

export interface TargetOptions {
  lab?: boolean;
  scenario?: string;
  /** Lab time scale (1 = real time; 'max' drops the waits). */
  speed?: number | 'max';
  /** Lab only: keep benchmark traffic running on it (vLLM requests, RDMA), so the monitor has something to show. */
  load?: boolean;
  seed?: number;
  inventory?: string;
  /**
   * The sudo password for hosts whose sudo asks for one (the same on every host). Kept in memory only:
   * sent on the command's stdin to `sudo -S` only after `sudo -n true` showed it is needed, never in argv,
   * files, logs or reports.
   */
  sudoPassword?: string;
  /** Called for an unknown host key; resolve true to trust it (and record it in known_hosts). */
  onUnknownHostKey?: (info: UnknownHostKeyInfo & { name: string }) => Promise<boolean>;
  /** The pause before reconnecting after a lost connection (default 1 s). */
  reconnectBackoffMs?: number;
}

/** The lab at full speed answers again at once after a drop: a reconnect need not wait the 1 s a real host gets. */
export const LAB_MAX_SPEED_RECONNECT_MS = 100;

/** What a host takes from the target's options. */
type HostOptions = Pick<TargetOptions, 'onUnknownHostKey' | 'sudoPassword' | 'reconnectBackoffMs'>;

export interface Target {
  config: ClusterConfig;
  hosts: Host[];
  source: string;
  close(): Promise<void>;
}

export interface LabFiles {
  dir: string;
  identityFile: string;
  knownHostsFile: string;
}

/** Writes the lab's client key and known_hosts (mode 0600) and returns an inventory for it. */
export function labInventory(
  lab: {
    hosts: ReadonlyArray<{
      name: string;
      address: string;
      port: number;
      user: string;
      hostKeyType: string;
      hostKeyBlob: Buffer;
      hostKeyFingerprint: string;
    }>;
    clientPrivateKey: string;
  },
  dir: string,
): { config: ClusterConfig; files: LabFiles } {
  const identityFile = join(dir, 'id_ed25519');
  const knownHostsFile = join(dir, 'known_hosts');
  writeFileSync(identityFile, lab.clientPrivateKey, { mode: 0o600 });
  writeFileSync(
    knownHostsFile,
    lab.hosts.map((h) => `[${h.address}]:${h.port} ${h.hostKeyType} ${h.hostKeyBlob.toString('base64')}\n`).join(''),
    { mode: 0o600 },
  );
  const hosts: HostConfig[] = lab.hosts.map((h, i) => ({
    name: h.name,
    address: h.address,
    port: h.port,
    user: h.user,
    auth: { method: 'identityFile', path: identityFile },
    role: i === 0 ? 'head' : 'worker',
    mgmtInterface: 'eno1',
    knownHostsFile,
    hostKeyFingerprint: h.hostKeyFingerprint,
  }));
  const config = {
    version: 1,
    hosts,
    network: { design: 'A', mtu: 9000 },
    qos: { priority: 3, dscp: 26, trust: 'dscp' },
    nccl: { gidIndex: 'auto', crossNic: 0, debug: 'WARN' },
    ray: { port: 6379, dashboardPort: 8265 },
    vllm: { model: 'Qwen/Qwen2.5-7B-Instruct', port: 8000, layout: 'auto' },
  } as ClusterConfig;
  return { config, files: { dir, identityFile, knownHostsFile } };
}

function expandHome(p: string): string {
  return p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}

/**
 * Builds the transport for one configured host. The address may be an alias of ~/.ssh/config,
 * resolved as OpenSSH would (HostName, Port, User, IdentityFile, UserKnownHostsFile, keepalives,
 * StrictHostKeyChecking, ProxyJump, ProxyCommand); fields set in the inventory win over the ssh config. The
 * inventory's `jump:` wins over ProxyJump and ProxyCommand (`none`: directly); each jump host is resolved through
 * the same config (ssh-hops.ts).
 */
export function hostFromConfig(
  h: HostConfig,
  options: HostOptions = {},
  ctx: SshConfigContext = defaultSshConfigContext(),
): Host {
  const refused = (e: unknown): never => {
    if (e instanceof JumpChainError) throw new ConfigError(e.message, 'jump hosts', [...e.chain]);
    // ssh itself would refuse this configuration (it exits 255); say where, as ssh does.
    if (!(e instanceof SshConfigError)) throw e;
    const message = `${h.name}: ${e.message} (OpenSSH refuses this; ssh would exit 255)`;
    throw new ConfigError(message, 'ssh config', [e.reason]);
  };
  let resolved: ResolvedSshConfig;
  try {
    // ssh -G has the last word where OpenSSH is installed; the built-in resolver otherwise.
    resolved = resolveThroughSsh(h.address, ctx).resolved;
  } catch (e) {
    return refused(e);
  }
  // The inventory's known_hosts file comes first (a trusted key is recorded there), even with UserKnownHostsFile none.
  // Before the choice: a CA line there is a reason for OpenSSH.
  if (h.knownHostsFile) resolved.userKnownHostsFiles = [expandHome(h.knownHostsFile), ...resolved.userKnownHostsFiles];
  const choice = chooseTransport(h, resolved, opensshReasons(resolved));
  if (choice.transport === 'openssh') requireOpensshClient(h.name, choice.why);
  const ask = options.onUnknownHostKey;
  const { options: ssh, unsupported } = sshHostOptionsFromConfig(h.name, resolved, {
    ...(ask ? { onUnknownHostKey: (info) => ask({ ...info, name: h.name }) } : {}),
    ...(options.sudoPassword !== undefined ? { sudoPassword: options.sudoPassword } : {}),
    ...(ctx.env ? { env: ctx.env } : {}),
  });
  if (options.reconnectBackoffMs !== undefined) ssh.reconnectBackoffMs = options.reconnectBackoffMs;
  if (choice.transport === 'ssh2' && unsupported.length > 0) {
    throw new ConfigError(
      `${h.name}: ~/.ssh/config uses ${unsupported.join(', ')} for ${h.address}, which l20-setup cannot follow yet; give the inventory an address it can reach directly`,
      'ssh config',
      unsupported,
    );
  }
  if (h.port !== undefined) ssh.port = h.port;
  if (h.user !== undefined) ssh.user = h.user;
  if (h.auth?.method === 'identityFile') {
    ssh.identityFiles = [expandHome(h.auth.path)];
    ssh.identityFilesDefaulted = false;
    delete ssh.agent;
  } else if (h.auth?.method === 'agent') {
    ssh.identityFiles = [];
    if (!ssh.agent)
      throw new ConfigError(
        `${h.name}: auth is ssh-agent but SSH_AUTH_SOCK is not set; start an agent (eval $(ssh-agent); ssh-add) or give an identity file`,
        'auth',
        ['no agent'],
      );
  }
  if (h.hostKeyFingerprint) ssh.expectedFingerprint = h.hostKeyFingerprint;
  const jump = h.jump ?? resolved.proxyJump;
  if (h.jump !== undefined) delete ssh.proxyCommand; // the inventory's jump hosts (or `none`) win over the config
  if (jump !== undefined) {
    try {
      ssh.jump = resolveJumpChain(jump, ctx, {
        target: h.name,
        ...(h.knownHostsFile ? { knownHostsFile: expandHome(h.knownHostsFile) } : {}),
        ...(ask ? { onUnknownHostKey: ask } : {}),
      });
    } catch (e) {
      return refused(e);
    }
  }
  if (choice.transport === 'openssh') return opensshHostFromConfig(h, ssh, ctx);
  return new SshHost(ssh);
}

/**
 * The OpenSSH transport for `h`: ssh is given the inventory's address, so the user's config applies, and only
 * what the inventory itself sets (port, user, identity file) as options.
 */
/**
 * The OpenSSH transport for a host: ssh is given the inventory's address as its destination, so the user's
 * config applies, and only what the inventory itself sets. The jump chain (the inventory's, or the config's
 * ProxyJump as resolved) becomes one master per hop with our host-key policy: a ProxyJump left to ssh would
 * check the hops' keys with the user's defaults. With HOME pointed away from the account's home, ssh is given
 * the config file the built-in resolver read (`-F`), so both read the same one.
 */
function opensshHostFromConfig(h: HostConfig, ssh: SshHostOptions, ctx: SshConfigContext): OpensshHost {
  const identityFiles = h.auth?.method === 'identityFile' ? { identityFiles: ssh.identityFiles ?? [] } : {};
  const port = h.port !== undefined ? { port: h.port } : {};
  const inventory = { ...port, ...(h.user !== undefined ? { user: h.user } : {}), ...identityFiles };
  return new OpensshHost({
    ...ssh,
    sshAlias: h.address,
    inventory,
    ...(ssh.jump !== undefined ? { jump: ssh.jump } : {}),
    ...(ctx.homeDir !== userInfo().homedir ? { sshConfigFile: homeSshConfig(ctx.homeDir) } : {}),
  });
}

/** `~/.ssh/config` under `home` for `ssh -F`, or `none` (no config file) when there is none. */
function homeSshConfig(home: string): string {
  const file = join(home, '.ssh', 'config');
  return existsSync(file) ? file : 'none';
}

export function hostsFromConfig(config: ClusterConfig, options: HostOptions = {}): Host[] {
  return config.hosts.map((h) => hostFromConfig(h, options));
}

export async function openTarget(options: TargetOptions): Promise<Target | undefined> {
  if (options.lab) {
    const { startLab } = await import('../lab/index.js');
    const lab = await startLab({
      scenario: options.scenario ?? 'fresh',
      seed: options.seed ?? 1,
      ...(options.speed !== undefined ? { speed: options.speed } : {}),
    });
    const dir = mkdtempSync(join(tmpdir(), 'l20-lab-'));
    const { config } = labInventory(lab, dir);
    const hosts = hostsFromConfig(config, {
      ...options,
      ...(options.speed === 'max' ? { reconnectBackoffMs: LAB_MAX_SPEED_RECONNECT_MS } : {}),
    });
    const load = options.load ? await (await import('../lab/load.js')).startLabLoad(lab) : undefined;
    return {
      config,
      hosts,
      source: `built-in lab (scenario ${options.scenario ?? 'fresh'})`,
      async close() {
        await load?.stop();
        await Promise.all(hosts.map((h) => h.close()));
        await lab.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  let config: ClusterConfig | undefined;
  let source: string;
  if (options.inventory) {
    config = await loadInventoryFile(options.inventory);
    source = options.inventory;
  } else {
    const saved = new SavedConfig();
    config = saved.load();
    source = saved.path;
  }
  if (!config) return undefined;
  const hosts = hostsFromConfig(config, options);
  return {
    config,
    hosts,
    source,
    async close() {
      await Promise.all(hosts.map((h) => h.close()));
    },
  };
}
