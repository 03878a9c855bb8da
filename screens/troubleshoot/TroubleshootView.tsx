/**
 * The troubleshoot screen: the symptom list on the left; on the right, while probes run, the two
 * hosts' panes with their live output (the stage view's HostPane), and once done the diagnosis with
 * the evidence side by side, windowed by its scroll. Every row is one truncated Text.
 */
import React from 'react';
import { Box, Text } from 'ink';
import { STAGE_IDS } from '../../src/engine/types.js';
import { useSelector } from '../store-context.js';
import { shownDiagnosis } from '../state/ui-reducer.js';
import { fit, STATUS_COLOR } from '../format.js';
import { HostPane } from '../stage/HostPane.js';
import {
  diagnosisLines,
  SYMPTOM_MARK,
  symptomMark,
  symptomRow,
  type TroubleLine,
  type TroubleTone,
} from './troubleshoot-lines.js';

const TONE_COLOR: Partial<Record<TroubleTone, string>> = {
  title: 'cyan',
  header: 'cyan',
  found: 'red',
  clear: 'green',
  inconclusive: 'yellow',
  fix: 'cyan',
  differ: 'yellow',
  fail: STATUS_COLOR.fail,
  error: STATUS_COLOR.error,
  warn: STATUS_COLOR.warn,
  pass: STATUS_COLOR.pass,
};

/** The list column's width: wide enough for most titles, never more than a third of the screen. */
export function listWidth(width: number): number {
  return Math.max(20, Math.min(42, Math.floor(width / 3)));
}

export function TroubleshootView(props: { width: number; height: number }) {
  const symptoms = useSelector((s) => s.troubleshoot.symptoms);
  const cursor = useSelector((s) => s.ui.troubleshoot.cursor);
  const running = useSelector((s) => s.troubleshoot.running);
  const diagnoses = useSelector((s) => s.troubleshoot.diagnoses);
  const lw = listWidth(props.width);
  const rw = Math.max(20, props.width - lw - 1);
  const first = Math.max(0, Math.min(cursor - Math.floor(props.height / 2), symptoms.length - props.height));
  return (
    <Box height={props.height}>
      <Box flexDirection="column" width={lw} height={props.height}>
        {symptoms.length === 0 ? (
          <Text wrap="truncate" dimColor>
            {fit('no symptoms in the catalog', lw)}
          </Text>
        ) : null}
        {symptoms.slice(first, first + props.height).map((s, i) => {
          const mark = symptomMark(diagnoses[s.id], running === s.id);
          const row = symptomRow(s, mark, lw);
          return (
            <Text key={s.id} wrap="truncate" inverse={first + i === cursor}>
              <Text color={SYMPTOM_MARK[mark].color}>{row.slice(0, 2)}</Text>
              {row.slice(2)}
            </Text>
          );
        })}
      </Box>
      <Box flexDirection="column" width={1} height={props.height}>
        {Array.from({ length: props.height }, (_, i) => (
          <Text key={i} dimColor>
            │
          </Text>
        ))}
      </Box>
      {running !== null ? <Probing width={rw} height={props.height} /> : <Verdict width={rw} height={props.height} />}
    </Box>
  );
}

/** While a symptom's probes run: the two panes' hosts with their live output. */
function Probing(props: { width: number; height: number }) {
  const running = useSelector((s) => s.troubleshoot.running);
  const title = useSelector(
    (s) => s.troubleshoot.symptoms.find((x) => x.id === s.troubleshoot.running)?.title ?? s.troubleshoot.running,
  );
  const hostOrder = useSelector((s) => s.hostOrder);
  const left = useSelector((s) => s.ui.leftHost);
  const right = useSelector((s) => s.ui.rightHost);
  // The panes show the verdicts of the stage whose checks run now (a symptom probes several in turn).
  const stage = useSelector((s) => STAGE_IDS.find((id) => s.stages[id] === 'running') ?? s.ui.selectedStage);
  const shown = hostOrder.length > 1 && left !== right ? [hostOrder[left], hostOrder[right]] : [hostOrder[left]];
  const paneWidth = Math.floor(props.width / shown.length);
  return (
    <Box flexDirection="column" width={props.width} height={props.height}>
      <Text wrap="truncate" color="cyan">
        {fit(`probing "${title ?? running}" on ${hostOrder.join(', ')}: ${stage} checks… (c cancels)`, props.width)}
      </Text>
      <Box>
        {shown.map((h) =>
          h ? (
            <HostPane key={h} host={h} stage={stage} width={paneWidth} height={Math.max(8, props.height - 1)} />
          ) : null,
        )}
      </Box>
    </Box>
  );
}

/** The cursor's symptom: its latest diagnosis, or what it looks like and how to probe it. */
function Verdict(props: { width: number; height: number }) {
  const diagnosis = useSelector((s) => shownDiagnosis(s, s.ui.troubleshoot.cursor));
  const scroll = useSelector((s) => s.ui.troubleshoot.scroll);
  const symptom = useSelector((s) => s.troubleshoot.symptoms[s.ui.troubleshoot.cursor]);
  const hostOrder = useSelector((s) => s.hostOrder);
  const left = useSelector((s) => s.ui.leftHost);
  const right = useSelector((s) => s.ui.rightHost);
  const lines: TroubleLine[] = diagnosis
    ? diagnosisLines(
        diagnosis,
        [hostOrder[left], hostOrder[right]].filter((h): h is string => h !== undefined),
        props.width,
      )
    : symptom
      ? [
          { text: symptom.title, tone: 'title' },
          { text: `seen as: ${symptom.observed}`, tone: 'plain' },
          { text: '', tone: 'plain' },
          { text: 'not probed yet — ⏎ runs its probes on every host and diagnoses it (a: every symptom)', tone: 'dim' },
        ]
      : [];
  // The window and the "more lines" row fit in the height (a taller frame loses its top rows).
  const rows = Math.max(1, props.height - (lines.length > props.height ? 1 : 0));
  const first = Math.min(scroll, Math.max(0, lines.length - rows));
  const shown = lines.slice(first, first + rows);
  return (
    <Box flexDirection="column" width={props.width} height={props.height}>
      {shown.map((l, i) => (
        <Text
          key={first + i}
          wrap="truncate"
          dimColor={l.tone === 'dim'}
          bold={l.tone === 'differ' || l.tone === 'found'}
          {...(TONE_COLOR[l.tone] ? { color: TONE_COLOR[l.tone] } : {})}
        >
          {fit(l.text, props.width)}
        </Text>
      ))}
      {lines.length > first + rows ? (
        <Text wrap="truncate" dimColor>
          {fit(`… ${lines.length - first - rows} more lines (j)`, props.width)}
        </Text>
      ) : null}
    </Box>
  );
}
