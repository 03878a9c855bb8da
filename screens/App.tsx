/**
 * The root: title bar, the current screen, footer. One dispatcher routes keys: global bindings
 * first (Ctrl-C, quit, help), then the screen's table.
 */
import React, { useState } from 'react';
import { Box, Text, useInput, type Key } from 'ink';
import Spinner from 'ink-spinner';
import { STAGE_IDS } from '../src/engine/types.js';
import { useController, useSelector, useStore } from './store-context.js';
import { useTerminalSize } from './use-terminal-size.js';
import { detailsBindings, globalBindings, hostGridBindings, journalBindings, matches, monitorBindings, monitorKey, pipelineBindings, planBindings, stageBindings, setupBindings, troubleshootBindings, troubleshootCheckKey, troubleshootKey, type Binding } from './keys.js';
import { DetailsView } from './stage/DetailsView.js';
import { PlanView } from './stage/PlanView.js';
import { Footer, HelpOverlay } from './widgets/Footer.js';
import { PipelineView } from './pipeline/PipelineView.js';
import { JournalModal } from './pipeline/JournalModal.js';
import { StageView } from './stage/StageView.js';
import { SetupView } from './setup/SetupView.js';
import { MonitorView } from './monitor/MonitorView.js';
import { TroubleshootView } from './troubleshoot/TroubleshootView.js';
import { checksWorstFirst } from '../src/engine/store.js';
import { symptomIdForCheck } from '../src/troubleshoot/lookup.js';
import { nextMetric, type GpuMetric } from './monitor/monitor-lines.js';
import { fit } from './format.js';
import { gridPerRow } from './stage/host-grid.js';

/** The host grid's keys for the help overlay; its own header line shows them, not the footer. */
const gridHelp = hostGridBindings.map((b) => ({ ...b, showInFooter: false }));

/** A key of a chunk typed faster than a render ("jj⏎"): Enter and Tab inside it are still Enter and Tab. */
function keyOf(ch: string, chunk: Key): Key {
  const plain = { ...chunk, return: false, tab: false };
  if (ch === '\r' || ch === '\n') return { ...plain, return: true };
  if (ch === '\t') return { ...plain, tab: true };
  return plain;
}

