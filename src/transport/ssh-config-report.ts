/**
 * How l20-setup will reach a host, told from one resolution of the OpenSSH config (ssh-config.ts, checked
 * against `ssh -G` by ssh-g.ts): each value with the config line that decided it, the path (jump hosts or
 * ProxyCommand), the transport and why. One source for the `resolve` verb (text and JSON) and the setup
 * screen, so both say the same thing.
 */
import { resolveSshConfig, type ResolvedSshConfig } from './ssh-config.js';
import {
  defaultSshConfigContext,
  defaultSshConfigFiles,
  explicitSshConfigFiles,
  type SshConfigContext,
} from './ssh-config-context.js';
import { SshConfigError } from './ssh-config-read.js';
import { parseProxyJump } from './ssh-config-parse.js';
import { resolveThroughSsh, type SshGOptions } from './ssh-g.js';
import {
  chooseTransport,
  opensshReasons,
  type OpensshReason,
  type ReasonProbe,
  type TransportName,
} from './transport-choice.js';
import { escapeInvisible } from '../util/sanitize.js';

/** The fields shown, in the order an operator reads them. */
export const RESOLUTION_FIELDS = [
  'hostName',
  'port',
  'user',
  'identityFiles',
  'userKnownHostsFiles',
  'strictHostKeyChecking',
  'identitiesOnly',
  'serverAliveInterval',
  'serverAliveCountMax',
  'proxyJump',
] as const;
export type ResolutionField = (typeof RESOLUTION_FIELDS)[number];

export interface ResolutionJson {
  version: 1;
  host: string;
  resolved: {
    hostName: string;
    port: number;
    user: string;
    identityFiles: string[];
    userKnownHostsFiles: string[];
    strictHostKeyChecking: string;
    identitiesOnly: boolean;
    serverAliveInterval: number;
    serverAliveCountMax: number;
    proxyJump: string | null;
    proxyCommand: string | null;
    connectTimeout: number | null;
  };
  /** `file:line` or "default" per field; identityFiles has one entry per configured file. */
  sources: Record<ResolutionField | 'proxyCommand' | 'connectTimeout', string | string[]>;
  warnings: string[];
  filesRead: string[];
  /** Who had the last word ("ssh -G" or "built-in") and, when ssh -G was not consulted, why. */
  resolver: { by: 'ssh -G' | 'built-in'; note: string | null };
  path: PathJson;
}

/** One jump host on the way, as reached. */
export interface PathHop {
  /** The hop as written in the jump list (a name, an alias or an address). */
  name: string;
  user: string;
  address: string;
  port: number;
  /** Where the jump list came from: "inventory" or the `file:line` of ProxyJump. */
  source: string;
  /** Why this hop could not be resolved (the config refuses it), when it could not. */
  error?: string;
}

export interface PathJson {
  hops: PathHop[];
  proxyCommand: string | null;
  /** `file:line` of the ProxyCommand, null when there is none. */
  proxyCommandSource: string | null;
  transport: TransportName;
  why: string;
  /** What ssh2 cannot do in this config (each with its line); a forced ssh2 says these will not work. */
  reasons: OpensshReason[];
}

export type Resolution =
  | { ok: true; resolved: ResolvedSshConfig; by: 'ssh -G' | 'built-in'; note?: string }
  | { ok: false; error: SshConfigError };

/**
 * Resolves `host` through `configFile` (like `ssh -F FILE`), or ~/.ssh/config and /etc/ssh/ssh_config, checked
 * against `ssh -G` where OpenSSH is installed (its values win). An injected `ctx` (a test's files) leaves ssh -G
 * out unless `sshG` is given. A config OpenSSH refuses comes back as `{ ok: false }` with the file, line, reason.
 */
export function resolveHost(
  host: string,
  options: { configFile?: string; ctx?: SshConfigContext; sshG?: SshGOptions | false } = {},
): Resolution {
  const ctx = options.ctx ?? defaultSshConfigContext();
  const sshG = options.sshG ?? (options.ctx === undefined ? {} : false);
  try {
    if (sshG === false) {
      const files =
        options.configFile === undefined
          ? defaultSshConfigFiles(ctx.homeDir)
          : explicitSshConfigFiles(options.configFile);
      return { ok: true, resolved: resolveSshConfig(host, ctx, files), by: 'built-in' };
    }
    const withFile = options.configFile === undefined ? sshG : { ...sshG, configFile: options.configFile };
    const r = resolveThroughSsh(host, ctx, withFile);
    return { ok: true, resolved: r.resolved, by: r.by, ...(r.note === undefined ? {} : { note: r.note }) };
  } catch (e) {
    if (e instanceof SshConfigError) return { ok: false, error: e };
    throw e;
  }
}

/** Warnings from the resolver (and from its comparison with ssh -G). */
export function resolutionWarnings(r: ResolvedSshConfig): string[] {
  return [...r.warnings];
}

/** What decides the path besides the config: the inventory's `jump` and `transport` (src/config/schema.ts). */
export interface PathInventory {
  jump?: string | undefined;
  transport?: 'ssh2' | 'openssh' | 'auto' | undefined;
}

