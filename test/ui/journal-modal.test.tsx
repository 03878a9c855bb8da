/**
 * The modal for an interrupted apply (the session's journal prompt): it lists each in-flight step with its
 * host, stage, time, command and undo; r, b and esc answer the prompt and nothing else does (no stage run,
 * no monitor); after a rollback it shows the per-host lines until esc.
 */
import React from 'react';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import { journalUi } from '../../src/engine/journal-text.js';
import type { JournalFile } from '../../src/engine/journal.js';
import { fakeController } from '../helpers/fake-controller.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

const journal: JournalFile = {
  version: 1,
  runId: '20261130T013300Z',
  pid: 4242,
  startedAt: '2026-11-30T01:33:00.000Z',
  updatedAt: '2026-11-30T01:33:20.000Z',
  source: '/tmp/inv.json',
  hosts,
  stages: ['qos', 'rdma-link'],
  stage: 'qos',
  done: [],
  armed: [],
  inFlight: ['l20-n2', 'l20-n1'].map((host) => ({
    runId: '20261130T013300Z',
    host,
    stage: 'qos' as const,
    step: 'qos.persist',
    danger: 'disruptive' as const,
    startedAt: '2026-11-30T01:33:16.000Z',
    command: 'sudo -n -- systemctl restart l20-roce-qos.service',
    undo: {
      backupDir: '/var/lib/l20-setup/backup/20261130T013300Z',
      files: [{ path: '/usr/local/sbin/l20-roce-qos', existed: true }],
      removeFiles: [],
      rollback: [],
    },
  })),
};

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const calls = (f: unknown) => (f as ReturnType<typeof vi.fn>).mock.calls.length;

describe('the interrupted-apply modal', () => {
  it('shows what was in flight per host and sends r, b and esc to the controller only', async () => {
    const store = new AppStore(appState(hosts));
    const c = fakeController({}, ['inventory', 'qos']);
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    store.dispatch({ type: 'prompt.open', prompt: { id: 3, kind: 'journal', journal: journalUi(journal) } });
    await until(() => (ui.lastFrame() ?? '').includes('An apply on these hosts was interrupted'), 'the modal');
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('run 20261130T013300Z, pid 4242 (gone), started 2026-11-30 01:33:00 UTC');
    expect(frame).toContain('l20-n2  qos.persist (stage qos, disruptive) since 2026-11-30 01:33:16 UTC');
    expect(frame).toContain('l20-n1  qos.persist (stage qos, disruptive) since 2026-11-30 01:33:16 UTC');
    expect(frame).toContain('running: sudo -n -- systemctl restart l20-roce-qos.service');
    expect(frame).toMatch(/writes \/usr\/local\/sbin\/l20-roce-qos +│/);
    expect(frame).toContain('b  roll back: undo the in-flight steps (backups restored, new files removed), then stop');
    expect(frame).toContain('r  resume: apply qos and the stages after it (rdma-link)');
    expect(frame).toMatch(/r resume {2}b roll back {2}esc later/);
    expect(frame).not.toContain('m monitor');

    // Keys the pipeline would take (run, monitor, troubleshoot, enter) do nothing while it is open.
    for (const k of ['a', 'm', 'x', '\r', 'j']) ui.stdin.write(k);
    ui.stdin.write('r');
    ui.stdin.write('b');
    ui.stdin.write('\u001b');
    await until(() => calls(c.answerJournal) === 3, 'answerJournal');
    expect((c.answerJournal as ReturnType<typeof vi.fn>).mock.calls).toEqual([
      [3, 'resume'],
      [3, 'rollback'],
      [3, 'later'],
    ]);
    expect([c.runStage, c.runAll, c.openMonitor, c.openTroubleshoot].map(calls)).toEqual([0, 0, 0, 0]);
    expect(store.getState().ui.selectedStage).toBe('inventory');
    ui.unmount();
  });

  it('after a rollback: the per-host lines, r and b no longer act (they say why), esc closes', async () => {
    const store = new AppStore(appState(hosts));
    const c = fakeController({ answerJournal: vi.fn((id: number) => store.dispatch({ type: 'prompt.close', id })) }, [
      'inventory',
      'qos',
    ]);
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    const lines = [
      'l20-n1  qos.persist (qos)',
      '  ✔ restored /usr/local/sbin/l20-roce-qos (from /var/lib/l20-setup/backup/20261130T013300Z/usr/local/sbin/l20-roce-qos)',
      'rolled back; journal removed.',
    ];
    store.dispatch({
      type: 'prompt.open',
      prompt: { id: 4, kind: 'journal', journal: { ...journalUi(journal), phase: 'done', lines } },
    });
    await until(() => (ui.lastFrame() ?? '').includes('✔ restored /usr/local/sbin/l20-roce-qos'), 'the rollback lines');
    expect(ui.lastFrame()).toContain('esc closes');
    expect(ui.lastFrame()).not.toMatch(/r resume/);
    ui.stdin.write('r');
    await until(() => (ui.lastFrame() ?? '').includes('the rollback has run — esc to close'), 'why r does nothing');
    ui.stdin.write('b');
    ui.stdin.write('\u001b');
    await until(
      () => (ui.lastFrame() ?? '').includes('stage') && !(ui.lastFrame() ?? '').includes('esc closes'),
      'the pipeline back',
    );
    expect((c.answerJournal as ReturnType<typeof vi.fn>).mock.calls).toEqual([[4, 'later']]);
    ui.unmount();
  });

  it('names the rollback timers the run armed, and what r and b do with them', async () => {
    const store = new AppStore(appState(hosts));
    const c = fakeController({}, ['inventory', 'network']);
    const ui = render(
      <Providers store={store} controller={c}>
        <App />
      </Providers>,
    );
    const armed: JournalFile['armed'] = [
      {
        runId: '20261130T013300Z',
        host: 'l20-n1',
        stage: 'network',
        step: 'network.apply',
        unit: 'l20-netplan-rollback-20261130T013300Z',
        undoes: 'restores /etc/netplan from the snapshot of run 20261130T013300Z and re-applies it',
        command: ['/usr/local/sbin/l20-netplan-rollback', '20261130T013300Z'],
        windowS: 180,
        armedAt: '2026-11-30T01:33:17.000Z',
        firesAt: '2026-11-30T01:36:17.000Z',
      },
    ];
    store.dispatch({
      type: 'prompt.open',
      prompt: { id: 5, kind: 'journal', journal: journalUi({ ...journal, armed }) },
    });
    await until(() => (ui.lastFrame() ?? '').includes('Rollback timers it armed'), 'the timers in the modal');
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('Rollback timers it armed (r stops them first; b runs them now):');
    expect(frame).toContain('l20-n1  rollback timer l20-netplan-rollback-20261130T013300Z.timer (network.apply) —');
    ui.unmount();
  });
});
