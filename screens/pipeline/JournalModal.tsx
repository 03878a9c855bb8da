/**
 * The interrupted apply found at start (the session's journal prompt): what was in flight on which host since when,
 * what undoing it takes, and the choice — r resume, b roll back, esc later. After a rollback, its
 * per-host result (restored, removed, commands) until esc.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { useSelector } from '../store-context.js';
import { promptOf } from '../input/bindings.js';
import { fit } from '../format.js';

export function JournalModal(props: { width: number; height: number }) {
  const j = useSelector((s) => promptOf(s, 'journal')?.journal);
  if (!j) return null;
  const inner = Math.max(10, props.width - 4);
  const stages = j.resumeStages;
  const rows: Array<{ text: string; color?: string; dim?: boolean; bold?: boolean }> = [
    { text: 'An apply on these hosts was interrupted.', bold: true },
    { text: `run ${j.runId}, pid ${j.pid} (gone), started ${j.startedAt}`, dim: true },
    {
      text: j.inFlight.length
        ? 'In flight when it stopped:'
        : `No step was in flight; it stopped in stage ${j.stage ?? stages[0] ?? '?'}.`,
    },
  ];
  for (const x of j.inFlight) {
    rows.push({ text: `  ${x.host}  ${x.step} (stage ${x.stage}, ${x.danger}) since ${x.since}`, color: 'yellow' });
    if (x.command) rows.push({ text: `      running: ${x.command}`, dim: true });
    if (x.undo) rows.push({ text: `      ${x.undo}`, dim: true });
  }
  if (j.timers.length) {
    rows.push({ text: 'Rollback timers it armed (r stops them first; b runs them now):' });
    for (const t of j.timers) rows.push({ text: `  ${t}`, color: 'yellow' });
  }
  rows.push({ text: ' ' });
  if (j.phase === 'ask') {
    rows.push(
      {
        text: `r  resume: apply ${stages[0] ?? '?'}${stages.length > 1 ? ` and the stages after it (${stages.slice(1).join(', ')})` : ''}; dangerous steps still ask`,
        color: 'cyan',
      },
      {
        text: 'b  roll back: undo the in-flight steps (backups restored, new files removed), then stop',
        color: 'cyan',
      },
      { text: 'esc  decide later (the journal stays)', color: 'cyan' },
    );
  } else if (j.phase === 'rolling-back') {
    rows.push({ text: 'rolling back… (the commands run on the hosts; the session log has them)', color: 'yellow' });
  } else {
    for (const l of j.lines ?? [])
      rows.push({ text: l, ...(l.includes('✘') || l.includes('not rolled back') ? { color: 'red' } : {}) });
    rows.push({ text: 'esc closes', color: 'cyan' });
  }
  const shown = rows.slice(0, Math.max(1, props.height - 2));
  return (
    <Box flexDirection="column" height={props.height} borderStyle="round" borderColor="yellow" paddingX={1}>
      {shown.map((r, i) => (
        <Text
          key={i}
          wrap="truncate"
          bold={r.bold ?? false}
          dimColor={r.dim ?? false}
          {...(r.color ? { color: r.color } : {})}
        >
          {fit(r.text, inner)}
        </Text>
      ))}
    </Box>
  );
}
