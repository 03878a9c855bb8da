/**
 * What the operator reads about a journal: the CLI's lines (stderr) and the TUI modal's model. One
 * wording for both, so "in flight on which host since when" reads the same wherever it is shown.
 */
import type { FoundJournal, JournalArmed, JournalFile, JournalStep } from './journal.js';
import { resumeStages } from './journal.js';
import type { Danger, StageId } from './types.js';

/** `2026-11-30 01:33:16 UTC` from an ISO time (the journal stores UTC). */
export function when(iso: string): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(iso);
  return m ? `${m[1]} ${m[2]} UTC` : iso;
}

/** One in-flight step as a line: host, step, stage, danger, since when, and what it was running. */
export function inFlightLine(x: JournalStep): string {
  return `${x.host}  ${x.step} (stage ${x.stage}, ${x.danger}) in flight since ${when(x.startedAt)}${x.command ? ` — running: ${x.command.split('\n')[0]}` : ''}`;
}

/** What the step would undo: its files and whether each is new. */
export function undoLine(x: JournalStep): string | undefined {
  if (!x.undo) return undefined;
  const files = x.undo.files.map((f) => `${f.path}${f.existed ? '' : ' (new)'}`);
  const parts = [
    ...(files.length ? [`writes ${files.join(', ')}`] : []),
    ...(x.undo.removeFiles.length ? [`moves away ${x.undo.removeFiles.join(', ')}`] : []),
    ...(x.undo.rollback.length ? [`${x.undo.rollback.length} rollback command(s)`] : []),
  ];
  return parts.length ? parts.join('; ') : 'no files; no rollback commands';
}

/** What undoing a step of this journal takes: its files and commands, or its armed rollback timers. */
function undoOf(j: Pick<JournalFile, 'armed'>, x: JournalStep): string | undefined {
  const timers = (j.armed ?? []).filter((a) => a.host === x.host && a.step === x.step && a.runId === x.runId);
  const u = undoLine(x);
  if (timers.length === 0) return u;
  const units = `rollback timer ${timers.map((a) => `${a.unit}.timer`).join(', ')} (below)`;
  return u === undefined || u === 'no files; no rollback commands' ? units : `${u}; ${units}`;
}

/** A rollback timer the run armed: which unit on which host, what it undoes, when it fires. */
export function armedLine(a: JournalArmed): string {
  const fires = `fires ${when(a.firesAt)} unless confirmed`;
  return `${a.host}  rollback timer ${a.unit}.timer (${a.step}) — ${a.undoes}; ${fires}`;
}

function header(j: JournalFile): string {
  return `run ${j.runId}, pid ${j.pid}, started ${when(j.startedAt)}, last step event ${when(j.updatedAt)}`;
}

/**
 * The CLI's message for a found journal. `target` is how the operator named the target (e.g.
 * `--inventory inv.json`), so the suggested commands can be pasted as they are.
 */
export function describeFound(found: FoundJournal, target: string): string[] {
  const t = target ? ` ${target}` : '';
  if (found.state === 'corrupt') {
    return [
      `l20-setup: the crash journal ${found.path} is unreadable (${found.problem});`,
      `  moved aside to ${found.movedTo} (kept for you to read). If an apply was interrupted, run \`l20-setup plan${t}\` to see what is left.`,
    ];
  }
  const j = found.journal;
  if (found.state === 'running') {
    return [
      `l20-setup: an apply is running on these hosts (${header(j)}; journal ${found.path}):`,
      ...(j.inFlight.length
        ? j.inFlight.map((x) => `  ${inFlightLine(x)}`)
        : [`  stage ${j.stage ?? j.stages[0] ?? '?'} (no step in flight)`]),
      `  wait for pid ${j.pid} to finish (or stop it) before applying again.`,
    ];
  }
  const stages = resumeStages(j);
  const lines = [`l20-setup: an apply on these hosts was interrupted (${header(j)}; journal ${found.path}):`];
  if (j.inFlight.length === 0)
    lines.push(
      `  no step was in flight; it stopped in stage ${j.stage ?? stages[0] ?? '?'}, between steps or in one that records no undo`,
    );
  for (const x of j.inFlight) {
    lines.push(`  ${inFlightLine(x)}`);
    const u = undoOf(j, x);
    if (u) lines.push(`      ${u}`);
  }
  const armed = j.armed ?? [];
  if (armed.length) {
    lines.push('  rollback timers it armed (may still wait; --resume stops them, --rollback runs them now):');
    for (const a of armed) lines.push(`    ${armedLine(a)}`);
  }
  if (j.done.length)
    lines.push(
      `  done before: ${j.done.filter((d) => d.status === 'applied').length} step result(s) applied, ${j.done.length} in all`,
    );
  lines.push(
    'Continue with one of:',
    `  l20-setup apply --resume${t} --yes [--allow-reboot]   re-runs ${stages[0] ?? 'the interrupted stage'}${stages.length > 1 ? ` and the stages after it (${stages.slice(1).join(', ')})` : ''}`,
    `  l20-setup apply --rollback${t}   undoes the in-flight steps (files from their backups, rollback commands), then stops`,
  );
  return lines;
}

/** The TUI modal's model (the session's journal prompt). */
export interface JournalUi {
  /** ask: r/b/esc; rolling-back: commands run (panes show them); done: the rollback's lines, esc closes. */
  phase: 'ask' | 'rolling-back' | 'done';
  runId: string;
  pid: number;
  startedAt: string;
  stage: StageId | null;
  inFlight: Array<{
    host: string;
    stage: StageId;
    step: string;
    danger: Danger;
    since: string;
    command?: string;
    undo?: string;
  }>;
  /** Rollback timers the run armed (armedLine), looked up on the hosts before a resume or a rollback. */
  timers: string[];
  resumeStages: StageId[];
  lines?: string[];
}

export function journalUi(j: JournalFile): JournalUi {
  return {
    phase: 'ask',
    runId: j.runId,
    pid: j.pid,
    startedAt: when(j.startedAt),
    stage: j.stage,
    inFlight: j.inFlight.map((x) => {
      const u = undoOf(j, x);
      return {
        host: x.host,
        stage: x.stage,
        step: x.step,
        danger: x.danger,
        since: when(x.startedAt),
        ...(x.command ? { command: x.command.split('\n')[0] ?? '' } : {}),
        ...(u ? { undo: u } : {}),
      };
    }),
    timers: (j.armed ?? []).map(armedLine),
    resumeStages: resumeStages(j),
  };
}
