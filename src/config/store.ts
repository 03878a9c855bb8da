/**
 * Loading and saving the cluster configuration. The saved inventory lives in the user's config
 * directory (conf: XDG on Linux), written atomically; `--inventory FILE` reads a JSON or YAML file.
 * Nothing invalid is ever written: we validate first, and conf replaces the file by rename.
 */
import { rename, writeFile, mkdir } from 'node:fs/promises';
import { FileRefusedError, readFileSafely } from '../util/read-file-safely.js';
import { yamlTooDeepAt, yamlTooDeepMessage } from '../parse/yaml-depth.js';
import { dirname } from 'node:path';
import Conf from 'conf';
import YAML from 'yaml';
import { clusterSchema, type ClusterConfig, type ClusterInput } from './schema.js';
import { asciiSafe, ConfigError, describeIssues } from './errors.js';

/**
 * A parser's complaint, one line: JSON.parse quotes the bad input in its message (ESC, CR, bidi
 * overrides and all), so it is escaped to printable ASCII and cut like a shown value.
 */
function parserMessage(err: unknown, fallback: string): string {
  const line = asciiSafe((err as Error)?.message?.split('\n')[0] || fallback);
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

const MAX_SHOWN = 20;

/**
 * YAML, where a warning (an unknown tag such as !!js/function) is an error: YAML.parse would print
 * it to stderr with the file's line in it, raw, and carry on.
 */
function parseYaml(text: string): unknown {
  const doc = YAML.parseDocument(text);
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw problem;
  return doc.toJS();
}

export function validateCluster(input: unknown, source: string): ClusterConfig {
  const result = clusterSchema.safeParse(input);
  if (result.success) return result.data;
  const problems = describeIssues(result.error, input);
  // A file of 100,000 bad entries gets a readable message; every problem stays in .problems.
  const shown =
    problems.length > MAX_SHOWN
      ? [...problems.slice(0, MAX_SHOWN), `… and ${problems.length - MAX_SHOWN} more problems`]
      : problems;
  throw new ConfigError(`invalid configuration in ${source}:\n  ${shown.join('\n  ')}`, source, problems);
}

export async function loadInventoryFile(path: string): Promise<ClusterConfig> {
  let text: string;
  try {
    text = (await readFileSafely(path, 'inventory')).toString('utf8');
  } catch (err) {
    if (err instanceof FileRefusedError) {
      throw new ConfigError(`inventory ${err.message}; pass the inventory file to --inventory`, path, [err.reason]);
    }
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new ConfigError(`cannot read inventory ${path} (${code}); pass an existing file to --inventory`, path, [
      code,
    ]);
  }
  const tooDeep = yamlTooDeepAt(text);
  if (tooDeep !== undefined) {
    const msg = yamlTooDeepMessage(tooDeep);
    throw new ConfigError(`inventory ${path} is not a usable inventory: ${msg}`, path, [msg]);
  }
  // Editors on Windows start UTF-8 files with a byte order mark; neither parser skips it.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let data: unknown;
  try {
    data = path.endsWith('.json') || text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    const msg = parserMessage(err, 'parse error');
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
      const msg = parserMessage(err, 'unreadable');
      throw new ConfigError(
        `the saved inventory cannot be read (${msg}); fix or remove the file, or run with --inventory FILE`,
        'saved inventory',
        [msg],
      );
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
