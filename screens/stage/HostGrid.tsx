/**
 * The stage view's host grid (more than two hosts): one cell per host, worst first, a cursor, and
 * marks for the hosts the panes show. It subscribes to the hosts' statuses only (a selector that
 * keeps its answer while no host's status changes), so output lines streaming into the panes do not
 * render it again.
 */
import React, { useMemo } from 'react';
import { Box, Text } from 'ink';
import { hostEntriesSelector } from '../../src/engine/host-status.js';
import { useSelector } from '../store-context.js';
import { gridHeader, gridNameWidth, gridView } from './host-grid.js';
import { footerText, hostGridBindings } from '../input/bindings.js';

/** The grid's own keys, on its header line (the stage footer is full). */
const GRID_KEYS = footerText(hostGridBindings);

export function HostGrid(props: { width: number; rows: number; perRow: number }) {
  const select = useMemo(hostEntriesSelector, []);
  const entries = useSelector((s) => select(s, s.ui.selectedStage));
  const hostOrder = useSelector((s) => s.hostOrder);
  const cursor = useSelector((s) => s.ui.gridHost);
  const left = useSelector((s) => s.ui.leftHost);
  const right = useSelector((s) => s.ui.rightHost);
  const view = gridView(entries, {
    cursor,
    left,
    right,
    perRow: props.perRow,
    maxRows: props.rows,
    nameWidth: gridNameWidth(hostOrder),
  });
  return (
    <Box flexDirection="column">
      <Text wrap="truncate" dimColor>
        {gridHeader(entries, view, props.width, GRID_KEYS)}
      </Text>
      {view.rows.map((row, r) => (
        <Text key={`r${r}`} wrap="truncate">
          {row.map((c) => (
            <React.Fragment key={c.index}>
              <Text inverse={c.cursor} {...(c.color ? { color: c.color } : {})}>
                {c.text}
              </Text>{' '}
            </React.Fragment>
          ))}
        </Text>
      ))}
      {Array.from({ length: props.rows - view.rows.length }, (_, i) => (
        <Text key={`p${i}`}> </Text>
      ))}
    </Box>
  );
}
