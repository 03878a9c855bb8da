/** `l20-setup check`: read-only checks on every host, plain lines or the version-1 JSON report. */
import { STAGE_IDS, type StageId } from '../engine/types.js';
import { Engine } from '../engine/runner.js';
import { SessionLog } from '../engine/session-log.js';
import { openTarget } from '../target.js';
import { STAGES, stageById } from '../stages.js';
import { exitCodeFor, jsonReport, painter, plainReporter } from '../report.js';
import { intOption, UsageError, useColor, type CliValues } from './common.js';

export function stagesFrom(ids: string[] | undefined) {
  const wanted = (ids ?? []).flatMap((s) => s.split(','));
  for (const id of wanted) {
    if (!STAGE_IDS.includes(id as StageId)) throw new UsageError(`--stage ${JSON.stringify(id)}: unknown stage; stages are ${STAGE_IDS.join(', ')}`);
  }
  if (wanted.length === 0) return [...STAGES];
  const defs = wanted.map((id) => stageById(id as StageId));
  const missing = wanted.filter((_, i) => !defs[i]);
  if (missing.length > 0) throw new UsageError(`stage ${missing.join(', ')} has no checks yet in this release; implemented: ${STAGES.map((s) => s.id).join(', ')}`);
  return defs.filter((d): d is NonNullable<typeof d> => !!d);
}

export async function runCheck(values: CliValues): Promise<number> {
  const stages = stagesFrom(values.stage);
  const target = await openTarget({
    lab: values.lab ?? false,
    ...(values.scenario ? { scenario: values.scenario } : {}),
    ...(values.seed ? { seed: intOption('seed', values.seed, 0, 2 ** 31)! } : {}),
    ...(values.inventory ? { inventory: values.inventory } : {}),
  });
  if (!target) {
    process.stderr.write('l20-setup: no saved inventory yet. Run `l20-setup` to enter your hosts, or pass --inventory FILE or --lab.\n');
    return 2;
  }
  const log = new SessionLog();
  const engine = new Engine(target.hosts);
  engine.subscribe((e) => log.record(e));
  const paint = painter(useColor());
  if (!values.json) engine.subscribe(plainReporter((l) => process.stdout.write(`${l}\n`), paint, values.verbose ?? false));
  const stop = () => engine.cancelAll();
  process.once('SIGINT', stop);
  try {
    const outcomes = await engine.runStages(stages);
    const hosts = target.config.hosts.map((h, i) => ({ name: h.name, address: target.hosts[i]?.address ?? h.address }));
    if (values.json) process.stdout.write(`${JSON.stringify(jsonReport(hosts, outcomes), null, 2)}\n`);
    else {
      const all = outcomes.flatMap((o) => o.results);
      const count = (s: string) => all.filter((r) => r.status === s).length;
      process.stdout.write(`${count('pass')} passed, ${count('warn')} warnings, ${count('fail')} failed, ${count('error')} errors, ${count('skip')} skipped — session log ${log.path}\n`);
    }
    return exitCodeFor(outcomes);
  } finally {
    process.off('SIGINT', stop);
    await log.close();
    await target.close();
  }
}