export function App() {
  const store = useStore();
  const controller = useController();
  const { columns, rows } = useTerminalSize();
  const screen = useSelector((s) => s.ui.screen);
  const busy = useSelector((s) => s.busy);
  const confirmQuit = useSelector((s) => s.ui.confirmQuit);
  const showHelp = useSelector((s) => s.ui.showHelp);
  const notice = useSelector((s) => s.ui.notice);
  const stage = useSelector((s) => s.ui.selectedStage);
  const trust = useSelector((s) => s.ui.trust);
  const details = useSelector((s) => s.ui.details);
  const applyPhase = useSelector((s) => s.ui.apply?.phase);
  const journalOpen = useSelector((s) => s.ui.journal !== undefined);
  const hostGrid = useSelector((s) => s.hostOrder.length > 2);
  const dispatch = store.dispatch;
  const planOpen = screen === 'stage' && (applyPhase === 'planning' || applyPhase === 'preview' || applyPhase === 'confirm');
  // The GPU rows' sparkline metric: a view choice that no engine code reads, so it stays here.
  const [gpuMetric, setGpuMetric] = useState<GpuMetric>('util');

  // Every screen offers the monitor key except setup (its own table has it: the view owns the keys
  // while a field is edited), the monitor itself, and a dangerous step's question, which must stay
  // on screen until answered.
  // Troubleshoot opens from the pipeline and the panes (x), and on a check's symptom (T) from the
  // panes and details — not over a plan or an apply, whose keys must stay the plan's.
  const screenBindings: ReadonlyArray<Binding> =
    screen === 'pipeline' && journalOpen ? journalBindings
    : screen === 'pipeline' ? [...pipelineBindings, troubleshootKey]
      : screen === 'troubleshoot' ? troubleshootBindings
        : planOpen ? planBindings
          : details !== null ? [...detailsBindings, troubleshootCheckKey]
            : applyPhase ? [...stageBindings, ...(hostGrid ? gridHelp : [])] : [...stageBindings, ...(hostGrid ? gridHelp : []), troubleshootKey, troubleshootCheckKey];
  const bindings: ReadonlyArray<Binding> =
    screen === 'monitor' ? monitorBindings
      : screen === 'setup' ? setupBindings
        : applyPhase === 'confirm' || (screen === 'pipeline' && journalOpen) ? screenBindings : [...screenBindings, monitorKey];

  // Keys typed faster than a render arrive as one chunk ("jjj"): handle them one by one, reading
  // the store's current state rather than this render's copy.
  useInput((input, key) => {
    if (input.length > 1 && !key.ctrl && !key.meta && !input.includes('\u001b')) {
      for (const ch of input) handleKey(ch, keyOf(ch, key));
    } else handleKey(input, key);
  });

  function handleKey(input: string, key: Key) {
    const { ui } = store.getState();
    const { trust, confirmQuit, details, screen, selectedStage: stage } = ui;
    if (trust) {
      if (input === 'y') controller.answerTrust(true);
      else if (input === 'n' || key.escape) controller.answerTrust(false);
      return;
    }
    if (confirmQuit) {
      if (input === 'y' || input === 'q' || (key.ctrl && input === 'c')) controller.quit();
      else dispatch({ type: 'ui.confirmQuit', open: false });
      return;
    }
    const g = globalBindings.find((b) => matches(b, input, key));
    if (g && !(screen === 'setup' && g.command !== 'interrupt')) {
      if (g.command === 'help') dispatch({ type: 'ui.toggleHelp' });
      else if (g.command === 'interrupt') {
        if (store.getState().busy) {
          controller.cancel();
          dispatch({ type: 'ui.notice', text: 'cancelled the running commands on every host; ^C again to quit' });
        } else dispatch({ type: 'ui.confirmQuit', open: true });
      } else if (g.command === 'quit') {
        if (store.getState().busy) dispatch({ type: 'ui.confirmQuit', open: true });
        else controller.quit();
      }
      return;
    }
    // The interrupted apply's modal holds the pipeline until the operator decides (or leaves it for later).
    if (screen === 'pipeline' && ui.journal) {
      const b = journalBindings.find((x) => matches(x, input, key));
      if (ui.journal.phase === 'ask' && b?.command === 'resume') controller.resumeInterrupted();
      else if (ui.journal.phase === 'ask' && b?.command === 'rollback') controller.rollbackInterrupted();
      else if (b?.command === 'later') controller.dismissInterrupted();
      return;
    }
    if (screen === 'monitor') {
      const b = monitorBindings.find((x) => matches(x, input, key));
      switch (b?.command) {
        case 'back': controller.closeMonitor(); break;
        case 'timebase': controller.monitorTimebase(); break;
        case 'metric': setGpuMetric(nextMetric); break;
        case 'prevHost': dispatch({ type: 'monitor.cursor', delta: -1 }); break;
        case 'nextHost': dispatch({ type: 'monitor.cursor', delta: 1 }); break;
        case 'showLeft': dispatch({ type: 'monitor.show', side: 'left' }); break;
        case 'showRight': dispatch({ type: 'monitor.show', side: 'right' }); break;
        default: break;
      }
      return;
    }
    // The monitor opens from the pipeline, the stage panes, details and the plan preview alike
    // (watching the hosts while a stage applies is the point); setup handles m itself.
    if (screen !== 'setup' && ui.apply?.phase !== 'confirm' && matches(monitorKey, input, key)) {
      controller.openMonitor();
      return;
    }
    if (screen === 'troubleshoot') {
      troubleshootKeys(input, key);
      return;
    }
    if ((screen === 'pipeline' || (screen === 'stage' && !ui.apply && details === null)) && matches(troubleshootKey, input, key)) {
      controller.openTroubleshoot();
      return;
    }
    if (screen === 'stage' && !ui.apply && matches(troubleshootCheckKey, input, key)) {
      troubleshootCheck(details);
      return;
    }
    const apply = ui.apply;
    if (screen === 'stage' && apply && apply.phase !== 'applying') {
      const b = planBindings.find((x) => matches(x, input, key));
      if (b?.command === 'up') dispatch({ type: 'ui.scrollPlan', delta: -1 });
      else if (b?.command === 'down') dispatch({ type: 'ui.scrollPlan', delta: 1 });
      else if (apply.phase === 'confirm' && b?.command === 'yes') controller.answerStep(true);
      else if (apply.phase === 'confirm' && b?.command === 'no') controller.answerStep(false);
      else if (apply.phase === 'preview' && b?.command === 'yes') controller.applyStage(apply.stage);
      else if (apply.phase === 'preview' && b?.command === 'no') dispatch({ type: 'ui.apply' });
      return;
    }
    const grid = screen === 'stage' && details === null && store.getState().hostOrder.length > 2 ? hostGridBindings.find((x) => matches(x, input, key)) : undefined;
    if (screen === 'pipeline') {
      const b = pipelineBindings.find((x) => matches(x, input, key));
      switch (b?.command) {
        case 'up': dispatch({ type: 'ui.moveStage', delta: -1 }); break;
        case 'down': dispatch({ type: 'ui.moveStage', delta: 1 }); break;
        case 'open': dispatch({ type: 'ui.screen', screen: 'stage' }); break;
        case 'run': runSelected(); break;
        case 'runAll': controller.runAll(); dispatch({ type: 'ui.screen', screen: 'stage' }); break;
        case 'setup': dispatch({ type: 'ui.screen', screen: 'setup' }); break;
        default: break;
      }
    } else if (screen === 'stage' && details !== null) {
      const b = detailsBindings.find((x) => matches(x, input, key));
      if (b?.command === 'up') dispatch({ type: 'ui.details', index: details - 1 });
      else if (b?.command === 'down') dispatch({ type: 'ui.details', index: Math.min(details + 1, store.getState().checks[stage].length - 1) });
      else if (b?.command === 'close') dispatch({ type: 'ui.details', index: null });
    } else if (grid) {
      // A row of the grid is as many hosts as its width holds (the view lays it out the same way).
      const perRow = gridPerRow(columns, store.getState().hostOrder);
      switch (grid.command) {
        case 'gridNext': dispatch({ type: 'ui.gridCursor', delta: 1 }); break;
        case 'gridPrev': dispatch({ type: 'ui.gridCursor', delta: -1 }); break;
        case 'gridUp': dispatch({ type: 'ui.gridCursor', delta: -perRow }); break;
        case 'gridDown': dispatch({ type: 'ui.gridCursor', delta: perRow }); break;
        case 'showLeft': dispatch({ type: 'ui.showHost', side: 'left' }); break;
        case 'showRight': dispatch({ type: 'ui.showHost', side: 'right' }); break;
        default: break;
      }
    } else if (screen === 'stage') {
      const b = stageBindings.find((x) => matches(x, input, key));
      switch (b?.command) {
        case 'back': dispatch({ type: 'ui.screen', screen: 'pipeline' }); break;
        case 'run': runSelected(); break;
        case 'cancel': controller.cancel(); break;
        case 'left': dispatch({ type: 'ui.cycleHost', side: 'left' }); break;
        case 'right': dispatch({ type: 'ui.cycleHost', side: 'right' }); break;
        case 'prev': dispatch({ type: 'ui.moveStage', delta: -1 }); break;
        case 'next': dispatch({ type: 'ui.moveStage', delta: 1 }); break;
        case 'details': dispatch({ type: 'ui.details', index: 0 }); break;
        case 'plan':
          if (!controller.implementedStages.includes(stage)) dispatch({ type: 'ui.notice', text: `${stage} has no steps yet` });
          else if (store.getState().busy) dispatch({ type: 'ui.notice', text: 'a stage is running; wait for it or press c to cancel' });
          else controller.planStage(stage);
          break;
        default: break;
      }
    }
  }

  function troubleshootKeys(input: string, key: Key) {
    const t = store.getState().troubleshoot;
    const current = t.symptoms[t.cursor]?.id;
    const b = troubleshootBindings.find((x) => matches(x, input, key));
    switch (b?.command) {
      case 'up': dispatch({ type: 'troubleshoot.cursor', delta: -1 }); break;
      case 'down': dispatch({ type: 'troubleshoot.cursor', delta: 1 }); break;
      case 'scrollUp': dispatch({ type: 'troubleshoot.scroll', delta: -1 }); break;
      case 'scrollDown': dispatch({ type: 'troubleshoot.scroll', delta: 1 }); break;
      // A page: the body less a row of overlap, so the last line read stays in view.
      case 'pageUp': dispatch({ type: 'troubleshoot.scroll', delta: -Math.max(1, rows - 6) }); break;
      case 'pageDown': dispatch({ type: 'troubleshoot.scroll', delta: Math.max(1, rows - 6) }); break;
      case 'run': if (current) controller.runSymptom(current); break;
      case 'runAll': controller.runAllSymptoms(); break;
      case 'fix': if (current) controller.fixSymptom(current); break;
      case 'cancel': controller.cancel(); break;
      case 'back': dispatch({ type: 'troubleshoot.close' }); break;
      default: break;
    }
  }

  /** T: the symptom of the selected check in details, or of the stage's worst not-passing check in the panes. */
  function troubleshootCheck(details: number | null) {
    const s = store.getState();
    const list = checksWorstFirst(s, s.ui.selectedStage);
    const check = details !== null ? list[Math.min(details, list.length - 1)] : list.find((c) => c.status !== 'pass' && c.status !== 'skip');
    if (!check) {
      dispatch({ type: 'ui.notice', text: `no failing check in ${s.ui.selectedStage} to troubleshoot — x opens the symptom list` });
      return;
    }
    const symptom = symptomIdForCheck(check);
    if (symptom) controller.openTroubleshoot(symptom);
    else dispatch({ type: 'ui.notice', text: `no symptom in the catalog reads ${check.id} — x opens the symptom list` });
  }

  function runSelected() {
    const stage = store.getState().ui.selectedStage;
    if (!controller.implementedStages.includes(stage)) {
      dispatch({ type: 'ui.notice', text: `${stage} has no checks yet; implemented: ${controller.implementedStages.join(', ')}` });
      return;
    }
    dispatch({ type: 'ui.notice' });
    dispatch({ type: 'ui.screen', screen: 'stage' });
    controller.runStage(stage);
  }

  // Leave one spare row: a frame as tall as the terminal makes Ink clear the whole screen.
  const bodyHeight = Math.max(6, rows - 1 - 2 - 1);
  const index = STAGE_IDS.indexOf(stage) + 1;
  const title = screen === 'setup' || screen === 'pipeline' || screen === 'monitor' || screen === 'troubleshoot' ? screen : `stage ${index}/${STAGE_IDS.length} ${stage} — ${controller.stageTitle(stage)}`;
  return (
    <Box flexDirection="column" width={columns} height={rows - 1}>
      <Box>
        <Text bold color="cyan" wrap="truncate">{fit(`l20-setup · ${title}`, columns - 14)}</Text>
        {/* Every spinner frame redraws the whole screen: at 400 ms instead of 80 ms it keeps a flood of
            output from queuing keys behind frames and leaves far less garbage (docs/PERFORMANCE.md). */}
        <Text>{busy ? <Spinner type="simpleDots" /> : '   '}</Text>
        <Text wrap="truncate" dimColor>{busy ? ' running ' : ' idle    '}</Text>
      </Box>
      {showHelp ? (
        <HelpOverlay bindings={bindings} width={columns} />
      ) : screen === 'pipeline' && journalOpen ? (
        <JournalModal width={columns} height={bodyHeight} />
      ) : screen === 'pipeline' ? (
        <PipelineView width={columns} height={bodyHeight} />
      ) : screen === 'monitor' ? (
        <MonitorView width={columns} height={bodyHeight} metric={gpuMetric} />
      ) : screen === 'troubleshoot' ? (
        <TroubleshootView width={columns} height={bodyHeight} />
      ) : planOpen ? (
        <PlanView width={columns} height={bodyHeight} />
      ) : screen === 'stage' && details !== null ? (
        <DetailsView width={columns} height={bodyHeight} />
      ) : screen === 'stage' ? (
        <StageView width={columns} height={bodyHeight} />
      ) : (
        <SetupView width={columns} height={bodyHeight} onDone={() => dispatch({ type: 'ui.screen', screen: 'pipeline' })} />
      )}
      {trust ? (
        <Box flexDirection="column">
          <Text color="yellow" wrap="truncate">{fit(`${trust.fingerprint} ${trust.keyType} — unknown host key of ${trust.host} (${trust.address})`, columns)}</Text>
          <Text color="yellow" wrap="truncate">{fit(`Trust it? y/n — y ${trust.knownHostsFile !== undefined
            ? `adds it to ${trust.knownHostsFile}`
            : 'trusts it for this session only (no known_hosts file to record it in)'}; `
            + 'compare: ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on the server', columns)}</Text>
          {trust.certificateAuthority !== undefined ? (
            <Text color="yellow" wrap="wrap">{trust.certificateAuthority}</Text>
          ) : null}
        </Box>
      ) : confirmQuit ? (
        <Box flexDirection="column">
          <Text color="red" wrap="truncate">{fit(busy ? 'Commands are running. Quit anyway (they are cancelled on every host)? y/n' : 'Quit l20-setup? y/n', columns)}</Text>
          <Text> </Text>
        </Box>
      ) : (
        <Footer bindings={bindings} width={columns} notice={notice} />
      )}
    </Box>
  );
}
