/**
 * A store as a full check run on many hosts leaves it, built from the engine's own events through
 * the reducer: every stage's real probes (start, output lines, exit) and real check ids on every
 * host, then the stage's roll-up. The verdict of each check is the test's to choose.
 */
import { AppStore, appState } from '../../screens/state/app-store.js';
import { STAGES } from '../../checks/stages.js';
import { worstStatus, type CheckStatus, type StageId, type AnyStageDef } from '../../src/engine/types.js';
import { clean } from '../../src/util/sanitize.js';

export function hostsOf(n: number): Array<{ name: string; address: string }> {
  return Array.from({ length: n }, (_, i) => ({ name: `l20-n${i + 1}`, address: `127.0.0.1:${4001 + i}` }));
}

export type Verdict = (stage: StageId, check: string, host: string | null) => CheckStatus;

/** Runs `stages` (default: all) on every host of the store, `lines` output lines per probe. */
export function runStages(
  store: AppStore,
  verdict: Verdict,
  o: { stages?: readonly AnyStageDef[]; lines?: number } = {},
): void {
  const hosts = store.getState().hostOrder;
  for (const h of hosts) store.dispatch({ type: 'host.state', host: h, state: 'connected' });
  for (const stage of o.stages ?? STAGES) {
    store.dispatch({ type: 'stage.state', stage: stage.id, state: 'running' });
    const statuses: CheckStatus[] = [];
    for (const h of hosts) {
      for (const [i, p] of stage.probes.entries()) {
        const runId = `${stage.id}-${h}-${i}`;
        store.dispatch({
          type: 'cmd.start',
          host: h,
          runId,
          stage: stage.id,
          probe: p.id,
          commandLine: `LC_ALL=C ${p.id}`,
          sudo: p.sudo ?? false,
        });
        const lines = Array.from({ length: o.lines ?? 3 }, (_, k) => `${p.id} line ${k} on ${h}`);
        store.dispatch({
          type: 'cmd.output',
          host: h,
          runId,
          stage: stage.id,
          probe: p.id,
          stream: 'stdout',
          lines: lines.map(clean),
        });
        store.dispatch({
          type: 'cmd.exit',
          host: h,
          runId,
          exitCode: 0,
          signal: null,
          durationMs: 12,
          timedOut: false,
          cancelled: false,
        });
      }
      for (const c of stage.checks.filter((x) => x.scope === 'host')) {
        const status = verdict(stage.id, c.id, h);
        statuses.push(status);
        store.dispatch({
          type: 'check.result',
          result: {
            id: c.id,
            stage: stage.id,
            host: h,
            status,
            summary: `${c.title} on ${h}: ${status}`,
            evidence: '',
          },
        });
      }
    }
    for (const c of stage.checks.filter((x) => x.scope === 'pair')) {
      const status = verdict(stage.id, c.id, null);
      statuses.push(status);
      store.dispatch({
        type: 'check.result',
        result: { id: c.id, stage: stage.id, host: null, status, summary: `${c.title}: ${status}`, evidence: '' },
      });
    }
    store.dispatch({ type: 'stage.state', stage: stage.id, state: worstStatus(statuses) });
  }
}

// ── A terminal of a given size (ink-testing-library's has 100 columns and no rows) ────────────────

export { mountSized, until } from './sized-app.js';

export function storeOf(n: number, screen: 'pipeline' | 'stage' = 'pipeline'): AppStore {
  return new AppStore(appState(hostsOf(n), { screen }));
}
