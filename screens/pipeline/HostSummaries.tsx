/**
 * Under the pipeline matrix: the selected stage's hosts by verdict (the troubled ones named) and
 * the connections (one line per host up to a few hosts; past that counts, the troubled named).
 * Both subscribe to slices output lines never touch.
 */
import React, { useMemo } from 'react';
import { Text } from 'ink';
import { connectionsSelector, troubleHostsSelector } from '../../src/engine/host-status.js';
import { useSelector } from '../store-context.js';
import { fit } from '../format.js';
import { CONNECTION_LINES_MAX_HOSTS, connectionTokens, stageHostsTokens, wrapTokens, type Token } from './matrix.js';

function TokenLines(props: { lines: Token[][]; prefix: string }) {
  return (
    <>
      {props.lines.map((line, i) => (
        <Text key={`${props.prefix}${i}`} wrap="truncate">
          {line.map((t, k) => (
            <Text key={k} {...(t.color ? { color: t.color } : {})}>
              {t.text}
            </Text>
          ))}
        </Text>
      ))}
    </>
  );
}

export function StageHosts(props: { width: number; maxLines: number }) {
  const stage = useSelector((s) => s.ui.selectedStage);
  const hostOrder = useSelector((s) => s.hostOrder);
  const checks = useSelector((s) => s.checks);
  const stages = useSelector((s) => s.stages);
  const trouble = useSelector(useMemo(troubleHostsSelector, []));
  const tokens = useMemo(
    () => stageHostsTokens({ checks, stages, hostOrder }, stage, trouble),
    [checks, stages, hostOrder, stage, trouble],
  );
  return <TokenLines prefix="stage" lines={wrapTokens(tokens, props.width, props.maxLines)} />;
}

const CONNECTION_COLOR: Record<string, string> = { connected: 'green', failed: 'red', lost: 'red' };

export function Connections(props: { width: number; maxLines: number }) {
  const conns = useSelector(useMemo(connectionsSelector, []));
  if (conns.length <= CONNECTION_LINES_MAX_HOSTS && conns.length <= props.maxLines) {
    return (
      <>
        {conns.map((c) => (
          <Text key={c.host} wrap="truncate">
            <Text color={CONNECTION_COLOR[c.connection] ?? 'gray'}>● </Text>
            {fit(
              `${c.host}  ${c.address}  ${c.connection}${c.detail && c.connection !== 'connected' ? ` — ${c.detail}` : ''}`,
              props.width - 2,
            )}
          </Text>
        ))}
      </>
    );
  }
  return (
    <TokenLines prefix="conn" lines={wrapTokens(connectionTokens(conns), props.width, Math.max(1, props.maxLines))} />
  );
}
