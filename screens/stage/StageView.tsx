/** The stage view: one pane per host side by side, and a cluster row for cross-host checks. */
import React from 'react';
import { Box, Text } from 'ink';
import { HostPane } from './HostPane.js';
import { useController, useSelector } from '../store-context.js';
import { fit, STATUS_COLOR, STATUS_GLYPH } from '../format.js';

export function StageView(props: { width: number; height: number }) {
  const controller = useController();
  const stage = useSelector((s) => s.ui.selectedStage);
  const hostOrder = useSelector((s) => s.hostOrder);
  const left = useSelector((s) => s.ui.leftHost);
  const right = useSelector((s) => s.ui.rightHost);
  const checks = useSelector((s) => s.checks[stage]);
  const cluster = checks.filter((c) => c.host === null);
  const clusterRows = Math.min(Math.max(cluster.length, 1), 4);
  const paneHeight = Math.max(8, props.height - 2 - clusterRows);
  const shown = hostOrder.length > 1 && left !== right ? [hostOrder[left], hostOrder[right]] : [hostOrder[left]];
  const paneWidth = Math.floor(props.width / shown.length);
  const implemented = controller.implementedStages.includes(stage);
  return (
    <Box flexDirection="column" height={props.height}>
      <Text wrap="truncate" dimColor>{fit(implemented ? controller.stagePurpose(stage) : `${stage}: not implemented yet — its checks arrive in a later release`, props.width)}</Text>
      <Box>
        {shown.map((h) => (h ? <HostPane key={h} host={h} stage={stage} width={paneWidth} height={paneHeight} /> : null))}
      </Box>
      <Text wrap="truncate" bold>{fit(`cluster checks${hostOrder.length > 2 ? ` (${hostOrder.length} hosts; [ ] pick the panes)` : ''}`, props.width)}</Text>
      {cluster.length === 0 ? (
        <Text wrap="truncate" dimColor>{fit('  none yet — press r to run the stage', props.width)}</Text>
      ) : (
        cluster.slice(0, clusterRows).map((c) => (
          <Text key={c.id} wrap="truncate">
            <Text color={STATUS_COLOR[c.status]}>{STATUS_GLYPH[c.status]} </Text>
            {fit(`${c.id}  ${c.summary}`, props.width - 2)}
          </Text>
        ))
      )}
    </Box>
  );
}
