/**
 * Renders the app full screen. Ink 6.8 has no alternateScreen option, so we enter the alternate
 * screen ourselves and leave it on every exit path (quit, signals, crashes). The TUI's one store is
 * made here and handed to the session the caller makes on it.
 */
import React from 'react';
import { render } from 'ink';
import { App } from './App.js';
import { Providers } from './store-context.js';
import { AppStore, appState } from './state/app-store.js';
import type { Controller } from '../src/engine/controller.js';
import type { EngineStore } from '../src/engine/store-types.js';

export interface TuiStart {
  hosts: ReadonlyArray<{ name: string; address: string }>;
  /** The screen it opens on (the monitor verb's session opens the monitor itself, over the pipeline). */
  screen: 'setup' | 'pipeline';
}

type TuiController = Controller & { whenQuit(): Promise<void> };

const ENTER_ALT = '\u001b[?1049h';
const LEAVE_ALT = '\u001b[?1049l';
const SHOW_CURSOR = '\u001b[?25h';

export async function renderApp(start: TuiStart, createSession: (store: EngineStore) => TuiController): Promise<void> {
  const store = new AppStore(
    appState(start.hosts, {
      screen: start.screen,
      terminal: { columns: process.stdout.columns || 80, rows: process.stdout.rows || 24 },
    }),
  );
  const controller = createSession(store);
  store.dispatch({
    type: 'ui.session',
    implemented: controller.implementedStages,
    hosts: controller.initialHosts,
    design: controller.initialDesign ?? 'A',
  });
  const out = process.stdout;
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    out.write(LEAVE_ALT + SHOW_CURSOR);
  };
  out.write(ENTER_ALT);
  const onSignal = (signal: NodeJS.Signals) => {
    controller.quit();
    instance.unmount();
    restore();
    process.exit(signal === 'SIGTERM' ? 143 : 129);
  };
  const onCrash = (err: unknown) => {
    try {
      instance.unmount();
    } finally {
      restore();
      process.stderr.write(`l20-setup: internal error: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(2);
    }
  };
  process.on('exit', restore);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);
  process.once('uncaughtException', onCrash);
  const instance = render(
    <Providers store={store} controller={controller}>
      <App />
    </Providers>,
    // maxFps only caps how soon a frame follows the last one: what asks for frames is the spinner (12.5/s) and
    // the panes' output (at most 10/s, 4/s in a flood: engine/output-coalescer.ts). At 15 a key waited up to
    // 67 ms behind a recent frame; at 60, 17 ms.
    { exitOnCtrlC: false, patchConsole: false, maxFps: 60, incrementalRendering: false },
  );
  try {
    await controller.whenQuit();
  } finally {
    instance.unmount();
    await instance.waitUntilExit().catch(() => undefined);
    restore();
    process.off('SIGTERM', onSignal);
    process.off('SIGHUP', onSignal);
    process.off('uncaughtException', onCrash);
    process.off('exit', restore);
  }
}
