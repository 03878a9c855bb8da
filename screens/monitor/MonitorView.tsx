/**
 * The live monitor: a status line, the host picker when there are more than two hosts, and two
 * hosts side by side (one full-width column with a single host). Its height is the body height the
 * App gives it, never more; what each column drops when that is short is decided in layout.ts.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { useSelector } from '../store-context.js';
import { fit } from '../format.js';
import { HostColumn } from './HostColumn.js';
import { HostPicker } from './HostPicker.js';
import { monitorLayout, shownHosts, statusLine } from './layout.js';

export function MonitorView(props: { width: number; height: number }) {
  const frame = useSelector((s) => s.monitor.frame);
  const timebase = useSelector((s) => s.monitor.timebase);
  const left = useSelector((s) => s.ui.monitor.left);
  const right = useSelector((s) => s.ui.monitor.right);
  const cursor = useSelector((s) => s.ui.monitor.cursor);
  const metric = useSelector((s) => s.ui.monitor.metric);
  const hostOrder = useSelector((s) => s.hostOrder);

  if (!frame) {
    const who = hostOrder.length > 0 ? hostOrder.join(', ') : 'the hosts';
    return (
      <Box flexDirection="column" height={props.height}>
        <Text wrap="truncate" dimColor>
          {fit(`waiting for the first sample from ${who}…`, props.width)}
        </Text>
      </Box>
    );
  }

  const hosts = frame.sample.hosts;
  const { picker, columnHeight } = monitorLayout(props.height, hosts.length);
  const shown = shownHosts(hosts.length, left, right);
  // Two columns share the width; the right one draws a one-column rule on its left edge.
  const colWidth = shown.length > 1 ? Math.floor((props.width - 1) / 2) : props.width;
  return (
    <Box flexDirection="column" height={props.height}>
      <Text wrap="truncate" color="cyan">
        {statusLine(frame, timebase, metric, props.width)}
      </Text>
      {picker ? <HostPicker hosts={hosts} cursor={cursor} left={left} right={right} width={props.width} /> : null}
      {hosts.length === 0 ? (
        <Text wrap="truncate" dimColor>
          {fit('the sample has no hosts', props.width)}
        </Text>
      ) : (
        <Box height={columnHeight}>
          {shown.map((i, n) => {
            const host = hosts[i];
            if (!host) return null;
            const column = (
              <HostColumn
                host={host}
                history={frame.history[host.name]}
                width={colWidth}
                height={columnHeight}
                metric={metric}
                timebase={frame.timebase}
                now={frame.sample.time}
              />
            );
            return n === 0 ? (
              <Box key={host.name}>{column}</Box>
            ) : (
              <Box
                key={host.name}
                borderStyle="single"
                borderTop={false}
                borderBottom={false}
                borderRight={false}
                borderDimColor
              >
                {column}
              </Box>
            );
          })}
        </Box>
      )}
    </Box>
  );
}
