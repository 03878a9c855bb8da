/**
 * The root: title bar, the current screen (or the top modal that covers it), the footer (or the prompt
 * that takes its place). Keys have one way in: the one useInput here hands each chunk to the pure key
 * handler (input/handle-key.ts) and runs the commands it returns.
 */
import React, { useLayoutEffect } from 'react';
import { Box, Text, useInput } from 'ink';
import Spinner from 'ink-spinner';
import { STAGE_IDS } from '../src/engine/types.js';
import { useController, useSelector, useStore } from './store-context.js';
import { useTerminalSize } from './use-terminal-size.js';
import { handleKey, modalStack, type ModalId } from './input/handle-key.js';
import { runCommands } from './input/commands.js';
import { DetailsView } from './stage/DetailsView.js';
import { PlanView } from './stage/PlanView.js';
import { Footer, HelpOverlay, QuitPrompt, TrustPrompt } from './widgets/Footer.js';
import { PipelineView } from './pipeline/PipelineView.js';
import { JournalModal } from './pipeline/JournalModal.js';
import { StageView } from './stage/StageView.js';
import { SetupView } from './setup/SetupView.js';
import { MonitorView } from './monitor/MonitorView.js';
import { TroubleshootView } from './troubleshoot/TroubleshootView.js';
import { fit } from './format.js';

/** Modals that cover the screen (the others — field, trust, quit — leave it in view). */
const COVERING: readonly ModalId[] = ['details', 'plan', 'journal', 'confirm', 'help'];

export function App() {
  const store = useStore();
  const controller = useController();
  const { columns, rows } = useTerminalSize();
  // Keys that move by a row or a page read the size from the store (the key handler sees nothing else).
  useLayoutEffect(() => store.dispatch({ type: 'ui.resize', columns, rows }), [store, columns, rows]);
  useInput((input, key) => runCommands(handleKey(store.getState(), input, key), store, controller));

  const covering = useSelector((s) =>
    modalStack(s)
      .filter((id) => COVERING.includes(id))
      .at(-1),
  );
  const bottom = useSelector((s) => {
    const top = modalStack(s).at(-1);
    return top === 'trust' || top === 'quit' ? top : 'footer';
  });
  const screen = useSelector((s) => s.ui.screen);
  // Leave one spare row: a frame as tall as the terminal makes Ink clear the whole screen.
  const bodyHeight = Math.max(6, rows - 1 - 2 - 1);
  const body = { width: columns, height: bodyHeight };
  return (
    <Box flexDirection="column" width={columns} height={rows - 1}>
      <TitleBar width={columns} />
      {covering === 'help' ? (
        <HelpOverlay {...body} />
      ) : covering === 'journal' ? (
        <JournalModal {...body} />
      ) : covering === 'plan' || covering === 'confirm' ? (
        <PlanView {...body} />
      ) : covering === 'details' ? (
        <DetailsView {...body} />
      ) : screen === 'pipeline' ? (
        <PipelineView {...body} />
      ) : screen === 'monitor' ? (
        <MonitorView {...body} />
      ) : screen === 'troubleshoot' ? (
        <TroubleshootView {...body} />
      ) : screen === 'stage' ? (
        <StageView {...body} />
      ) : (
        <SetupView {...body} />
      )}
      {bottom === 'trust' ? (
        <TrustPrompt width={columns} />
      ) : bottom === 'quit' ? (
        <QuitPrompt width={columns} />
      ) : (
        <Footer width={columns} />
      )}
    </Box>
  );
}

function TitleBar(props: { width: number }) {
  const controller = useController();
  const screen = useSelector((s) => s.ui.screen);
  const stage = useSelector((s) => s.ui.selectedStage);
  const busy = useSelector((s) => s.busy);
  const title =
    screen !== 'stage'
      ? screen
      : `stage ${STAGE_IDS.indexOf(stage) + 1}/${STAGE_IDS.length} ${stage} — ${controller.stageTitle(stage)}`;
  return (
    <Box>
      <Text bold color="cyan" wrap="truncate">
        {fit(`l20-setup · ${title}`, props.width - 14)}
      </Text>
      {/* Every spinner frame redraws the whole screen: at 400 ms instead of 80 ms it keeps a flood of
          output from queuing keys behind frames and leaves far less garbage (docs/PERFORMANCE.md). */}
      <Text>{busy ? <Spinner type="simpleDots" /> : '   '}</Text>
      <Text wrap="truncate" dimColor>
        {busy ? ' running ' : ' idle    '}
      </Text>
    </Box>
  );
}
