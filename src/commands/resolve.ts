/**
 * `l20-setup resolve HOST [--ssh-config FILE] [--json]`: how l20-setup will reach HOST through the OpenSSH
 * config — each value and the config line that decided it (src/transport/ssh-config-report.ts). Reads files
 * only; `Match exec` commands run, as `ssh` runs them. Exit 0 resolved, 2 when OpenSSH would refuse the config.
 */
import { escapeInvisible } from '../util/sanitize.js';
import {
  resolveHost,
  resolutionJson,
  resolutionRows,
  resolutionSummary,
  resolutionWarnings,
} from '../transport/ssh-config-report.js';
import { UsageError, type CliValues } from './common.js';

export function runResolve(
  values: CliValues,
  positionals: readonly string[],
  write: (s: string) => void = (s) => process.stdout.write(s),
  error: (s: string) => void = (s) => process.stderr.write(s),
): number {
  const host = positionals[0];
  if (host === undefined || positionals.length > 1) {
    throw new UsageError('usage: l20-setup resolve HOST [--ssh-config FILE] [--json]  (one host or alias)');
  }
  const configFile = values['ssh-config'];
  const r = resolveHost(host, configFile === undefined ? {} : { configFile });
  if (!r.ok) {
    error(`l20-setup resolve: OpenSSH would refuse this configuration: ${escapeInvisible(r.error.message)}\n`);
    return 2;
  }
  if (values.json) {
    write(`${JSON.stringify(resolutionJson(host, r.resolved), null, 2)}\n`);
    return 0;
  }
  const rows = resolutionRows(r.resolved);
  const fieldWidth = Math.max(...rows.map((row) => row.field.length));
  const valueWidth = Math.min(48, Math.max(...rows.map((row) => row.value.length)));
  const lines = [`${host} → ${resolutionSummary(r.resolved)}`];
  for (const row of rows) {
    lines.push(`  ${row.field.padEnd(fieldWidth)}  ${row.value.padEnd(valueWidth)}  ${row.source}`);
  }
  const warnings = resolutionWarnings(r.resolved);
  if (warnings.length > 0) lines.push('warnings:', ...warnings.map((w) => `  ${w}`));
  lines.push(`files read: ${r.resolved.filesRead.length === 0 ? '(none)' : r.resolved.filesRead.join(', ')}`);
  write(`${lines.map(escapeInvisible).join('\n')}\n`);
  return 0;
}
