/**
 * Plan and apply from the stage view: the preview of every step on every host (commands and unified
 * diffs), then — while applying — a dangerous step's confirmation naming its hosts. y applies or
 * confirms, n/esc closes or refuses, ↑↓ scroll.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { useSelector } from '../store-context.js';
import { fit } from '../format.js';
import { planLines, type PlanLine } from './plan-lines.js';

const COLOR: Partial<Record<PlanLine['tone'], string>> = { title: 'cyan', add: 'green', remove: 'red', hunk: 'magenta', error: 'red', command: 'yellow' };

export function PlanView(props: { width: number; height: number }) {
  const apply = useSelector((s) => s.ui.apply);
  const hostOrder = useSelector((s) => s.hostOrder);
  const steps = useSelector((s) => (apply ? s.steps[apply.stage] : []));
  if (!apply) return null;
  const header =
    apply.phase === 'planning' ? `planning ${apply.stage}: running its checks and computing every step…`
      : apply.phase === 'confirm' && apply.confirm
        ? `Apply ${apply.confirm.step} (${apply.confirm.danger}) on ${apply.confirm.hosts.join(', ')}? y yes · n no (skips it)`
        : `plan for ${apply.stage}: ${steps.filter((s) => s.status === 'planned').length} step(s) to run — y apply on ${hostOrder.join(', ')} · esc close`;
  const lines = planLines(steps, hostOrder, apply.confirm?.step);
  const rows = Math.max(1, props.height - 1);
  const first = Math.min(apply.scroll, Math.max(0, lines.length - rows));
  const shown = lines.slice(first, first + rows);
  return (
    <Box flexDirection="column" height={props.height}>
      <Text bold wrap="truncate" color={apply.phase === 'confirm' ? 'red' : 'cyan'}>{fit(header, props.width)}</Text>
      {shown.length === 0 && apply.phase !== 'planning' ? <Text wrap="truncate" dimColor>{fit('  every step\'s guard checks pass: nothing to do', props.width)}</Text> : null}
      {shown.map((l, i) => (
        <Text key={first + i} wrap="truncate" dimColor={l.tone === 'dim'} {...(COLOR[l.tone] ? { color: COLOR[l.tone] } : {})}>{fit(l.text.replace(/\t/g, '  '), props.width)}</Text>
      ))}
      {lines.length > first + rows ? <Text wrap="truncate" dimColor>{fit(`… ${lines.length - first - rows} more lines (↓)`, props.width)}</Text> : null}
    </Box>
  );
}
