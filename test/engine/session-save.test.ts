import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TuiSession } from '../../src/session.js';
import { SavedConfig } from '../../src/config/store.js';
import { SessionLog } from '../../src/engine/session-log.js';
import { initialState, Store } from '../../src/engine/store.js';

describe('setup saves the hosts with the chosen network design', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('first run: nothing saved, design A offered; saving B persists it with the hosts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-save-'));
    dirs.push(dir);
    const saved = new SavedConfig({ cwd: dir });
    const log = new SessionLog(join(dir, 'sessions'));
    const store = new Store(initialState([]));
    const session = new TuiSession(store, undefined, saved, log);
    expect(session.initialDesign).toBe('A');
    const err = await session.saveHosts(
      // Loopback ports nothing listens on: the session connects after saving, and is refused at once.
      [
        { name: 'gpu-a', address: '127.0.0.1', port: 9, role: 'head' },
        { name: 'gpu-b', address: '127.0.0.1', port: 9, role: 'worker' },
      ],
      { design: 'B' },
    );
    expect(err).toBeUndefined();
    expect(saved.load()?.network).toEqual({ design: 'B', mtu: 9000 });
    expect(saved.load()?.hosts.map((h) => h.name)).toEqual(['gpu-a', 'gpu-b']);
    // The session attaches the saved hosts and connects; wait until both refusals are in before closing the log.
    for (let i = 0; i < 500 && !Object.values(store.getState().panes).every((p) => p.connection === 'failed'); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(Object.values(store.getState().panes).map((p) => p.connection)).toEqual(['failed', 'failed']);
    session.quit();
    await session.close();
    await log.close();
  });
});
