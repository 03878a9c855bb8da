/** The typed events the engine emits. The store, the session log and the reporters consume them. */
import type { ArmedTimer, CheckResult, Danger, StageId, StageStatus, StepCommand, StepResult } from './types.js';
import type { HostConnectionState } from '../transport/types.js';
import type { CleanText } from '../util/sanitize.js';

export type EngineEvent =
  | { type: 'host.state'; host: string; state: HostConnectionState; detail?: CleanText }
  | { type: 'stage.state'; stage: StageId; state: StageStatus }
  /** `script`: what a `bash -s` line read on its stdin, so the log holds everything that ran (bench/fanout.mjs replays it). */
  | {
      type: 'cmd.start';
      host: string;
      runId: string;
      stage: StageId;
      probe: string;
      commandLine: string;
      sudo: boolean;
      script?: string;
      /** Not run: the result of this command as `stage/probe` ran it earlier in the same pass (Engine.runStages). */
      reusedFrom?: string;
    }
  /**
   * A command's lines as they arrived (each chunk's complete lines), with the stage and probe it runs for (as its
   * cmd.start says), so a consumer files them without looking the command up. Session logs written before
   * `stage` and `probe` were on this event lack them.
   */
  | {
      type: 'cmd.output';
      host: string;
      runId: string;
      stage: StageId;
      probe: string;
      stream: 'stdout' | 'stderr';
      lines: CleanText[];
    }
  | {
      type: 'cmd.exit';
      host: string;
      runId: string;
      exitCode: number | null;
      signal: string | null;
      durationMs: number;
      timedOut: boolean;
      cancelled: boolean;
    }
  | { type: 'check.result'; result: CheckResult }
  | { type: 'step.start'; stage: StageId; step: string; host: string; danger: Danger; undo?: StepUndo }
  | { type: 'step.note'; stage: StageId; step: string; host: string | null; line: CleanText }
  /** A step is about to arm a rollback timer on a host (the crash journal records it first). */
  | { type: 'timer.armed'; stage: StageId; step: string; host: string; timer: ArmedTimer }
  | { type: 'step.result'; result: StepResult }
  | { type: 'engine.idle' };

/**
 * What undoing a step that was cut short takes, recorded before it changes anything (the crash journal
 * keeps it): the files it writes (and whether each existed, so a file without a backup is known to be
 * new), the files it moves into the backup directory, and its rollback commands.
 */
export interface StepUndo {
  backupDir: string;
  files: ReadonlyArray<{ path: string; existed: boolean }>;
  removeFiles: readonly string[];
  rollback: readonly StepCommand[];
}

export type EngineListener = (event: EngineEvent) => void;
