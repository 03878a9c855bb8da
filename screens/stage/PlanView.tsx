/**
 * Plan and apply from the stage view: the plan being computed, its preview of every step on every host
 * (commands and unified diffs: the session's plan prompt), then — while applying — a dangerous step's
 * question naming its hosts (a confirm prompt). y applies or confirms, n/esc closes or refuses, ↑↓ scroll.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { useSelector } from '../store-context.js';
import { promptOf } from '../input/bindings.js';
import { fit } from '../format.js';
import { plannedCount, planLines, type PlanLine } from './plan-lines.js';

const COLOR: Partial<Record<PlanLine['tone'], string>> = {
  title: 'cyan',
  add: 'green',
  remove: 'red',
  hunk: 'magenta',
  error: 'red',
  command: 'yellow',
};

export function PlanView(props: { width: number; height: number }) {
  const confirm = useSelector((s) => promptOf(s, 'confirm'));
  const preview = useSelector((s) => promptOf(s, 'plan'));
  const apply = useSelector((s) => s.ui.apply);
  const scroll = useSelector((s) => s.ui.planScroll);
  const hostOrder = useSelector((s) => s.hostOrder);
  const stage = confirm?.stage ?? preview?.stage ?? apply?.stage;
  const steps = useSelector((s) => (stage ? s.steps[stage] : []));
  if (!stage) return null;
  const header = confirm
    ? `Apply ${confirm.step} (${confirm.danger}) on ${confirm.hosts.join(', ')}? y yes · n no (skips it)`
    : preview
      ? `plan for ${stage}: ${plannedCount(steps)} to run — y apply · esc close`
      : `planning ${stage}: running its checks and computing every step…`;
  const planning = !confirm && !preview;
  const lines = planLines(steps, hostOrder, confirm?.step);
  // Header, the window, and the "more lines" row all fit in the height: a frame taller than its box
  // loses its top rows — the header, where a dangerous step asks its question.
  const rows = Math.max(1, props.height - (lines.length > props.height - 1 ? 2 : 1));
  const first = Math.min(scroll, Math.max(0, lines.length - rows));
  const shown = lines.slice(first, first + rows);
  return (
    <Box flexDirection="column" height={props.height}>
      <Text bold wrap="truncate" color={confirm ? 'red' : 'cyan'}>
        {fit(header, props.width)}
      </Text>
      {shown.length === 0 && !planning ? (
        <Text wrap="truncate" dimColor>
          {fit("  every step's guard checks pass: nothing to do", props.width)}
        </Text>
      ) : null}
      {shown.map((l, i) => (
        <Text
          key={first + i}
          wrap="truncate"
          dimColor={l.tone === 'dim'}
          {...(COLOR[l.tone] ? { color: COLOR[l.tone] } : {})}
        >
          {fit(l.text.replace(/\t/g, '  '), props.width)}
        </Text>
      ))}
      {lines.length > first + rows ? (
        <Text wrap="truncate" dimColor>
          {fit(`… ${lines.length - first - rows} more lines (↓)`, props.width)}
        </Text>
      ) : null}
    </Box>
  );
}
