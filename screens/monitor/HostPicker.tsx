/** One line of host names with their status marks (more than two hosts); the cursor is inverse. */
import React from 'react';
import { Text } from 'ink';
import type { HostSample } from '../../src/monitor/types.js';
import { pickerItems, pickerWindow } from './layout.js';

export function HostPicker(props: {
  hosts: ReadonlyArray<HostSample>;
  cursor: number;
  left: number;
  right: number;
  width: number;
}) {
  const items = pickerItems(props.hosts, props.cursor, props.left, props.right);
  const { shown, before } = pickerWindow(items, props.width);
  return (
    <Text wrap="truncate">
      <Text dimColor>{before ? '… ' : 'hosts '}</Text>
      {shown.map((it) => (
        <Text key={it.index}>
          <Text color={it.color} inverse={it.cursor}>
            {it.text}
          </Text>
          {'  '}
        </Text>
      ))}
    </Text>
  );
}
