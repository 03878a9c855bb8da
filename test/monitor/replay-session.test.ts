/** A recording played into the TUI's store: frames in recorded order, timebase switches, no way "back" to hosts that are not there. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../src/engine/session-log.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import { ReplaySource } from '../../src/monitor/replay.js';
import type { MonitorSample } from '../../src/monitor/types.js';
import { TuiSession } from '../../src/session.js';

function sample(i: number): MonitorSample {
  return {
    version: 1,
    time: new Date(Date.UTC(2026, 10, 29, 12, 0, i)).toISOString(),
    hosts: [
      {
        name: 'l20-a',
        stale: false,
        updated: null,
        error: null,
        xids: [],
        alerts: [],
        vllm: null,
        ports: [],
        gpus: [
          {
            index: 0,
            name: 'NVIDIA L20',
            uuid: 'GPU-1',
            utilPct: i * 10,
            memUsedMiB: 1,
            memTotalMiB: 46068,
            tempC: 40,
            powerW: 100,
            powerCapW: 350,
            smClockMHz: 2520,
            smClockMaxMHz: 2520,
            pstate: 'P0',
            eventReasons: 0,
            processes: [],
          },
        ],
      },
    ],
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function until(store: AppStore, ok: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (ok()) return resolve();
    const off = store.subscribe(() => {
      if (!ok()) return;
      off();
      resolve();
    });
  });
}

describe('replay in the TUI session', () => {
  it('plays every sample in order into the store, rebuilds history, switches timebase, and stays on the monitor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-replay-'));
    dirs.push(dir);
    const samples = [0, 1, 2, 3].map(sample);
    const source = new ReplaySource(samples, 'rec.jsonl');
    expect(source.intervalMs).toBe(1_000);
    const store = new AppStore(appState([{ name: 'l20-a', address: 'recorded' }]));
    const log = new SessionLog(join(dir, 'sessions'));
    const session = new TuiSession(store, undefined, undefined, log, { monitorSource: source });
    session.openMonitor();
    expect(store.getState().ui.screen).toBe('monitor');
    await until(store, () => store.getState().monitor.frame?.replay?.position === 4);
    const frame = store.getState().monitor.frame!;
    expect(frame.source).toBe('replay');
    expect(frame.replay).toEqual({ position: 4, total: 4, file: 'rec.jsonl' });
    expect(frame.sample).toEqual(samples[3]);
    expect(frame.history['l20-a']?.['gpu0.util']).toEqual([0, 10, 20, 30]);
    session.monitorTimebase();
    expect(store.getState().monitor.frame?.timebase).toBe('10m');
    expect(store.getState().monitor.frame?.history['l20-a']?.['gpu0.util']).toEqual([15]); // one 10 s bucket
    session.closeMonitor();
    expect(store.getState().ui.screen).toBe('monitor');
    expect(store.getState().ui.notice).toContain('no hosts to go back to');
    await session.close();
    await log.close();
  });
});
