/**
 * Verdict details: every check of the stage, worst first, and the selected one's evidence and fix —
 * what an operator reads before acting on a failure.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { checksWorstFirst } from '../../src/engine/store.js';
import { useSelector } from '../store-context.js';
import { fit, STATUS_COLOR, STATUS_GLYPH } from '../format.js';

export function DetailsView(props: { width: number; height: number }) {
  const stage = useSelector((s) => s.ui.selectedStage);
  const checks = useSelector((s) => s.checks);
  const hostOrder = useSelector((s) => s.hostOrder);
  const selected = useSelector((s) => s.ui.details) ?? 0;
  const list = checksWorstFirst({ checks, hostOrder }, stage);
  if (list.length === 0) {
    return (
      <Box height={props.height}>
        <Text wrap="truncate">{fit(`no verdicts for ${stage} yet — press esc, then r to run it`, props.width)}</Text>
      </Box>
    );
  }
  const index = Math.min(selected, list.length - 1);
  const listRows = Math.max(3, Math.min(list.length, Math.floor(props.height / 3)));
  const first = Math.max(0, Math.min(index - Math.floor(listRows / 2), list.length - listRows));
  const current = list[index]!;
  const detailRows = Math.max(1, props.height - listRows - 3);
  const body = [
    `${current.host ?? 'cluster'} · ${current.id}${current.rule ? ` · rule ${current.rule}` : ''} · ${current.status}`,
    current.summary,
    '',
    'evidence:',
    ...current.evidence.split('\n').map((l) => `  ${l.replace(/\t/g, '  ')}`),
    ...(current.fix ? ['', `fix: ${current.fix}`] : []),
  ];
  const shown = body.slice(0, detailRows);
  return (
    <Box flexDirection="column" height={props.height}>
      {list.slice(first, first + listRows).map((c, i) => {
        const isSel = first + i === index;
        return (
          <Text key={`${c.host}:${c.id}`} wrap="truncate" inverse={isSel}>
            <Text color={STATUS_COLOR[c.status]}>{STATUS_GLYPH[c.status]} </Text>
            {fit(`${(c.host ?? 'cluster').padEnd(10)} ${c.id.padEnd(26)} ${c.summary}`, props.width - 2)}
          </Text>
        );
      })}
      <Text wrap="truncate" dimColor>
        {fit(`── ${index + 1}/${list.length} ${'─'.repeat(20)}`, props.width)}
      </Text>
      {shown.map((l, i) => (
        <Text key={i} wrap="truncate" {...(l.startsWith('fix:') ? { color: 'cyan' } : {})}>
          {fit(l, props.width)}
        </Text>
      ))}
      {body.length > shown.length ? (
        <Text dimColor wrap="truncate">
          {fit(`… ${body.length - shown.length} more lines (check --json has all)`, props.width)}
        </Text>
      ) : null}
    </Box>
  );
}
