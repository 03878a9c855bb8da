import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TuiSession } from '../../src/session.js';
import { SessionLog } from '../../src/engine/session-log.js';
import { initialState, Store } from '../../src/engine/store.js';

describe('the trust question reaches the prompt whole', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("carries the transport's certificate-authority sentence to the store, and the answer back", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-trust-'));
    dirs.push(dir);
    const log = new SessionLog(join(dir, 'sessions'));
    const store = new Store(initialState([]));
    const session = new TuiSession(store, undefined, undefined, log);
    const note = 'The host is vouched for by a certificate authority … `transport: openssh` (or auto)';
    const answer = session.askTrust({
      name: 'gpu1', host: '10.0.0.5', port: 22, fingerprint: 'SHA256:abc', keyType: 'ssh-ed25519',
      recordIn: '/home/op/.ssh/known_hosts', certificateAuthority: note,
    });
    expect(store.getState().ui.trust).toEqual({
      host: 'gpu1', address: '10.0.0.5:22', keyType: 'ssh-ed25519', fingerprint: 'SHA256:abc',
      knownHostsFile: '/home/op/.ssh/known_hosts', certificateAuthority: note,
    });
    session.answerTrust(false);
    expect(await answer).toBe(false);
    expect(store.getState().ui.trust).toBeUndefined();
    await session.close();
    await log.close();
  });
});
