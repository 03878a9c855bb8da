import React from 'react';
import { Box, Text } from 'ink';
import { footerText, globalBindings, type Binding } from '../keys.js';
import { fit } from '../format.js';

export function Footer(props: { bindings: ReadonlyArray<Binding>; width: number; notice?: string | undefined }) {
  return (
    <Box flexDirection="column">
      <Text wrap="truncate" color="yellow">{fit(props.notice ?? '', props.width)}</Text>
      <Text wrap="truncate" dimColor>{fit(footerText([...props.bindings, ...globalBindings]), props.width)}</Text>
    </Box>
  );
}

export function HelpOverlay(props: { bindings: ReadonlyArray<Binding>; width: number }) {
  const all = [...props.bindings, ...globalBindings];
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>Keys</Text>
      {all.map((b) => (
        <Text key={b.command} wrap="truncate">{fit(`${b.keys.join(' / ').padEnd(14)} ${b.description}`, props.width - 4)}</Text>
      ))}
    </Box>
  );
}
