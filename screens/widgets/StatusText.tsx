import React from 'react';
import { Text } from 'ink';
import type { StageStatus } from '../../src/engine/types.js';
import { STATUS_COLOR, STATUS_GLYPH } from '../format.js';

export function StatusGlyph(props: { status: StageStatus }) {
  const color = STATUS_COLOR[props.status];
  return color ? <Text color={color}>{STATUS_GLYPH[props.status]}</Text> : <Text>{STATUS_GLYPH[props.status]}</Text>;
}
