/**
 * The TUI's apply workflow in one place (src/session-apply.ts), on the lab: the plan's preview is a prompt
 * answered by id — refused, nothing applies and a fix on its way is forgotten; accepted, the apply runs
 * and a dangerous step asks with its own prompt naming its hosts; cancel refuses that step and the apply
 * ends. The views only ever see prompts and phases.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppStore, appState } from '../../screens/state/app-store.js';
import { promptOf } from '../../screens/input/bindings.js';
import { SessionLog } from '../../src/engine/session-log.js';
import { TuiSession } from '../../src/session.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

/** Waits for the store to reach a state (checked on every change), or fails naming it. */
function until(store: AppStore, ok: () => boolean, what: string, ms = 60_000): Promise<void> {
  if (ok()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}; notice: ${store.getState().ui.notice ?? ''}`));
    }, ms);
    const off = store.subscribe(() => {
      if (!ok()) return;
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

describe('plan, preview and apply from the TUI session (lab, pfc-mismatch)', () => {
  let t: LabTarget;
  let dir: string;
  let log: SessionLog;
  let store: AppStore;
  let session: TuiSession;
  const savedState = process.env.XDG_STATE_HOME;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'l20-session-apply-'));
    // The apply's crash journal goes to the state directory: a fresh one.
    process.env.XDG_STATE_HOME = join(dir, 'state');
    t = await labTarget({ scenario: 'pfc-mismatch' });
    log = new SessionLog(join(dir, 'sessions'));
    store = new AppStore(appState(t.config.hosts.map((h, i) => ({ name: h.name, address: t.hosts[i]!.address }))));
    const target = { config: t.config, hosts: t.hosts, source: join(dir, 'inv.json'), close: async () => undefined };
    session = new TuiSession(store, target, undefined, log);
    const panes = () => Object.values(store.getState().panes);
    await until(store, () => panes().every((p) => p.connection === 'connected'), 'both hosts connected');
  });

  afterAll(async () => {
    session.quit();
    await session.close();
    await log.close();
    await t.close();
    if (savedState === undefined) delete process.env.XDG_STATE_HOME;
    else process.env.XDG_STATE_HOME = savedState;
    rmSync(dir, { recursive: true, force: true });
  });

  it('a preview refused applies nothing and forgets the fix it was for', async () => {
    store.dispatch({ type: 'troubleshoot.fixing', fixing: { symptom: 'pfc-one-side', stage: 'qos' } });
    session.planStage('qos');
    expect(store.getState().ui.apply).toEqual({ stage: 'qos', phase: 'planning' });
    await until(store, () => promptOf(store.getState(), 'plan') !== undefined, 'the preview');
    const preview = promptOf(store.getState(), 'plan')!;
    expect(preview).toMatchObject({ stage: 'qos', planned: true });
    expect(store.getState().ui.apply).toBeUndefined();
    expect(
      store
        .getState()
        .steps.qos.filter((s) => s.status === 'planned')
        .map((s) => s.host),
    ).toContain('l20-n2');
    session.answerConfirm(preview.id, true); // not a confirm question: ignored
    expect(promptOf(store.getState(), 'plan')?.id).toBe(preview.id);
    session.answerPlan(preview.id, false);
    expect(store.getState().ui.prompts).toEqual([]);
    expect(store.getState().troubleshoot.fixing).toBeNull();
    expect(store.getState().ui.notice).toBe('qos: plan closed; nothing applied');
    expect(store.getState().busy).toBe(false);
  });

  it('accepted, it applies; the dangerous step asks naming its host; cancel refuses it and the apply ends', async () => {
    session.planStage('qos');
    await until(store, () => promptOf(store.getState(), 'plan') !== undefined, 'the preview');
    session.answerPlan(promptOf(store.getState(), 'plan')!.id, true);
    expect(store.getState().ui.apply).toEqual({ stage: 'qos', phase: 'applying' });
    await until(store, () => promptOf(store.getState(), 'confirm') !== undefined, "the dangerous step's question");
    const ask = promptOf(store.getState(), 'confirm')!;
    expect(ask).toMatchObject({ stage: 'qos', step: 'qos.persist', danger: 'disruptive', hosts: ['l20-n2'] });
    session.cancel();
    expect(promptOf(store.getState(), 'confirm')).toBeUndefined();
    await until(store, () => store.getState().ui.apply === undefined && !store.getState().busy, 'the apply to end');
    expect(store.getState().ui.notice).toMatch(/^qos: /);
    expect(store.getState().steps.qos.find((s) => s.id === 'qos.persist' && s.host === 'l20-n2')?.status).not.toBe(
      'applied',
    );
  });
});
