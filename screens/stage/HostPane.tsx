/**
 * One host's pane: connection, the commands of the viewed stage's latest run, the live output (last lines that
 * fit) and each check's verdict with its one-line reason. Every row is one truncated Text or a
 * fixed-width LiveRows row, so content can never change the layout's height.
 */
import React from 'react';
import { Box, Text } from 'ink';
import type { StageId } from '../../src/engine/types.js';
import { lastLines } from '../../src/engine/store.js';
import { useSelector } from '../store-context.js';
import { fit, formatDuration, formatExit, STATUS_COLOR, STATUS_GLYPH } from '../format.js';
import { LiveRows } from './LiveRows.js';
import { colorWanted, fitColumns, outputRow, styled } from './live-rows.js';

/** Width of the probe tag in front of each output line (parallel probes interleave). */
const PROBE_TAG = 12;

const COLOR = colorWanted();

const CONNECTION_COLOR: Record<string, string> = {
  connected: 'green',
  connecting: 'cyan',
  lost: 'red',
  failed: 'red',
  closed: 'gray',
  idle: 'gray',
};

export function paneLayout(height: number, commandCount: number, checkCount: number) {
  const inner = Math.max(4, height - 2); // border
  const checks = Math.min(checkCount, Math.max(1, Math.floor((inner - 2) / 2)));
  const commands = Math.min(commandCount, 3, Math.max(0, inner - 2 - checks - 2));
  const output = Math.max(1, inner - 1 - commands - checks - 1);
  return { inner, checks, commands, output };
}

export function HostPane(props: { host: string; stage: StageId; width: number; height: number }) {
  const pane = useSelector((s) => s.panes[props.host]);
  const checks = useSelector((s) => s.checks[props.stage]);
  if (!pane) return null;
  const mine = checks.filter((c) => c.host === props.host);
  const w = Math.max(10, props.width - 4);
  // This stage's commands and output only: after a run-all the panes of every stage still show their own run.
  const ran = pane.commands.filter((c) => c.stage === props.stage);
  const stageOutput = pane.output[props.stage];
  const layout = paneLayout(props.height, ran.length, mine.length);
  const commands = ran.slice(-layout.commands);
  const output = lastLines(stageOutput, layout.output);
  const totalLines = stageOutput?.totalLines ?? 0;
  const running = ran.filter((c) => c.running).length;
  const finished = ran.length - running;
  const nonZero = ran.filter((c) => !c.running && c.exitCode !== 0).length;
  return (
    <Box
      flexDirection="column"
      borderStyle="round"
      borderColor={CONNECTION_COLOR[pane.connection] ?? 'gray'}
      width={props.width}
      height={props.height}
      paddingX={1}
    >
      <Text wrap="truncate" bold>
        {fit(
          `${pane.host}  ${pane.address}  ${pane.connection}${running ? `  ${running} running` : ''}${pane.connectionDetail && pane.connection !== 'connected' ? ` — ${pane.connectionDetail}` : ''}`,
          w,
        )}
      </Text>
      {commands.map((c) => {
        const st = c.running ? 'running' : c.exitCode === 0 ? 'pass' : 'warn';
        const tail = c.running
          ? 'running'
          : `${formatExit(c.exitCode, c.timedOut, c.cancelled)} ${c.reusedFrom !== undefined ? `· reused from ${c.reusedFrom}` : formatDuration(c.durationMs)}`;
        return (
          <Text key={c.runId} wrap="truncate" color={STATUS_COLOR[st]}>
            {fit(`$ ${c.sudo ? '[root] ' : ''}${c.probe}: ${tail}`, w)}
          </Text>
        );
      })}
      {/* The count and the output change with every update: LiveRows, so Ink neither measures nor keeps them. */}
      <LiveRows
        width={w}
        height={1}
        rows={[
          styled(
            fitColumns(
              `── ${finished}/${ran.length} commands done${nonZero ? `, ${nonZero} exit≠0` : ''}${totalLines > output.length ? ` · last ${output.length} of ${totalLines} lines (all in the session log)` : ''}`,
              w,
            ),
            { dim: true },
            COLOR,
          ),
        ]}
      />
      <LiveRows width={w} height={layout.output} rows={output.map((l) => outputRow(l, w, PROBE_TAG, COLOR))} />
      {mine.slice(0, layout.checks).map((c) => (
        <Text key={c.id} wrap="truncate">
          <Text color={STATUS_COLOR[c.status]}>{STATUS_GLYPH[c.status]} </Text>
          {fit(`${c.id.replace(`${props.stage}.`, '')}  ${c.summary}`, w - 2)}
        </Text>
      ))}
    </Box>
  );
}
