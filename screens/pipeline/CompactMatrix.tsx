/**
 * The pipeline matrix when the hosts do not fit as full columns: one glyph per host, the hosts
 * worst first (the same columns on every row), a ruler of inventory numbers above, then the cluster
 * cell and the stage's counts. Each row is one truncated line of coloured runs, so it can neither
 * wrap nor cost a node per host.
 */
import React, { useMemo } from 'react';
import { Text } from 'ink';
import { STAGE_IDS, type StageId } from '../../src/engine/types.js';
import { cellStatus, troubleHostsSelector } from '../../src/engine/host-status.js';
import { useSelector } from '../store-context.js';
import { fit, STATUS_COLOR, STATUS_GLYPH, statusWord } from '../format.js';
import {
  CLUSTER_COL,
  COMPACT_STAGE_COL,
  matrixHostOrder,
  rulerLines,
  stageSummary,
  stripRuns,
  type MatrixForm,
} from './matrix.js';

export function CompactMatrix(props: {
  width: number;
  form: Extract<MatrixForm, { kind: 'compact' }>;
  implemented: readonly StageId[];
}) {
  const { form, implemented } = props;
  const selected = useSelector((s) => s.ui.selectedStage);
  const hostOrder = useSelector((s) => s.hostOrder);
  const checks = useSelector((s) => s.checks);
  const stages = useSelector((s) => s.stages);
  const trouble = useSelector(useMemo(troubleHostsSelector, []));
  const order = useMemo(
    () => matrixHostOrder({ checks, stages, hostOrder }, implemented, trouble),
    [checks, stages, hostOrder, implemented, trouble],
  );
  const shown = order.slice(0, form.shown);
  const ruler = rulerLines(shown, form.hostCell, hostOrder.length);
  const strip = shown.length * form.hostCell;
  const title =
    shown.length < hostOrder.length ? `the ${shown.length} worst of ${hostOrder.length}` : 'hosts, worst first';
  return (
    <>
      {ruler.map((line, d) => (
        <Text key={`ruler${d}`} bold wrap="truncate">
          {fit(d === 0 ? 'stage' : d === ruler.length - 1 ? '  host number →' : '', COMPACT_STAGE_COL)}
          {line}
          {d === 0 ? fit(` ${fit('cluster', CLUSTER_COL)}${title}`, props.width - COMPACT_STAGE_COL - strip) : ''}
        </Text>
      ))}
      {STAGE_IDS.map((id, i) => {
        const isSel = id === selected;
        const on = implemented.includes(id);
        const statuses = shown.map((h) => cellStatus({ checks, stages }, id, hostOrder[h] ?? null));
        const all = on ? hostOrder.map((h) => cellStatus({ checks, stages }, id, h)) : [];
        const cluster = cellStatus({ checks, stages }, id, null);
        return (
          <Text key={id} wrap="truncate">
            <Text inverse={isSel} dimColor={!on}>
              {fit(`${isSel ? '›' : ' '} ${String(i + 1).padStart(2)} ${id}`, COMPACT_STAGE_COL)}
            </Text>
            {on ? (
              stripRuns(statuses, form.hostCell).map((r, k) => (
                <Text key={k} {...(r.color ? { color: r.color } : {})}>
                  {r.text}
                </Text>
              ))
            ) : (
              <Text dimColor>{fit('not yet', strip)}</Text>
            )}{' '}
            {on ? (
              <Text {...(STATUS_COLOR[cluster] ? { color: STATUS_COLOR[cluster] } : {})}>
                {fit(`${STATUS_GLYPH[cluster]} ${statusWord(cluster)}`, CLUSTER_COL - 1)}{' '}
              </Text>
            ) : (
              <Text>{fit('', CLUSTER_COL)}</Text>
            )}
            {stageSummary(all, form.summaryWidth).map((r, k) => (
              <Text key={`s${k}`} {...(r.color ? { color: r.color } : {})}>
                {r.text}
              </Text>
            ))}
          </Text>
        );
      })}
    </>
  );
}
