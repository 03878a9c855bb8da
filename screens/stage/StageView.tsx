/**
 * The stage view: one pane per host side by side, and a cluster row for cross-host checks. With
 * more than two hosts a grid above the panes shows every host's state in this stage, worst first,
 * and picks the two the panes show.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { HostPane } from './HostPane.js';
import { HostGrid } from './HostGrid.js';
import { gridPerRow, stageLayout } from './host-grid.js';
import { useController, useSelector } from '../store-context.js';
import { fit, STATUS_COLOR, STATUS_GLYPH } from '../format.js';

export function StageView(props: { width: number; height: number }) {
  const controller = useController();
  const stage = useSelector((s) => s.ui.selectedStage);
  const hostOrder = useSelector((s) => s.hostOrder);
  const left = useSelector((s) => s.ui.leftHost);
  const right = useSelector((s) => s.ui.rightHost);
  const checks = useSelector((s) => s.checks[stage]);
  const steps = useSelector((s) => s.steps[stage]);
  const stepLine = stepSummary(steps);
  const cluster = checks.filter((c) => c.host === null);
  const clusterRows = Math.min(Math.max(cluster.length, 1), 4);
  const perRow = gridPerRow(props.width, hostOrder);
  const { gridRows, paneHeight } = stageLayout({
    height: props.height,
    hostCount: hostOrder.length,
    perRow,
    fixedRows: 2 + clusterRows + (stepLine ? 1 : 0),
  });
  const shown = hostOrder.length > 1 && left !== right ? [hostOrder[left], hostOrder[right]] : [hostOrder[left]];
  const paneWidth = Math.floor(props.width / shown.length);
  const implemented = controller.implementedStages.includes(stage);
  return (
    <Box flexDirection="column" height={props.height}>
      <Text wrap="truncate" dimColor>
        {fit(
          implemented
            ? controller.stagePurpose(stage)
            : `${stage}: not implemented yet — its checks arrive in a later release`,
          props.width,
        )}
      </Text>
      {gridRows > 0 ? <HostGrid width={props.width} rows={gridRows} perRow={perRow} /> : null}
      <Box>
        {shown.map((h) =>
          h ? <HostPane key={h} host={h} stage={stage} width={paneWidth} height={paneHeight} /> : null,
        )}
      </Box>
      <Text wrap="truncate" bold>
        {fit('cluster checks', props.width)}
      </Text>
      {cluster.length === 0 ? (
        <Text wrap="truncate" dimColor>
          {fit('  none yet — press r to run the stage', props.width)}
        </Text>
      ) : (
        cluster.slice(0, clusterRows).map((c) => (
          <Text key={c.id} wrap="truncate">
            <Text color={STATUS_COLOR[c.status]}>{STATUS_GLYPH[c.status]} </Text>
            {fit(`${c.id}  ${c.summary}`, props.width - 2)}
          </Text>
        ))
      )}
      {stepLine ? <Text wrap="truncate">{fit(stepLine, props.width)}</Text> : null}
    </Box>
  );
}

/** One line for the stage's latest plan/apply: each step that did (or would do) something, per status. */
function stepSummary(steps: ReadonlyArray<{ id: string; host: string | null; status: string }>): string {
  const acted = steps.filter((s) => s.status !== 'skipped');
  if (acted.length === 0) return steps.length > 0 ? 'steps: nothing to do — every guard check passes' : '';
  const mark: Record<string, string> = { planned: '●', applied: '✔', failed: '✘' };
  const byStep = new Map<string, string[]>();
  for (const s of acted)
    byStep.set(`${mark[s.status] ?? '?'} ${s.id}`, [
      ...(byStep.get(`${mark[s.status] ?? '?'} ${s.id}`) ?? []),
      s.host ?? 'cluster',
    ]);
  return `steps: ${[...byStep].map(([k, hosts]) => `${k} (${hosts.join(', ')})`).join(' · ')}`;
}
