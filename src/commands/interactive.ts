/** The interactive TUI: loads React and Ink only here, after checking that a person is at a terminal. */
import { SessionLog } from '../engine/session-log.js';
import { SavedConfig } from '../config/store.js';
import { openTarget, type Target } from '../target.js';
import { TuiSession, type FrameSource, type SessionOptions } from '../session.js';
import { checkScenario, intOption, type CliValues } from './common.js';
import { labSpeed } from './target-from-cli.js';
import { journalGate } from './apply-journal.js';
import { sudoPasswordFromCli } from './sudo-password.js';

function needsTerminal(): boolean {
  if (process.stdin.isTTY && process.stdout.isTTY) return false;
  process.stderr.write(
    'l20-setup: the interactive UI needs a terminal; use `l20-setup check …` (plain or --json output) in pipes and CI.\n',
  );
  return true;
}

export async function runInteractive(values: CliValues): Promise<number> {
  if (needsTerminal()) return 2;
  let session: TuiSession | undefined;
  // Asked before Ink takes the terminal; the TUI reads its keys from stdin, so never --sudo-password-stdin.
  if (values.lab) await checkScenario(values.scenario);
  const sudoPassword = await sudoPasswordFromCli(values, true);
  const target = await openTarget({
    ...(sudoPassword !== undefined ? { sudoPassword } : {}),
    lab: values.lab ?? false,
    ...(values.scenario ? { scenario: values.scenario } : {}),
    ...(values.seed ? { seed: intOption('seed', values.seed, 0, 2 ** 31)! } : {}),
    ...(values.speed !== undefined ? { speed: labSpeed(values.speed)! } : {}),
    ...(values.inventory ? { inventory: values.inventory } : {}),
    onUnknownHostKey: (info) => session?.askTrust(info) ?? Promise.resolve(false),
  });
  // An interrupted apply is told here too (left on the terminal after the TUI ends); the TUI asks in a modal.
  if (target) journalGate(values, 'check', target);
  const saved = values.lab || values.inventory ? undefined : new SavedConfig();
  return runTui(
    target,
    saved,
    target ? 'pipeline' : 'setup',
    sudoPassword !== undefined ? { sudoPassword } : {},
    (s) => (session = s),
  );
}

/** The screen the TUI opens on. */
type StartScreen = 'setup' | 'pipeline' | 'monitor';

/** The TUI on an opened target, starting on `screen` (the monitor verb starts on the monitor). */
export async function runInteractiveOn(
  target: Target,
  options: { screen: StartScreen } & SessionOptions,
): Promise<number> {
  if (needsTerminal()) return 2;
  return runTui(target, undefined, options.screen, options);
}

/** The TUI showing a recording: the monitor screen fed by the replay, no hosts to reach. */
export async function runReplayInteractive(
  source: FrameSource & { samples: ReadonlyArray<{ hosts: ReadonlyArray<{ name: string }> }> },
): Promise<number> {
  if (needsTerminal()) return 2;
  return runTui(
    undefined,
    undefined,
    'monitor',
    { monitorSource: source },
    undefined,
    source.samples[0]?.hosts.map((h) => ({ name: h.name, address: 'recorded' })) ?? [],
  );
}

async function runTui(
  target: Target | undefined,
  saved: SavedConfig | undefined,
  screen: StartScreen,
  options: SessionOptions,
  created?: (s: TuiSession) => void,
  recordedHosts?: Array<{ name: string; address: string }>,
): Promise<number> {
  const hosts = target
    ? target.config.hosts.map((h, i) => ({ name: h.name, address: target.hosts[i]?.address ?? h.address }))
    : (recordedHosts ?? []);
  const log = new SessionLog();
  const made: { session?: TuiSession } = {};
  // Ink decides at import time that a CI environment (CI=true) gets no live frames, only the last one
  // at exit. We have checked that both ends are a terminal, so the operator is watching: keep it live.
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  // React and its reconciler pick their build when first imported: without this the development
  // build runs, checking every render (the monitor redraws every second; it costs several times the CPU).
  process.env.NODE_ENV ??= 'production';
  // The one module of the views the CLI loads, and only here: it makes the TUI's store and renders it.
  const { renderApp } = await import('../../screens/tui.js');
  try {
    await renderApp({ hosts, screen: screen === 'monitor' ? 'pipeline' : screen }, (store) => {
      const session = new TuiSession(store, target, saved, log, options);
      made.session = session;
      created?.(session);
      if (screen === 'monitor') session.openMonitor();
      return session;
    });
  } finally {
    await made.session?.close();
    await log.close();
  }
  process.stdout.write(`l20-setup: session log ${log.path}\n`);
  return 0;
}
