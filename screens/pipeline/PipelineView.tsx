/**
 * The pipeline: stages × hosts with each cell's roll-up status, plus a cluster column; compact
 * (a glyph per host, worst first) when the hosts do not fit as full columns — matrix.ts decides.
 * Nothing here reads the panes' output, so lines streaming in render none of it again.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { STAGE_IDS, type StageId } from '../../src/engine/types.js';
import { cellStatus } from '../../src/engine/host-status.js';
import { useController, useSelector } from '../store-context.js';
import { fit, STATUS_COLOR, STATUS_GLYPH, statusWord } from '../format.js';
import { CompactMatrix } from './CompactMatrix.js';
import { Connections, StageHosts } from './HostSummaries.js';
import { matrixForm, rulerHeight, STAGE_COL } from './matrix.js';

export function PipelineView(props: { width: number; height: number }) {
  const controller = useController();
  const selected = useSelector((s) => s.ui.selectedStage);
  const hostCount = useSelector((s) => s.hostOrder.length);
  const form = matrixForm(props.width, hostCount);
  const matrixRows = STAGE_IDS.length + (form.kind === 'full' ? 1 : rulerHeight(hostCount));
  const stageLines = hostCount > 2 ? Math.min(2, Math.max(0, props.height - matrixRows - 4)) : 0;
  const connectionLines = Math.max(1, props.height - matrixRows - 3 - stageLines);
  return (
    <Box flexDirection="column" height={props.height}>
      {form.kind === 'full' ? (
        <FullMatrix width={props.width} cellWidth={form.cellWidth} implemented={controller.implementedStages} />
      ) : (
        <CompactMatrix width={props.width} form={form} implemented={controller.implementedStages} />
      )}
      <Text> </Text>
      <Text wrap="truncate" dimColor>
        {fit(`${selected}: ${controller.stagePurpose(selected)}`, props.width)}
      </Text>
      {stageLines > 0 ? <StageHosts width={props.width} maxLines={stageLines} /> : null}
      <Text> </Text>
      <Connections width={props.width} maxLines={connectionLines} />
    </Box>
  );
}

/** Every host a column of "✔ pass" under its name, while they fit. */
function FullMatrix(props: { width: number; cellWidth: number; implemented: readonly StageId[] }) {
  const selected = useSelector((s) => s.ui.selectedStage);
  const hostOrder = useSelector((s) => s.hostOrder);
  const checks = useSelector((s) => s.checks);
  const stages = useSelector((s) => s.stages);
  const state = { checks, stages };
  const columns: Array<string | null> = [...hostOrder, null];
  const header = fit('stage', STAGE_COL) + columns.map((c) => fit(c ?? 'cluster', props.cellWidth)).join('');
  return (
    <>
      <Text bold wrap="truncate">
        {fit(header, props.width)}
      </Text>
      {STAGE_IDS.map((id: StageId, i) => {
        const isSel = id === selected;
        const implemented = props.implemented.includes(id);
        const name = `${isSel ? '›' : ' '} ${String(i + 1).padStart(2)} ${id}`;
        return (
          <Box key={id}>
            <Text inverse={isSel} dimColor={!implemented} wrap="truncate">
              {fit(name, STAGE_COL)}
            </Text>
            {columns.map((host) => {
              const st = implemented ? cellStatus(state, id, host) : 'pending';
              const label = implemented ? `${STATUS_GLYPH[st]} ${statusWord(st)}` : '  not yet';
              const color = implemented ? STATUS_COLOR[st] : 'gray';
              return (
                <Text key={host ?? '(cluster)'} wrap="truncate" {...(color ? { color } : {})}>
                  {fit(label, props.cellWidth)}
                </Text>
              );
            })}
          </Box>
        );
      })}
    </>
  );
}
