/** One host's column: the lines hostColumnLines chose for this height, one truncated Text each. */
import React, { useMemo } from 'react';
import { Box, Text } from 'ink';
import type { HostSample } from '../../src/monitor/types.js';
import { hostColumnLines } from './layout.js';
import type { GpuMetric, History } from './monitor-lines.js';

const EMPTY: History = {};

export function HostColumn(props: {
  host: HostSample;
  history: History | undefined;
  width: number;
  height: number;
  metric: GpuMetric;
  timebase: string;
  now: string;
}) {
  const { host, history, width, height, metric, timebase, now } = props;
  const lines = useMemo(
    () => hostColumnLines(host, history ?? EMPTY, { width, height, metric, timebase, now }),
    [host, history, width, height, metric, timebase, now],
  );
  return (
    <Box flexDirection="column" width={width} height={height}>
      {lines.map((l) => (
        <Text key={l.key} wrap="truncate" color={l.color} dimColor={l.dim ?? false} bold={l.bold ?? false}>
          {l.text}
        </Text>
      ))}
    </Box>
  );
}
