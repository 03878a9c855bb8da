/**
 * Loading and saving the cluster configuration. The saved inventory lives in the user's config
 * directory (conf: XDG on Linux), written atomically; `--inventory FILE` reads a JSON or YAML file.
 * Nothing invalid is ever written: we validate first, and conf replaces the file by rename.
 */
import { readFile, rename, writeFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import Conf from 'conf';
import YAML from 'yaml';
import { clusterSchema, type ClusterConfig, type ClusterInput } from './schema.js';
import { ConfigError, describeIssues } from './errors.js';

export function validateCluster(input: unknown, source: string): ClusterConfig {
  const result = clusterSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = describeIssues(result.error, input);
  throw new ConfigError(`invalid configuration in ${source}:\n  ${problems.join('\n  ')}`, source, problems);
}

export async function loadInventoryFile(path: string): Promise<ClusterConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(`cannot read inventory ${path} (${code}); pass an existing file to --inventory`, path, [code]);
  }
  let data: unknown;
  try {
    data = path.endsWith('.json') || text.trimStart().startsWith('{') ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0] ?? 'parse error';
    throw new ConfigError(`inventory ${path} is not valid JSON or YAML: ${msg}`, path, [msg]);
  }
  return validateCluster(data, path);
}

/** Writes an inventory file atomically (temp file + rename), mode 0600, after validating it. */
export async function writeInventoryFile(path: string, config: ClusterInput): Promise<void> {
  const valid = validateCluster(config, path);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(valid, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, path);
}

/** The saved inventory in the user's config directory. */
export class SavedConfig {
  private readonly conf: Conf<{ cluster?: unknown }>;

  constructor(options: { cwd?: string } = {}) {
    try {
      this.conf = new Conf<{ cluster?: unknown }>({
        projectName: 'l20-setup',
        projectSuffix: '',
        configName: 'inventory',
        ...(options.cwd ? { cwd: options.cwd } : {}),
        // Keep a bad file for the operator to fix instead of silently resetting it.
        clearInvalidConfig: false,
      });
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0] ?? 'unreadable';
      throw new ConfigError(`the saved inventory cannot be read (${msg}); fix or remove the file, or run with --inventory FILE`, 'saved inventory', [msg]);
    }
  }

  get path(): string {
    return this.conf.path;
  }

  /** undefined on first run (nothing saved yet). */
  load(): ClusterConfig | undefined {
    const raw = this.conf.get('cluster');
    if (raw === undefined) return undefined;
    return validateCluster(raw, this.conf.path);
  }

  save(config: ClusterInput): ClusterConfig {
    const valid = validateCluster(config, this.conf.path);
    this.conf.set('cluster', valid);
    return valid;
  }
}
