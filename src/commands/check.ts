/**
 * `l20-setup check`, `plan` and `apply`: the same target, engine and reporters; check only reads,
 * plan computes every step's commands and diffs without changing anything, apply runs the steps whose
 * guards do not pass and verifies. Plain lines, or the version-1 JSON report.
 */
import { STAGE_IDS, type StageId } from '../engine/types.js';
import { Engine, type StageOutcome } from '../engine/runner.js';
import { StepExecutor } from '../engine/steps.js';
import { SessionLog } from '../engine/session-log.js';
import { targetFromCli } from './target-from-cli.js';
import { STAGES, stageById } from '../../checks/stages.js';
import { exitCodeFor, jsonReport, painter, plainReporter } from '../engine/run-output.js';
import { UsageError, useColor, type CliValues } from './common.js';
import { checkJournalFlags, journalGate, openApplyJournal, repairBeforeResume, runRollback } from './apply-journal.js';

export function stagesFrom(ids: string[] | undefined) {
  const wanted = (ids ?? []).flatMap((s) => s.split(','));
  for (const id of wanted) {
    if (!STAGE_IDS.includes(id as StageId))
      throw new UsageError(`--stage ${JSON.stringify(id)}: unknown stage; stages are ${STAGE_IDS.join(', ')}`);
  }
  if (wanted.length === 0) return [...STAGES];
  const defs = wanted.map((id) => stageById(id as StageId));
  const missing = wanted.filter((_, i) => !defs[i]);
  if (missing.length > 0)
    throw new UsageError(
      `stage ${missing.join(', ')} has no checks yet in this release; implemented: ${STAGES.map((s) => s.id).join(', ')}`,
    );
  // Stages always run in pipeline order, whatever order --stage named them in.
  return defs
    .filter((d): d is NonNullable<typeof d> => !!d)
    .sort((a, b) => STAGE_IDS.indexOf(a.id) - STAGE_IDS.indexOf(b.id));
}

type Mode = 'check' | 'plan' | 'apply';

export async function runCheck(values: CliValues, mode: Mode = 'check'): Promise<number> {
  const stages = stagesFrom(values.stage);
  checkJournalFlags(values, mode);
  // A rollback undoes what an interrupted apply left; it needs no confirmation of dangerous steps.
  if (mode === 'apply' && !values.yes && !values.rollback && !process.stdin.isTTY) {
    throw new UsageError(
      'apply changes the hosts: pass --yes to confirm its disruptive and network steps (or apply from the TUI, which asks per step)',
    );
  }
  const target = await targetFromCli(values);
  if (!target) return 2;
  // Before anything runs: an interrupted apply's journal is reported, and apply waits for a decision.
  let gate: ReturnType<typeof journalGate>;
  try {
    gate = journalGate(values, mode, target);
  } catch (err) {
    await target.close();
    throw err;
  }
  if (gate.kind === 'exit') {
    await target.close();
    return gate.code;
  }
  const log = new SessionLog();
  const engine = new Engine(target.hosts, { config: target.config, backpressure: () => log.whenWritable() });
  engine.subscribe((e) => log.record(e));
  const paint = painter(useColor());
  if (!values.json)
    engine.subscribe(plainReporter((l) => process.stdout.write(`${l}\n`), paint, values.verbose ?? false));
  const stop = () => engine.cancelAll();
  process.once('SIGINT', stop);
  try {
    if (gate.kind === 'rollback') return await runRollback(engine, gate.found, values.json ?? false);
    const outcomes: StageOutcome[] = [];
    if (mode === 'check') outcomes.push(...(await engine.runStages(stages)));
    else {
      const executor = new StepExecutor(engine, {
        dryRun: mode === 'plan',
        yes: values.yes ?? false,
        allowReboot: values['allow-reboot'] ?? false,
      });
      const applying = gate.stages ?? stages;
      if (gate.resumed && !(await repairBeforeResume(engine, gate.resumed)).ok) return 2;
      const journal = mode === 'apply' ? openApplyJournal(engine, target, applying, gate.carry, gate.path) : undefined;
      let run: Awaited<ReturnType<StepExecutor['applyStages']>>;
      try {
        run = await executor.applyStages(applying);
      } finally {
        journal?.finish();
      }
      outcomes.push(...run.outcomes);
      if (run.stoppedAfter && run.notRun.length > 0 && !values.json) {
        process.stdout.write(
          `stopped after ${run.stoppedAfter}: it could not fix its own checks; not run: ${run.notRun.join(', ')}\n`,
        );
      }
    }
    const hosts = target.config.hosts.map((h, i) => ({ name: h.name, address: target.hosts[i]?.address ?? h.address }));
    if (values.json) process.stdout.write(`${JSON.stringify(jsonReport(hosts, outcomes), null, 2)}\n`);
    else {
      const all = outcomes.flatMap((o) => o.results);
      const count = (s: string) => all.filter((r) => r.status === s).length;
      const steps = outcomes.flatMap((o) => o.steps ?? []);
      const stepLine =
        mode === 'check'
          ? ''
          : mode === 'plan'
            ? `${steps.filter((s) => s.status === 'planned').length} steps planned — `
            : `${outcomes.reduce((n, o) => n + (o.changed ?? 0), 0)} changed, ${steps.filter((s) => s.status === 'failed').length} steps failed — `;
      // After a cancel the counts are of checks read before it: not a verification.
      const cancelled = outcomes.some((o) => o.cancelled) ? 'cancelled: not verified — ' : '';
      const counts =
        `${count('pass')} passed, ${count('warn')} warnings, ${count('fail')} failed, ` +
        `${count('error')} errors, ${count('skip')} skipped`;
      process.stdout.write(`${cancelled}${stepLine}${counts} — session log ${log.path}\n`);
    }
    return exitCodeFor(outcomes);
  } finally {
    process.off('SIGINT', stop);
    await log.close();
    await target.close();
  }
}