/** Resolves one jump host's name through the same config, or the refusal of the config for that name. */
export type HopResolver = (name: string) => ResolvedSshConfig | SshConfigError;

/**
 * The way to the host: its jump hosts (the inventory's `jump` wins over ProxyJump/ProxyCommand of the config;
 * `none` is direct), each resolved through the same config with its own user and port winning; the
 * ProxyCommand when that is the way; and the transport with why.
 */
export function hostPath(
  r: ResolvedSshConfig,
  inventory: PathInventory,
  resolveHop: HopResolver,
  probe?: ReasonProbe,
): PathJson {
  const fromInventory = inventory.jump !== undefined;
  const jumpText = fromInventory ? inventory.jump : r.proxyJump;
  const source = fromInventory ? 'inventory' : r.sources.proxyJump;
  const parsed = jumpText === undefined ? undefined : parseProxyJump(jumpText);
  const hops: PathHop[] = [];
  if (parsed !== undefined && !parsed.none) {
    for (const hop of parsed.hops) {
      const resolved = resolveHop(hop.host);
      if (resolved instanceof SshConfigError) {
        hops.push({
          name: hop.host,
          user: hop.user ?? '',
          address: hop.host,
          port: hop.port ?? 22,
          source,
          error: resolved.message,
        });
        continue;
      }
      hops.push({
        name: hop.host,
        user: hop.user ?? resolved.user,
        address: resolved.hostName,
        port: hop.port ?? resolved.port,
        source,
      });
    }
  }
  const proxyCommand = fromInventory ? undefined : r.proxyCommand;
  const reasons = opensshReasons(r, probe);
  const choice = chooseTransport(inventory, r, reasons);
  return {
    hops,
    proxyCommand: proxyCommand ?? null,
    proxyCommandSource: proxyCommand === undefined ? null : r.sources.proxyCommand,
    transport: choice.transport,
    why: choice.why,
    reasons,
  };
}

/** A HopResolver over the same files and context as the target (the built-in resolver: hops are plain names). */
export function hopResolver(options: { configFile?: string; ctx?: SshConfigContext } = {}): HopResolver {
  const ctx = options.ctx ?? defaultSshConfigContext();
  const files =
    options.configFile === undefined ? defaultSshConfigFiles(ctx.homeDir) : explicitSshConfigFiles(options.configFile);
  return (name) => {
    try {
      return resolveSshConfig(name, ctx, files);
    } catch (e) {
      if (e instanceof SshConfigError) return e;
      throw e;
    }
  };
}

/** The path in lines for the `resolve` verb: each hop, the proxy command, the target and the transport. */
export function pathLines(host: string, r: ResolvedSshConfig, path: PathJson): string[] {
  const lines = ['path:'];
  path.hops.forEach((hop, i) => {
    const at = hop.error === undefined ? `${hop.user}@${hop.address}:${hop.port}` : `(cannot resolve: ${hop.error})`;
    const from = hop.source === 'inventory' ? 'inventory jump' : `${hop.source} ProxyJump`;
    lines.push(`  hop ${i + 1}  ${hop.name}  ${at}  from ${from}`);
  });
  if (path.proxyCommand !== null) {
    lines.push(`  proxy command  ${path.proxyCommand}  from ${path.proxyCommandSource} ProxyCommand`);
  }
  lines.push(`  target  ${host}  ${resolutionSummary(r)}`);
  lines.push(`  transport  ${path.transport}  (${path.why})`);
  return lines;
}

/** The path in one short line for the setup screen: "via bastion → ssh2", "direct → openssh: FIDO key …". */
export function pathSummary(path: PathJson): string {
  const way =
    path.hops.length > 0
      ? `via ${path.hops.map((h) => h.name).join(' → ')}`
      : path.proxyCommand !== null
        ? 'via ProxyCommand'
        : 'direct';
  const first = path.reasons[0];
  const more = path.reasons.length > 1 ? ` (+${path.reasons.length - 1} more)` : '';
  if (path.transport === 'openssh') {
    return `${way} → openssh: ${first === undefined ? 'inventory transport: openssh' : `${first.what}${more}`}`;
  }
  return first === undefined ? `${way} → ssh2` : `${way} → ssh2 (will not work: ${first.what}${more})`;
}

export function resolutionJson(
  host: string,
  r: ResolvedSshConfig,
  path: PathJson,
  resolver: ResolutionJson['resolver'] = { by: 'built-in', note: null },
): ResolutionJson {
  return {
    version: 1,
    host,
    resolved: {
      hostName: r.hostName,
      port: r.port,
      user: r.user,
      identityFiles: r.identityFiles,
      userKnownHostsFiles: r.userKnownHostsFiles,
      strictHostKeyChecking: r.strictHostKeyChecking,
      identitiesOnly: r.identitiesOnly,
      serverAliveInterval: r.serverAliveInterval,
      serverAliveCountMax: r.serverAliveCountMax,
      proxyJump: r.proxyJump ?? null,
      proxyCommand: r.proxyCommand ?? null,
      connectTimeout: r.connectTimeout ?? null,
    },
    sources: {
      hostName: r.sources.hostName,
      port: r.sources.port,
      user: r.sources.user,
      identityFiles: r.sources.identityFiles,
      userKnownHostsFiles: r.sources.userKnownHostsFiles,
      strictHostKeyChecking: r.sources.strictHostKeyChecking,
      identitiesOnly: r.sources.identitiesOnly,
      serverAliveInterval: r.sources.serverAliveInterval,
      serverAliveCountMax: r.sources.serverAliveCountMax,
      proxyJump: r.sources.proxyJump,
      proxyCommand: r.sources.proxyCommand,
      connectTimeout: r.sources.connectTimeout,
    },
    warnings: resolutionWarnings(r),
    filesRead: r.filesRead,
    resolver,
    path,
  };
}

