/**
 * `l20-setup resolve HOST [--ssh-config FILE] [--json] [--inventory FILE]`: how l20-setup will reach HOST
 * through the OpenSSH config — each value and the config line that decided it, the path (jump hosts,
 * ProxyCommand) and the transport with why (src/transport/ssh-config-report.ts). Reads files and runs `ssh -G`
 * where OpenSSH is installed; `Match exec` commands run, as `ssh` runs them. Exit 0 resolved, 2 when OpenSSH
 * would refuse the config.
 */
import { escapeInvisible } from '../util/sanitize.js';
import {
  hopResolver,
  hostPath,
  pathLines,
  resolveHost,
  resolutionJson,
  resolutionRows,
  resolutionSummary,
  resolutionWarnings,
} from '../transport/ssh-config-report.js';
import { ConfigError } from '../config/errors.js';
import type { HostConfig } from '../config/schema.js';
import { loadInventoryFile, SavedConfig } from '../config/store.js';
import { UsageError, type CliValues } from './common.js';

/**
 * The inventory host HOST names (by name, else by address), from --inventory FILE or the saved inventory:
 * its address is what gets resolved, and its `jump` and `transport` decide the path as they do when connecting.
 */
async function inventoryHost(host: string, inventory: string | undefined): Promise<HostConfig | undefined> {
  let config;
  if (inventory !== undefined) config = await loadInventoryFile(inventory);
  else {
    try {
      config = new SavedConfig().load();
    } catch (e) {
      // A saved inventory that no longer validates does not stop resolving an alias; other verbs report it.
      if (!(e instanceof ConfigError)) throw e;
    }
  }
  const hosts = config?.hosts ?? [];
  return hosts.find((h) => h.name === host) ?? hosts.find((h) => h.address === host);
}

export async function runResolve(
  values: CliValues,
  positionals: readonly string[],
  write: (s: string) => void = (s) => process.stdout.write(s),
  error: (s: string) => void = (s) => process.stderr.write(s),
): Promise<number> {
  const host = positionals[0];
  if (host === undefined || positionals.length > 1) {
    const usage = 'usage: l20-setup resolve HOST [--ssh-config FILE] [--json] [--inventory FILE]';
    throw new UsageError(`${usage}  (one host or alias)`);
  }
  const configFile = values['ssh-config'];
  const files = configFile === undefined ? {} : { configFile };
  const entry = await inventoryHost(host, values.inventory);
  const alias = entry?.address ?? host;
  const r = resolveHost(alias, files);
  if (!r.ok) {
    error(`l20-setup resolve: OpenSSH would refuse this configuration: ${escapeInvisible(r.error.message)}\n`);
    return 2;
  }
  // A HOST that is no inventory host has no `jump:` and transport auto.
  const path = hostPath(r.resolved, { jump: entry?.jump, transport: entry?.transport }, hopResolver(files));
  if (values.json) {
    const resolver = { by: r.by, note: r.note ?? null };
    const json = { ...resolutionJson(host, r.resolved, path, resolver), inventoryHost: entry?.name ?? null };
    write(`${JSON.stringify(json, null, 2)}\n`);
    return 0;
  }
  const rows = resolutionRows(r.resolved);
  const fieldWidth = Math.max(...rows.map((row) => row.field.length));
  const valueWidth = Math.min(48, Math.max(...rows.map((row) => row.value.length)));
  const lines = [`${host} → ${resolutionSummary(r.resolved)}`];
  if (entry !== undefined) lines.push(`inventory host ${entry.name}, address ${entry.address}`);
  for (const row of rows) {
    lines.push(`  ${row.field.padEnd(fieldWidth)}  ${row.value.padEnd(valueWidth)}  ${row.source}`);
  }
  const warnings = resolutionWarnings(r.resolved);
  if (warnings.length > 0) lines.push('warnings:', ...warnings.map((w) => `  ${w}`));
  lines.push(...pathLines(alias, r.resolved, path));
  lines.push(`files read: ${r.resolved.filesRead.length === 0 ? '(none)' : r.resolved.filesRead.join(', ')}`);
  lines.push(r.note === undefined ? `resolved by: ${r.by}` : `resolved by: ${r.by} (${r.note})`);
  write(`${lines.map(escapeInvisible).join('\n')}\n`);
  return 0;
}
