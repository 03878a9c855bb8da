/**
 * What a step does to one host beyond its plan: what undoing it would take, rolling it back, waiting for a host whose connection was lost, proving a fresh connection,
 * and how its commands read in a plan. Kept apart from the executor's flow (steps.ts).
 */
import type { StepUndo } from './events.js';
import type { HostRunner, StepCommand, StepPlan } from './types.js';
import type { Host } from '../transport/types.js';
import { quoteArgv } from '../transport/quote.js';
import { sanitize } from '../util/sanitize.js';

/** Adds an entry once per path (a resumed step meets the same files again). */
export function remember<T extends { path: string }>(list: T[], entry: T): void {
  if (!list.some((x) => x.path === entry.path)) list.push(entry);
}

/** How a command reads in a plan: argv quoted as the shell would need it; scripts as a here-document. */
export function displayCommand(c: StepCommand): string {
  const sudo = (c.sudo ?? true) ? 'sudo ' : '';
  if ('argv' in c.command) return `${sudo}${quoteArgv(c.command.argv)}`;
  const args = c.command.args?.length ? ` ${quoteArgv(c.command.args)}` : '';
  return `${sudo}bash -s${args} <<'EOF'\n${c.command.script.replace(/\n$/, '')}\nEOF`;
}

/** Opens a brand-new connection (or runs `true`) to prove the management path works now. */
export async function probeFresh(host: Host): Promise<{ ok: boolean; detail: string }> {
  try {
    if (host.probeFreshConnection) await host.probeFreshConnection(15_000);
    else {
      const r = await host.run({ argv: ['true'] }, { timeoutMs: 15_000 });
      if (r.exitCode !== 0) return { ok: false, detail: `true exited ${r.exitCode}` };
    }
    return { ok: true, detail: `a new connection to ${host.address} works` };
  } catch (err) {
    return { ok: false, detail: sanitize((err as Error).message) };
  }
}

/**
 * Waits for a host that lost its connection to run `true` again: backoff from 1 s doubling to 15 s, within
 * `limit` — a try that would outlast it (a connect to a silent host) is cut off there.
 */
export async function awaitHost(host: Host, limit = 120_000): Promise<{ ok: boolean; detail: string }> {
  const started = Date.now();
  let pause = 1000;
  let last: string;
  for (let tries = 1; ; tries++) {
    try {
      const left = Math.max(1, started + limit - Date.now());
      const r = await host.run(
        { argv: ['true'] },
        {
          timeoutMs: Math.min(15_000, left),
          signal: AbortSignal.timeout(left),
        },
      );
      const took = `${((Date.now() - started) / 1000).toFixed(1)} s, ${tries} ${tries === 1 ? 'try' : 'tries'}`;
      if (r.cancelled) last = `no answer within ${Math.round(limit / 1000)} s`;
      else if (r.exitCode === 0) return { ok: true, detail: `reconnected after ${took}` };
      else last = `\`true\` exited ${r.exitCode ?? r.signal}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() - started + pause > limit)
      return { ok: false, detail: `${tries} tries in ${Math.round((Date.now() - started) / 1000)} s; last: ${last}` };
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(15_000, pause * 2);
  }
}

/** What undoing this step takes: its files (`existing`: those there before it ran), moved files, rollback commands. */
export function undoFor(plan: StepPlan, backupDir: string, existing: ReadonlySet<string>): StepUndo {
  return {
    backupDir,
    files: (plan.files ?? []).map((f) => ({ path: f.path, existed: existing.has(f.path) })),
    removeFiles: plan.removeFiles ?? [],
    rollback: plan.rollback ?? [],
  };
}

/** Restores written files from their backups (new files are removed), then the step's rollback commands. */
export async function rollbackStep(
  host: string,
  written: ReadonlyArray<{ path: string; backupPath?: string; uncertain?: boolean }>,
  moved: ReadonlyArray<{ path: string; backupPath: string }>,
  commands: readonly StepCommand[],
  run: HostRunner,
): Promise<string> {
  const notes: string[] = [];
  for (const w of [...written].reverse()) {
    const r = w.backupPath
      ? w.uncertain
        ? // A write a lost connection cut short may have stopped before it made the backup: then the file
          // was never replaced, and there is nothing to restore.
          await run(
            host,
            'rollback',
            { script: 'if [ -e "$2" ]; then cp -p -- "$2" "$1"; fi\n', args: [w.path, w.backupPath] },
            { sudo: true },
          )
        : await run(host, 'rollback', { argv: ['cp', '-p', '--', w.backupPath, w.path] }, { sudo: true })
      : await run(host, 'rollback', { argv: ['rm', '-f', '--', w.path] }, { sudo: true });
    notes.push(
      `${w.backupPath ? 'restored' : 'removed'} ${w.path}${r.exitCode === 0 ? '' : ` (failed: exit ${r.exitCode})`}`,
    );
  }
  for (const m of [...moved].reverse()) {
    const r = await run(host, 'rollback', { argv: ['mv', '-f', '--', m.backupPath, m.path] }, { sudo: true });
    notes.push(`restored ${m.path}${r.exitCode === 0 ? '' : ` (failed: exit ${r.exitCode})`}`);
  }
  for (const c of commands) {
    const r = await run(host, 'rollback', c.command, { sudo: c.sudo ?? true, timeoutMs: c.timeoutMs ?? 10 * 60_000 });
    notes.push(`${displayCommand(c).split('\n')[0]} → exit ${r.exitCode}`);
  }
  return notes.join('; ');
}
