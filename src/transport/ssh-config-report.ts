/**
 * How l20-setup will reach a host, told from one resolution of the OpenSSH config (ssh-config.ts): each value
 * with the config line that decided it, plus what the transport will not follow. One source for the
 * `resolve` verb (text and JSON) and the setup screen, so both say the same thing.
 */
import {
  defaultSshConfigContext,
  defaultSshConfigFiles,
  explicitSshConfigFiles,
  resolveSshConfig,
  SshConfigError,
  type ResolvedSshConfig,
  type SshConfigContext,
} from './ssh-config.js';
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
}

export type Resolution = { ok: true; resolved: ResolvedSshConfig } | { ok: false; error: SshConfigError };

/**
 * Resolves `host` through `configFile` (like `ssh -F FILE`), or ~/.ssh/config and /etc/ssh/ssh_config.
 * A config OpenSSH refuses comes back as `{ ok: false }` with the file, line and reason.
 */
export function resolveHost(
  host: string,
  options: { configFile?: string; ctx?: SshConfigContext } = {},
): Resolution {
  const ctx = options.ctx ?? defaultSshConfigContext();
  const files = options.configFile === undefined
    ? defaultSshConfigFiles(ctx.homeDir)
    : explicitSshConfigFiles(options.configFile);
  try {
    return { ok: true, resolved: resolveSshConfig(host, ctx, files) };
  } catch (e) {
    if (e instanceof SshConfigError) return { ok: false, error: e };
    throw e;
  }
}

/** Warnings from the resolver plus what the transport cannot follow (ProxyJump, ProxyCommand). */
export function resolutionWarnings(r: ResolvedSshConfig): string[] {
  const out = [...r.warnings];
  if (r.proxyJump !== undefined) {
    out.push(`${r.sources.proxyJump}: ProxyJump ${r.proxyJump}: l20-setup cannot follow it yet (refuses to connect)`);
  }
  if (r.proxyCommand !== undefined) {
    out.push(`${r.sources.proxyCommand}: ProxyCommand is set: l20-setup cannot follow it yet (refuses to connect)`);
  }
  return out;
}

export function resolutionJson(host: string, r: ResolvedSshConfig): ResolutionJson {
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
  | { ok: true; summary: string; details: string; warnings: string[] }
  | { ok: false; error: string };

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
