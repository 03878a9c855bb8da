import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TuiSession, type TrustQuestion } from '../../src/session.js';
import { SessionLog } from '../../src/engine/session-log.js';
import { AppStore, appState } from '../../screens/state/app-store.js';

describe('the trust question is a prompt, answered by its id', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function session() {
    const dir = mkdtempSync(join(tmpdir(), 'l20-trust-'));
    dirs.push(dir);
    const log = new SessionLog(join(dir, 'sessions'));
    const store = new AppStore(appState([]));
    return { store, log, session: new TuiSession(store, undefined, undefined, log) };
  }

  const question = (name: string, over: Partial<TrustQuestion> = {}): TrustQuestion => ({
    name,
    host: '10.0.0.5',
    port: 22,
    fingerprint: `SHA256:${name}`,
    keyType: 'ssh-ed25519',
    ...over,
  });

  it("carries the transport's certificate-authority sentence to the prompt, and the answer back", async () => {
    const { store, log, session: s } = session();
    const note = 'The host is vouched for by a certificate authority … `transport: openssh` (or auto)';
    const answer = s.askTrust(question('gpu1', { recordIn: '/home/op/.ssh/known_hosts', certificateAuthority: note }));
    const [prompt] = store.getState().ui.prompts;
    expect(prompt).toEqual({
      id: expect.any(Number),
      kind: 'trust',
      host: 'gpu1',
      address: '10.0.0.5:22',
      keyType: 'ssh-ed25519',
      fingerprint: 'SHA256:gpu1',
      knownHostsFile: '/home/op/.ssh/known_hosts',
      certificateAuthority: note,
    });
    s.answerTrust(prompt!.id, false);
    expect(await answer).toBe(false);
    expect(store.getState().ui.prompts).toEqual([]);
    await s.close();
    await log.close();
  });

  it('several hosts ask at once: each answer reaches its own host, a repeated or stale id is ignored', async () => {
    const { store, log, session: s } = session();
    const first = s.askTrust(question('gpu1'));
    const second = s.askTrust(question('gpu2'));
    const [p1, p2] = store.getState().ui.prompts;
    expect([p1?.kind === 'trust' && p1.host, p2?.kind === 'trust' && p2.host]).toEqual(['gpu1', 'gpu2']);
    s.answerTrust(p2!.id, true);
    expect(await second).toBe(true);
    s.answerTrust(p2!.id, false);
    s.answerConfirm(p1!.id, true); // the wrong kind of answer for that id: ignored
    expect(store.getState().ui.prompts.map((p) => p.id)).toEqual([p1!.id]);
    // Closing the session leaves nobody to answer: the key is not trusted.
    await s.close();
    expect(await first).toBe(false);
    expect(store.getState().ui.prompts).toEqual([]);
    await log.close();
  });
});