export interface ResolutionRow {
  field: ResolutionField;
  value: string;
  /** The deciding line(s), or "default". */
  source: string;
}

/** One row per field, values as text (lists joined with ", "), for the CLI table and the setup screen. */
export function resolutionRows(r: ResolvedSshConfig): ResolutionRow[] {
  const text = (f: ResolutionField): string => {
    switch (f) {
      case 'identityFiles':
        return r.identityFiles.length === 0 ? '(none)' : r.identityFiles.join(', ');
      case 'userKnownHostsFiles':
        return r.userKnownHostsFiles.length === 0 ? '(none)' : r.userKnownHostsFiles.join(', ');
      case 'identitiesOnly':
        return r.identitiesOnly ? 'yes' : 'no';
      case 'proxyJump':
        return r.proxyJump ?? '(none)';
      default:
        return String(r[f]);
    }
  };
  return RESOLUTION_FIELDS.map((field) => {
    const src = r.sources[field];
    const source = Array.isArray(src) ? [...new Set(src)].join(', ') : src;
    return { field, value: text(field), source };
  });
}

/** `user@host:port` as one line, for a summary. */
export function resolutionSummary(r: ResolvedSshConfig): string {
  return `${r.user}@${r.hostName}:${r.port}`;
}

/** What the setup screen shows under a host whose address is an ssh config alias. */
export type AliasView =
  { ok: true; summary: string; details: string; warnings: string[] } | { ok: false; error: string };

/** The inventory fields that win over the ssh config (src/target.ts hostFromConfig applies them the same way). */
export interface InventoryOverrides {
  address: string;
  port?: number | undefined;
  user?: string | undefined;
  auth?: { method: 'identityFile'; path: string } | { method: 'agent' } | { method: string } | undefined;
}

/** `file:line` shortened to `name:line` for a narrow screen; "default" stays. */
function shortSource(source: string): string {
  return source === 'default' ? source : source.replace(/^.*\//, '');
}

function keyText(host: InventoryOverrides, r: ResolvedSshConfig): string {
  if (host.auth?.method === 'identityFile' && 'path' in host.auth) return host.auth.path;
  if (host.auth?.method === 'agent') return '(ssh-agent)';
  return r.identityFilesDefaulted ? '(default keys)' : r.identityFiles.join(', ');
}

/**
 * For a host whose address the ssh config changes (HostName, Port, User or IdentityFile from a config
 * line): where l20-setup will connect, with the deciding lines; undefined for a plain address.
 * Inventory port, user and key win over the config, as they do when connecting.
 */
export function aliasView(
  host: InventoryOverrides,
  resolution: Resolution = resolveHost(host.address),
): AliasView | undefined {
  if (host.address.trim() === '') return undefined;
  // Config values reach the operator's terminal: no control or bidi character passes.
  if (!resolution.ok) return { ok: false, error: escapeInvisible(resolution.error.message) };
  const r = resolution.resolved;
  const s = r.sources;
  const configured = [s.hostName, s.port, s.user, ...s.identityFiles].some((x) => x !== 'default');
  if (!configured) return undefined;
  const from = (label: string, sources: string[], inventory: boolean) =>
    `${label} ${inventory ? 'inventory' : [...new Set(sources.map(shortSource))].join(',')}`;
  const details = [
    from('HostName', [s.hostName], false),
    from('Port', [s.port], host.port !== undefined),
    from('User', [s.user], host.user !== undefined),
    from('IdentityFile', s.identityFiles, host.auth !== undefined),
  ].join(' · ');
  const summary = `${host.user ?? r.user}@${r.hostName}:${host.port ?? r.port} key ${keyText(host, r)}`;
  return {
    ok: true,
    summary: escapeInvisible(summary),
    details: escapeInvisible(details),
    warnings: resolutionWarnings(r).map(escapeInvisible),
  };
}

/**
 * The setup screen's path line for a host (pathSummary, sanitized): undefined for an empty address or a
 * config that OpenSSH refuses (aliasView shows the refusal).
 */
export function pathView(
  host: PathInventory & { address: string },
  resolution: Resolution = resolveHost(host.address),
  resolveHop: HopResolver = hopResolver(),
): string | undefined {
  if (host.address.trim() === '' || !resolution.ok) return undefined;
  return escapeInvisible(pathSummary(hostPath(resolution.resolved, host, resolveHop)));
}
