/**
 * A store as a full check run on many hosts leaves it, built from the engine's own events through
 * the reducer: every stage's real probes (start, output lines, exit) and real check ids on every
 * host, then the stage's roll-up. The verdict of each check is the test's to choose.
 */
import { EventEmitter } from 'node:events';
import React from 'react';
import { render as inkRender } from 'ink';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import { initialState, Store } from '../../src/engine/store.js';
import type { Controller } from '../../src/engine/controller.js';
import { STAGES } from '../../src/stages.js';
import { worstStatus, type CheckStatus, type StageDef, type StageId } from '../../src/engine/types.js';

export function hostsOf(n: number): Array<{ name: string; address: string }> {
  return Array.from({ length: n }, (_, i) => ({ name: `l20-n${i + 1}`, address: `127.0.0.1:${4001 + i}` }));
}

export type Verdict = (stage: StageId, check: string, host: string | null) => CheckStatus;

/** Runs `stages` (default: all) on every host of the store, `lines` output lines per probe. */
export function runStages(store: Store, verdict: Verdict, o: { stages?: readonly StageDef<any, any>[]; lines?: number } = {}): void {
  const hosts = store.getState().hostOrder;
  for (const h of hosts) store.dispatch({ type: 'host.state', host: h, state: 'connected' });
  for (const stage of o.stages ?? STAGES) {
    store.dispatch({ type: 'stage.state', stage: stage.id, state: 'running' });
    const statuses: CheckStatus[] = [];
    for (const h of hosts) {
      for (const [i, p] of stage.probes.entries()) {
        const runId = `${stage.id}-${h}-${i}`;
        store.dispatch({ type: 'cmd.start', host: h, runId, stage: stage.id, probe: p.id, commandLine: `LC_ALL=C ${p.id}`, sudo: p.sudo ?? false });
        const lines = Array.from({ length: o.lines ?? 3 }, (_, k) => `${p.id} line ${k} on ${h}`);
        store.dispatch({ type: 'cmd.output', host: h, runId, stream: 'stdout', lines });
        store.dispatch({ type: 'cmd.exit', host: h, runId, exitCode: 0, signal: null, durationMs: 12, timedOut: false, cancelled: false });
      }
      for (const c of stage.checks.filter((x) => x.scope === 'host')) {
        const status = verdict(stage.id, c.id, h);
        statuses.push(status);
        store.dispatch({ type: 'check.result', result: { id: c.id, stage: stage.id, host: h, status, summary: `${c.title} on ${h}: ${status}`, evidence: '' } });
      }
    }
    for (const c of stage.checks.filter((x) => x.scope === 'pair')) {
      const status = verdict(stage.id, c.id, null);
      statuses.push(status);
      store.dispatch({ type: 'check.result', result: { id: c.id, stage: stage.id, host: null, status, summary: `${c.title}: ${status}`, evidence: '' } });
    }
    store.dispatch({ type: 'stage.state', stage: stage.id, state: worstStatus(statuses) });
  }
}

// ── A terminal of a given size (ink-testing-library's has 100 columns and no rows) ────────────────

class FakeStdout extends EventEmitter {
  last = '';
  writes = 0;
  constructor(readonly columns: number, readonly rows: number) {
    super();
  }
  write = (frame: string): boolean => {
    this.last = frame;
    this.writes++;
    return true;
  };
}

class FakeStdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  write(data: string): void {
    this.data = data;
    this.emit('readable');
    this.emit('data', data);
  }
  read = (): string | null => {
    const d = this.data;
    this.data = null;
    return d;
  };
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
}

/** The App in a terminal of `columns` × `rows`, every render written whole (Ink's debug mode). */
export function mountSized(store: Store, c: Controller, size: { columns: number; rows: number }) {
  const stdout = new FakeStdout(size.columns, size.rows);
  const stdin = new FakeStdin();
  const instance = inkRender(
    <Providers store={store} controller={c}>
      <App />
    </Providers>,
    { stdout: stdout as never, stderr: new FakeStdout(80, 24) as never, stdin: stdin as never, debug: true, exitOnCtrlC: false, patchConsole: false },
  );
  return { lastFrame: () => stdout.last, writes: () => stdout.writes, stdin, unmount: () => instance.unmount() };
}

export async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export function storeOf(n: number, screen: 'pipeline' | 'stage' = 'pipeline'): Store {
  return new Store(initialState(hostsOf(n), screen));
}
