/**
 * `l20-setup bundle [TARGET] [--out FILE]`: the evidence bundle of every host in one .tar.gz
 * (src/bundle). Progress goes to stderr, the archive's path and a one-line verdict to stdout.
 */
import { resolve } from 'node:path';
import { backupRunId } from '../transport/files.js';
import { buildBundle, defaultBundleName, writeBundleFile } from '../bundle/index.js';
import { targetFromCli } from './target-from-cli.js';
import type { CliValues } from './common.js';

export async function runBundle(values: CliValues & { out?: string }): Promise<number> {
  const target = await targetFromCli(values);
  if (!target) return 2;
  const runId = backupRunId();
  const out = resolve(values.out ?? defaultBundleName(runId));
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  try {
    const bundle = await buildBundle({
      config: target.config,
      hosts: target.hosts,
      source: target.source,
      runId,
      signal: controller.signal,
      progress: (l) => process.stderr.write(`l20-setup bundle: ${l}\n`),
    });
    if (controller.signal.aborted) {
      process.stderr.write('l20-setup bundle: cancelled; nothing written\n');
      return 2;
    }
    writeBundleFile(out, bundle.archive);
    const failing = bundle.checks.filter((c) => c.status === 'fail' || c.status === 'error');
    const unreachable = bundle.collections.filter((c) => c.error);
    process.stdout.write(`${out}\n`);
    process.stdout.write(
      `${bundle.members.length} files, ${bundle.archive.length} bytes; ${failing.length} failing checks; redacted: ${bundle.redactor.describe()}\n`,
    );
    // The bundle is written either way (it is most useful when something is wrong); the exit code says whether all hosts answered.
    return unreachable.length > 0 ? 2 : 0;
  } finally {
    process.off('SIGINT', stop);
    await target.close();
  }
}
