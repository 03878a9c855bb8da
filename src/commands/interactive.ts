/** The interactive TUI: loads React and Ink only here, after checking that a person is at a terminal. */
import { SessionLog } from '../engine/session-log.js';
import { Store, initialState } from '../engine/store.js';
import { SavedConfig } from '../config/store.js';
import { openTarget } from '../target.js';
import { TuiSession } from '../session.js';
import { intOption, type CliValues } from './common.js';
import { labSpeed } from './check.js';

export async function runInteractive(values: CliValues): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    process.stderr.write('l20-setup: the interactive UI needs a terminal; use `l20-setup check …` (plain or --json output) in pipes and CI.\n');
    return 2;
  }
  let session: TuiSession | undefined;
  const target = await openTarget({
    lab: values.lab ?? false,
    ...(values.scenario ? { scenario: values.scenario } : {}),
    ...(values.seed ? { seed: intOption('seed', values.seed, 0, 2 ** 31)! } : {}),
    ...(values.speed !== undefined ? { speed: labSpeed(values.speed)! } : {}),
    ...(values.inventory ? { inventory: values.inventory } : {}),
    onUnknownHostKey: (info) => session?.askTrust(info) ?? Promise.resolve(false),
  });
  const saved = values.lab || values.inventory ? undefined : new SavedConfig();
  const hosts = target ? target.config.hosts.map((h, i) => ({ name: h.name, address: target.hosts[i]?.address ?? h.address })) : [];
  const store = new Store(initialState(hosts, target ? 'pipeline' : 'setup'));
  const log = new SessionLog();
  session = new TuiSession(store, target, saved, log);
  // Ink decides at import time that a CI environment (CI=true) gets no live frames, only the last one
  // at exit. We have checked that both ends are a terminal, so the operator is watching: keep it live.
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  const { renderApp } = await import('../../screens/tui.js');
  try {
    await renderApp(store, session);
  } finally {
    await session.close();
    await log.close();
  }
  process.stdout.write(`l20-setup: session log ${log.path}\n`);
  return 0;
}

