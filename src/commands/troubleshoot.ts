/**
 * `l20-setup troubleshoot [SYMPTOM] [TARGET] [--json]`: probes one symptom (with its benchmarks) or
 * every symptom (the quick probes only) on every host and prints each diagnosis — status, cause, rule
 * ids, hosts, fix — or docs/DESIGN.md's `{ version: 1, diagnoses }`. Exit 0 nothing found, 1 a cause
 * found (or a probe failing that no cause explains), 2 usage or connection error.
 */
import { Engine } from '../engine/runner.js';
import { SessionLog } from '../engine/session-log.js';
import { painter, plainReporter } from '../engine/run-output.js';
import { diagnose } from '../troubleshoot/engine.js';
import type { Diagnosis, TroubleshootReport } from '../troubleshoot/types.js';
import { SYMPTOMS, SYMPTOM_IDS, symptomById } from '../../checks/troubleshoot/symptoms.js';
import { targetFromCli } from './target-from-cli.js';
import { UsageError, useColor, type CliValues } from './common.js';

export function symptomsFrom(id: string | undefined) {
  if (id === undefined) return SYMPTOMS;
  const s = symptomById(id);
  if (!s) throw new UsageError(`unknown symptom ${JSON.stringify(id)}; symptoms: ${SYMPTOM_IDS.join(', ')}`);
  return [s];
}

const MARK: Record<Diagnosis['status'], 'fail' | 'pass' | 'warn'> = {
  found: 'fail',
  clear: 'pass',
  inconclusive: 'warn',
};

/** Plain lines for one diagnosis; `detail` adds the evidence and the outputs side by side. */
export function diagnosisLines(d: Diagnosis, color: boolean, detail: boolean): string[] {
  const paint = painter(color);
  const out = [
    `${paint.status(MARK[d.status], d.status.toUpperCase().padEnd(12))} ${d.symptom}  ${paint.dim(d.title)}`,
  ];
  if (d.status === 'clear') {
    if (detail) out.push(...d.evidence.split('\n').map((l) => `  ${l}`));
    return out;
  }
  if (d.cause) out.push(`  cause: ${d.cause}`);
  if (d.rules.length) out.push(`  rules: ${d.rules.join(', ')}`);
  out.push(`  hosts: ${d.hosts.length ? d.hosts.join(', ') : 'cluster-wide'}`);
  if (d.fix) out.push(...d.fix.split('\n').map((l, i) => `  ${i === 0 ? 'fix:   ' : '       '}${l}`));
  if (d.fixStages.length)
    out.push(`  apply: l20-setup apply ${d.fixStages.map((s) => `--stage ${s}`).join(' ')} --yes`);
  if (!detail) {
    out.push(
      ...d.checks.map(
        (c) => `  ${paint.dim('·')} ${c.host ?? 'cluster'} ${c.id}${c.rule ? ` (${c.rule})` : ''}: ${c.summary}`,
      ),
    );
    return out;
  }
  out.push('  evidence:', ...d.evidence.split('\n').map((l) => `    ${l}`));
  for (const c of d.comparisons) {
    out.push(`  ${c.label}:`);
    for (const [host, lines] of Object.entries(c.byHost)) {
      const marked = new Set(c.differingByHost?.[host] ?? c.differing);
      out.push(
        `    ── ${host}`,
        ...lines.map((l, i) => (marked.has(i) ? paint.status('fail', `  ≠ ${l}`) : `    ${l}`)),
      );
    }
  }
  return out;
}

export async function runTroubleshoot(values: CliValues, positionals: readonly string[]): Promise<number> {
  if (positionals.length > 1)
    throw new UsageError(
      `troubleshoot takes one SYMPTOM at most (got ${positionals.map((p) => JSON.stringify(p)).join(' ')}); symptoms: ${SYMPTOM_IDS.join(', ')}`,
    );
  const symptoms = symptomsFrom(positionals[0]);
  const target = await targetFromCli(values);
  if (!target) return 2;
  const log = new SessionLog();
  const engine = new Engine(target.hosts, { config: target.config, backpressure: () => log.whenWritable() });
  engine.subscribe((e) => log.record(e));
  const color = useColor();
  if (!values.json && values.verbose)
    engine.subscribe(plainReporter((l) => process.stdout.write(`${l}\n`), painter(color), true));
  const stop = () => engine.cancelAll();
  process.once('SIGINT', stop);
  try {
    const unreachable = await engine.connectAll();
    for (const [host, why] of unreachable) process.stderr.write(`l20-setup: cannot connect to ${host}: ${why}\n`);
    // One named symptom runs its benchmarks; probing them all stays on the quick, read-only probes.
    const diagnoses = await diagnose(engine, symptoms, positionals[0] === undefined ? { benchmarks: false } : {});
    if (values.json) {
      const report: TroubleshootReport = { version: 1, diagnoses };
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      const detail = positionals[0] !== undefined;
      for (const d of diagnoses) process.stdout.write(`${diagnosisLines(d, color, detail).join('\n')}\n`);
      const found = diagnoses.filter((d) => d.status === 'found').length;
      const unsure = diagnoses.filter((d) => d.status === 'inconclusive').length;
      process.stdout.write(
        `${found} found, ${unsure} inconclusive, ${diagnoses.length - found - unsure} clear — session log ${log.path}\n`,
      );
    }
    if (
      diagnoses.some(
        (d) => d.status === 'found' || (d.status === 'inconclusive' && d.checks.some((c) => c.status === 'fail')),
      )
    )
      return 1;
    return unreachable.size > 0 || diagnoses.some((d) => d.status === 'inconclusive') ? 2 : 0;
  } finally {
    process.off('SIGINT', stop);
    await log.close();
    await target.close();
  }
}
