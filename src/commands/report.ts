/**
 * `l20-setup report [TARGET] [--format md|html] [--out FILE]`: every stage's checks with their
 * benchmarks, the hosts' configurations side by side and the performance against the tutorial's
 * claims (src/cluster-report). Markdown to stdout by default; progress on stderr.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { backupRunId } from '../transport/files.js';
import { gatherReport } from '../cluster-report/data.js';
import { renderMarkdown } from '../cluster-report/markdown.js';
import { renderHtml } from '../cluster-report/html.js';
import { targetFromCli } from './target-from-cli.js';
import { UsageError, type CliValues } from './common.js';

function writeAtomic(path: string, text: string): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export async function runReport(values: CliValues & { out?: string; format?: string }): Promise<number> {
  const format = values.format ?? 'md';
  if (format !== 'md' && format !== 'html')
    throw new UsageError(`--format ${JSON.stringify(format)}: expected md or html`);
  const target = await targetFromCli(values);
  if (!target) return 2;
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  try {
    const data = await gatherReport({
      config: target.config,
      hosts: target.hosts,
      source: target.source,
      runId: backupRunId(),
      signal: controller.signal,
      progress: (l) => process.stderr.write(`l20-setup report: ${l}\n`),
    });
    const text = format === 'html' ? renderHtml(data) : renderMarkdown(data);
    if (values.out) {
      const out = resolve(values.out);
      writeAtomic(out, text);
      process.stderr.write(`l20-setup report: wrote ${out}\n`);
    } else process.stdout.write(text);
    if (data.counts.error > 0) return 2;
    return data.counts.fail > 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', stop);
    await target.close();
  }
}
