/** The pipeline: stages × hosts with each cell's roll-up status, plus a cluster column. */
import React from 'react';
import { Box, Text } from 'ink';
import { STAGE_IDS, type StageId } from '../../src/engine/types.js';
import { stageStatusFor } from '../../src/engine/store.js';
import { useController, useSelector } from '../store-context.js';
import { fit, STATUS_COLOR, STATUS_GLYPH, statusWord } from '../format.js';

const STAGE_COL = 26;

export function PipelineView(props: { width: number; height: number }) {
  const controller = useController();
  const selected = useSelector((s) => s.ui.selectedStage);
  const hostOrder = useSelector((s) => s.hostOrder);
  const checks = useSelector((s) => s.checks);
  const stages = useSelector((s) => s.stages);
  const state = { checks, stages };
  const panes = useSelector((s) => s.panes);
  const columns: Array<string | null> = [...hostOrder, null];
  const cellWidth = Math.max(8, Math.min(16, Math.floor((props.width - STAGE_COL - 2) / columns.length)));
  const visibleColumns = columns.slice(0, Math.max(1, Math.floor((props.width - STAGE_COL - 2) / cellWidth)));
  const header = fit('stage', STAGE_COL) + visibleColumns.map((c) => fit(c ?? 'cluster', cellWidth)).join('');
  return (
    <Box flexDirection="column" height={props.height}>
      <Text bold wrap="truncate">{fit(header, props.width)}</Text>
      {STAGE_IDS.map((id: StageId, i) => {
        const isSel = id === selected;
        const implemented = controller.implementedStages.includes(id);
        const name = `${isSel ? '›' : ' '} ${String(i + 1).padStart(2)} ${id}`;
        return (
          <Box key={id}>
            <Text inverse={isSel} dimColor={!implemented} wrap="truncate">{fit(name, STAGE_COL)}</Text>
            {visibleColumns.map((host) => {
              const st = implemented ? stageStatusFor(state, id, host) : 'pending';
              const label = implemented ? `${STATUS_GLYPH[st]} ${statusWord(st)}` : '  not yet';
              const color = implemented ? STATUS_COLOR[st] : 'gray';
              return (
                <Text key={host ?? '(cluster)'} wrap="truncate" {...(color ? { color } : {})}>{fit(label, cellWidth)}</Text>
              );
            })}
          </Box>
        );
      })}
      <Text> </Text>
      <Text wrap="truncate" dimColor>{fit(`${selected}: ${controller.stagePurpose(selected)}`, props.width)}</Text>
      <Text> </Text>
      {hostOrder.slice(0, Math.max(1, props.height - STAGE_IDS.length - 6)).map((h) => {
        const p = panes[h];
        const color = p?.connection === 'connected' ? 'green' : p?.connection === 'failed' || p?.connection === 'lost' ? 'red' : 'gray';
        return (
          <Text key={h} wrap="truncate">
            <Text color={color}>● </Text>
            {fit(`${h}  ${p?.address ?? ''}  ${p?.connection ?? ''}${p?.connectionDetail && p.connection !== 'connected' ? ` — ${p.connectionDetail}` : ''}`, props.width - 2)}
          </Text>
        );
      })}
    </Box>
  );
}
