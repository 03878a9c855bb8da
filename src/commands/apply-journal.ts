/**
 * The crash journal at the CLI: before check/plan/apply touch a target, a journal an interrupted apply
 * left is reported on stderr; apply refuses to go on blindly (exit 2) unless told --resume or
 * --rollback. Also opens the journal of an apply that changes things.
 */
import {
  ApplyJournal,
  findInterruptedApply,
  journalTarget,
  removeJournal,
  resumeStages,
  type FoundJournal,
  type JournalFile,
  type JournalStep,
} from '../engine/journal.js';
import {
  handleStaleTimers,
  repairInterrupted,
  rollbackComplete,
  rollbackInterrupted,
  rollbackLines,
  timerLines,
  type TimerAction,
} from '../engine/journal-rollback.js';
import { describeFound } from '../engine/journal-text.js';
import type { Engine } from '../engine/runner.js';
import type { StageId, AnyStageDef } from '../engine/types.js';
import type { Target } from '../target.js';
import { stageById } from '../../checks/stages.js';
import { UsageError, type CliValues } from './common.js';

type Mode = 'check' | 'plan' | 'apply';

export type Gate =
  | { kind: 'exit'; code: number }
  | { kind: 'rollback'; found: Extract<FoundJournal, { state: 'interrupted' }> }
  | { kind: 'run'; stages?: Array<AnyStageDef>; carry?: JournalStep[]; resumed?: JournalFile; path?: string };

/** The TARGET flags as the operator gave them, for commands they can paste. */
function targetArgs(values: CliValues): string {
  if (values.inventory)
    return `--inventory ${/^[\w./@%+=:,-]+$/.test(values.inventory) ? values.inventory : `'${values.inventory.replace(/'/g, `'\\''`)}'`}`;
  return values.lab ? '--lab' : '';
}

/** Flags that make sense only together, checked before anything connects. */
export function checkJournalFlags(values: CliValues, mode: Mode): void {
  if ((values.resume || values.rollback) && mode !== 'apply')
    throw new UsageError('--resume and --rollback belong to apply (after an interrupted apply)');
  if (values.resume && values.rollback) throw new UsageError('--resume or --rollback: pick one');
  if ((values.resume || values.rollback) && values.stage?.length)
    throw new UsageError('--resume and --rollback take the stages from the interrupted apply; leave out --stage');
}

/** Reads the target's journal, tells the operator, and decides what this invocation does. */
export function journalGate(values: CliValues, mode: Mode, target: Pick<Target, 'source' | 'hosts'>): Gate {
  const found = findInterruptedApply(journalTarget(target));
  const say = (lines: string[]) => process.stderr.write(`${lines.join('\n')}\n`);
  if (found) say(describeFound(found, targetArgs(values)));
  if (mode !== 'apply') return { kind: 'run' };
  if (found?.state === 'running') return { kind: 'exit', code: 2 };
  const interrupted = found?.state === 'interrupted' ? found : undefined;
  if (values.rollback) {
    if (interrupted) return { kind: 'rollback', found: interrupted };
    process.stderr.write('l20-setup: nothing to roll back: no interrupted apply on these hosts\n');
    return { kind: 'exit', code: 0 };
  }
  if (values.resume) {
    if (!interrupted) {
      process.stderr.write('l20-setup: nothing to resume: no interrupted apply on these hosts (run apply to apply)\n');
      return { kind: 'exit', code: 0 };
    }
    const ids = resumeStages(interrupted.journal);
    const stages = ids.map((id) => stageById(id)).filter((d): d is NonNullable<typeof d> => d !== undefined);
    process.stderr.write(`l20-setup: resuming run ${interrupted.journal.runId}: ${ids.join(', ')}\n`);
    const j = interrupted.journal;
    return { kind: 'run', stages, carry: j.inFlight, resumed: j, path: interrupted.path };
  }
  if (interrupted) {
    process.stderr.write(
      'l20-setup: apply refuses to continue on its own after an interrupted apply: pass --resume or --rollback.\n',
    );
    return { kind: 'exit', code: 2 };
  }
  return { kind: 'run' };
}

/** The journal of an apply that changes things (a failing write is reported once; the apply goes on). */
export function openApplyJournal(
  engine: Engine,
  target: Pick<Target, 'source' | 'hosts'>,
  stages: ReadonlyArray<{ id: StageId }>,
  carry?: readonly JournalStep[],
  path?: string,
): ApplyJournal {
  const where = journalTarget(target);
  return new ApplyJournal({
    key: where.key,
    runId: engine.context.runId,
    source: target.source,
    hosts: where.hosts,
    stages: stages.map((s) => s.id),
    ...(carry ? { carry } : {}),
    ...(path ? { path } : {}),
    onError: (err) =>
      process.stderr.write(
        `l20-setup: warning: cannot write the crash journal (${err.message}); a crash now could not be resumed or rolled back from it\n`,
      ),
  }).attach(engine);
}

/**
 * Before `apply --resume`: every rollback timer the killed run armed is looked up and stopped where it
 * still waits (else it would undo what the resume proves), then a package command the kill cut short is
 * finished (else apt refuses). ok false (resume refused, journal kept) when a timer's host cannot be
 * reached or its timer not stopped.
 */
export async function repairBeforeResume(
  engine: Engine,
  journal: JournalFile,
): Promise<{ ok: boolean; timers: TimerAction[] }> {
  const say = (lines: string[]) => {
    if (lines.length) process.stderr.write(`${lines.map((l) => `l20-setup: ${l}`).join('\n')}\n`);
  };
  const timers = await handleStaleTimers(engine, journal, 'resume');
  if (timers.length) say(['rollback timers of the interrupted run:', ...timerLines(timers).map((l) => `  ${l}`)]);
  if (timers.some((t) => t.unreachable || !t.ok)) {
    say([
      'not resuming: a rollback timer of the interrupted run may still wait (it would undo the resumed change); ' +
        'the journal stays — run --resume again once every host answers',
    ]);
    return { ok: false, timers };
  }
  say(rollbackLines(await repairInterrupted(engine, journal)));
  return { ok: true, timers };
}

/** `apply --rollback`: undoes the in-flight steps; the journal goes once every one was undone. Exit 0, 1 (an action failed) or 2 (a host unreachable). */
export async function runRollback(
  engine: Engine,
  found: Extract<FoundJournal, { state: 'interrupted' }>,
  json: boolean,
): Promise<number> {
  const j = found.journal;
  // Timers first: one still waiting is honoured (its rollback runs now, to its end) before files are restored.
  const timers = await handleStaleTimers(engine, j, 'rollback');
  const results = await rollbackInterrupted(engine, j);
  const complete = rollbackComplete(results) && timers.every((t) => t.ok && !t.unreachable);
  if (complete) removeJournal(found.path);
  if (json) {
    const rollback = { runId: j.runId, complete, journal: complete ? null : found.path, timers, steps: results };
    process.stdout.write(`${JSON.stringify({ version: 1, rollback }, null, 2)}\n`);
  } else {
    const lines = [...timerLines(timers), ...rollbackLines(results)];
    process.stdout.write(`rollback of run ${j.runId}:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    process.stdout.write(
      complete
        ? `rolled back; journal removed. The later stages were not run: \`l20-setup apply\` starts again from the hosts' current state.\n`
        : `not everything was rolled back; the journal stays at ${found.path} — fix the cause and run --rollback again.\n`,
    );
  }
  if (results.some((r) => r.unreachable) || timers.some((t) => t.unreachable)) return 2;
  return complete ? 0 : 1;
}
