/**
 * The plan preview as lines: per step, per host, the summary, the commands and the file diff. Pure
 * (no React) so the layout is unit-tested; the view only windows and colours it.
 */
import type { StepResult } from '../../src/engine/types.js';

export interface PlanLine {
  text: string;
  tone: 'title' | 'host' | 'add' | 'remove' | 'hunk' | 'command' | 'dim' | 'error' | 'plain';
}

const MARK: Record<StepResult['status'], string> = { planned: '●', applied: '✔', skipped: '-', failed: '✘' };

export function planLines(steps: readonly StepResult[], hostOrder: readonly string[], focus?: string): PlanLine[] {
  const ids = [...new Set(steps.map((s) => s.id))];
  // A step waiting for confirmation is shown first.
  if (focus && ids.includes(focus)) {
    ids.splice(ids.indexOf(focus), 1);
    ids.unshift(focus);
  }
  const out: PlanLine[] = [];
  for (const id of ids) {
    const forStep = steps
      .filter((s) => s.id === id)
      .sort((a, b) => hostOrder.indexOf(a.host ?? '') - hostOrder.indexOf(b.host ?? ''));
    const danger = forStep[0]?.danger ?? 'safe';
    const active = forStep.filter((s) => s.status !== 'skipped');
    out.push({ text: `${id} (${danger})${active.length === 0 ? ' — nothing to do' : ''}`, tone: 'title' });
    for (const s of forStep) {
      out.push({
        text: `  ${MARK[s.status]} ${s.host ?? 'cluster'}: ${s.summary}`,
        tone: s.status === 'skipped' ? 'dim' : s.status === 'failed' ? 'error' : 'host',
      });
      if (s.status === 'skipped') continue;
      // A script shows as one command: its first line after `$`, the rest indented under it.
      for (const c of s.commands)
        c.split('\n').forEach((l, i) => out.push({ text: `      ${i === 0 ? '$' : ' '} ${l}`, tone: 'command' }));
      for (const l of s.diff.split('\n')) {
        if (l === '') continue;
        const tone: PlanLine['tone'] =
          l.startsWith('+++') || l.startsWith('---')
            ? 'dim'
            : l.startsWith('+')
              ? 'add'
              : l.startsWith('-')
                ? 'remove'
                : l.startsWith('@@')
                  ? 'hunk'
                  : 'plain';
        out.push({ text: `      ${l}`, tone });
      }
      if (s.error) for (const l of s.error.split('\n')) out.push({ text: `      ${l}`, tone: 'error' });
    }
  }
  return out;
}

/** "2 steps on 2 hosts": what a plan would run, counted as the operator reads it. */
export function plannedCount(steps: readonly StepResult[]): string {
  const planned = steps.filter((s) => s.status === 'planned');
  const ids = new Set(planned.map((s) => s.id)).size;
  const hosts = new Set(planned.map((s) => s.host ?? 'cluster')).size;
  return `${ids} step${ids === 1 ? '' : 's'} on ${hosts} host${hosts === 1 ? '' : 's'}`;
}
