import { describe, expect, it } from 'vitest';
import { STAGE_IDS, type CheckStatus, type StageId } from '../../src/engine/types.js';
import { initialState, reduce, stageStatusFor } from '../../src/engine/store.js';
import type { AppStore } from '../../screens/state/app-store.js';
import { cellStatus, hostsWorstFirst } from '../../src/engine/host-status.js';
import { gridPerRow, gridView, stageLayout, MIN_PANE_HEIGHT } from '../../screens/stage/host-grid.js';
import { matrixForm, rulerLines, stageHostsTokens, wrapTokens } from '../../screens/pipeline/matrix.js';
import { fakeController } from '../helpers/fake-controller.js';
import { hostsOf, mountSized, runStages, storeOf, until } from '../helpers/many-hosts.js';
import { clean } from '../../src/util/sanitize.js';

const ALL = [...STAGE_IDS];
const controller = () => fakeController({}, ALL);

/** l20-n7 fails inventory, l20-n33 fails os, l20-n12 warns everywhere, l20-n20's inventory probe errors; the rest pass. */
function verdict(stage: StageId, _check: string, host: string | null): CheckStatus {
  if (host === 'l20-n7' && stage === 'inventory') return 'fail';
  if (host === 'l20-n33' && stage === 'os') return 'fail';
  if (host === 'l20-n20' && stage === 'inventory') return 'error';
  if (host === 'l20-n12') return 'warn';
  return 'pass';
}

/** A finished run of every stage on n hosts; l20-n40 lost its connection afterwards (when there is one). */
function ranStore(n: number, screen: 'pipeline' | 'stage'): AppStore {
  const store = storeOf(n, screen);
  runStages(store, verdict);
  if (n >= 40) store.dispatch({ type: 'host.state', host: 'l20-n40', state: 'lost', detail: clean('read ECONNRESET') });
  store.dispatch({ type: 'engine.idle' });
  return store;
}

function frameFits(frame: string, size: { columns: number; rows: number }): void {
  const lines = frame.split('\n');
  expect(lines.length, `${size.columns}×${size.rows} height`).toBeLessThanOrEqual(size.rows - 1);
  for (const l of lines) expect(Array.from(l).length, `line "${l}"`).toBeLessThanOrEqual(size.columns);
}

/** The grid's cells in screen order: "✘ l20-n7" → ['✘', 'l20-n7']. */
function gridCells(frame: string): Array<[string, string]> {
  const lines = frame.split('\n');
  const start = lines.findIndex((l) => /^\d+ hosts: /.test(l));
  const cells: Array<[string, string]> = [];
  for (const l of lines.slice(start + 1)) {
    if (l.startsWith('╭')) break;
    for (const m of l.matchAll(/([·…✔!✘?\-⊘]) (l20-n\d+)/g)) cells.push([m[1]!, m[2]!]);
  }
  return cells;
}

describe('the host grid, worst first', () => {
  it("orders a stage's hosts: unreachable or error, fail, warn, running, not run, pass — then inventory order", () => {
    let s = initialState(hostsOf(8));
    const result = (host: string, status: CheckStatus) => ({
      type: 'check.result' as const,
      result: { id: 'inventory.os', stage: 'inventory' as const, host, status, summary: '', evidence: '' },
    });
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'running' });
    s = reduce(s, result('l20-n2', 'pass'));
    s = reduce(s, result('l20-n3', 'warn'));
    s = reduce(s, result('l20-n4', 'fail'));
    s = reduce(s, result('l20-n5', 'error'));
    s = reduce(s, {
      type: 'cmd.start',
      host: 'l20-n6',
      runId: 'r6',
      stage: 'inventory',
      probe: 'lspci',
      commandLine: 'lspci',
      sudo: false,
    });
    s = reduce(s, result('l20-n7', 'pass'));
    s = reduce(s, { type: 'host.state', host: 'l20-n8', state: 'failed', detail: clean('connect ECONNREFUSED') });
    // The stage still runs: hosts without a verdict are running, finished ones show theirs.
    expect(hostsWorstFirst(s, 'inventory').map((e) => `${e.host}:${e.trouble ? 'unreachable' : e.status}`)).toEqual([
      'l20-n5:error',
      'l20-n8:unreachable',
      'l20-n4:fail',
      'l20-n3:warn',
      'l20-n1:running',
      'l20-n6:running',
      'l20-n2:pass',
      'l20-n7:pass',
    ]);
    s = reduce(s, { type: 'stage.state', stage: 'inventory', state: 'error' });
    s = reduce(s, {
      type: 'cmd.exit',
      host: 'l20-n6',
      runId: 'r6',
      exitCode: 0,
      signal: null,
      durationMs: 5,
      timedOut: false,
      cancelled: false,
    });
    expect(
      hostsWorstFirst(s, 'inventory')
        .map((e) => e.status)
        .slice(4, 6),
    ).toEqual(['pending', 'pending']);
  });

  it("the pipeline's memoized cell says what stageStatusFor says, for every stage, host and the cluster", () => {
    const store = ranStore(16, 'pipeline');
    store.dispatch({ type: 'stage.state', stage: 'qos', state: 'running' });
    const s = store.getState();
    for (const st of STAGE_IDS)
      for (const h of [...s.hostOrder, null]) expect(cellStatus(s, st, h)).toBe(stageStatusFor(s, st, h));
  });

  it('moves the cursor worst first (tab wraps, a row is clamped) and puts its host into either pane', () => {
    const store = ranStore(64, 'stage');
    const at = () => store.getState().hostOrder[store.getState().ui.gridHost];
    const move = (delta: number) => store.dispatch({ type: 'ui.gridCursor', delta });
    // Worst first in inventory: l20-n20 (error), l20-n40 (lost), l20-n7 (fail), l20-n12 (warn), l20-n1…
    expect(at()).toBe('l20-n1');
    move(-1);
    expect(at()).toBe('l20-n12');
    move(-1);
    move(-1);
    move(-1);
    expect(at()).toBe('l20-n20');
    move(-1);
    expect(at()).toBe('l20-n64');
    move(1);
    expect(at()).toBe('l20-n20');
    move(100);
    expect(at()).toBe('l20-n64');
    move(-100);
    expect(at()).toBe('l20-n20');
    store.dispatch({ type: 'ui.showHost', side: 'right' });
    expect(store.getState().ui).toMatchObject({ leftHost: 0, rightHost: 19 });
    // The left pane's host into the right pane: the two swap.
    move(4);
    expect(at()).toBe('l20-n1');
    store.dispatch({ type: 'ui.showHost', side: 'right' });
    expect(store.getState().ui).toMatchObject({ leftHost: 19, rightHost: 0 });
    // The cursor stays on its host when a verdict reorders the grid.
    store.dispatch({
      type: 'check.result',
      result: { id: 'inventory.os', stage: 'inventory', host: 'l20-n1', status: 'fail', summary: '', evidence: '' },
    });
    expect(at()).toBe('l20-n1');
  });
});

describe('64 hosts in the stage view', () => {
  for (const size of [
    { columns: 120, rows: 40 },
    { columns: 200, rows: 50 },
    { columns: 160, rows: 48 },
  ]) {
    it(`fit ${size.columns}×${size.rows}: the grid worst first above two panes of a usable height`, async () => {
      const store = ranStore(64, 'stage');
      const ui = mountSized(store, controller(), size);
      await until(() => ui.lastFrame().includes('64 hosts:'), 'the grid');
      const frame = ui.lastFrame();
      frameFits(frame, size);
      expect(frame).toContain('64 hosts: 1 ? error · 1 ⊘ unreachable · 1 ✘ fail · 1 ! warn · 60 ✔ pass');
      const cells = gridCells(frame);
      expect(cells.slice(0, 5)).toEqual([
        ['?', 'l20-n20'],
        ['⊘', 'l20-n40'],
        ['✘', 'l20-n7'],
        ['!', 'l20-n12'],
        ['✔', 'l20-n1'],
      ]);
      // The panes: both borders on screen, at least MIN_PANE_HEIGHT rows apart.
      const lines = frame.split('\n');
      const top = lines.findIndex((l) => l.startsWith('╭'));
      const bottom = lines.findIndex((l) => l.startsWith('╰'));
      expect(bottom - top + 1).toBeGreaterThanOrEqual(MIN_PANE_HEIGHT);
      // What does not fit is counted, never dropped silently.
      const hidden = Number(/\+(\d+) more ↓/.exec(frame)?.[1] ?? 0);
      expect(cells.length + hidden).toBe(64);
      ui.unmount();
    });
  }

  it('the cursor keys walk the grid and { } open the picked hosts side by side', async () => {
    const store = ranStore(64, 'stage');
    const size = { columns: 160, rows: 48 };
    const ui = mountSized(store, controller(), size);
    await until(() => ui.lastFrame().includes('64 hosts:'), 'the grid');
    const perRow = gridPerRow(size.columns, store.getState().hostOrder);
    ui.stdin.write('\u001b[Z'); // shift-tab: from l20-n1 back to the warn host
    await until(() => store.getState().ui.gridHost === 11, 'cursor on l20-n12');
    ui.stdin.write('{');
    await until(() => ui.lastFrame().includes('│ l20-n12  127.0.0.1:4012  connected'), 'l20-n12 in the left pane');
    ui.stdin.write('\u001b[Z');
    ui.stdin.write('\u001b[Z');
    ui.stdin.write('\u001b[Z'); // the error host, first in the grid
    await until(() => store.getState().ui.gridHost === 19, 'cursor on l20-n20');
    ui.stdin.write('}');
    await until(() => ui.lastFrame().includes('│ l20-n20  127.0.0.1:4020'), 'l20-n20 in the right pane');
    expect(ui.lastFrame()).toMatch(/╭─+╮╭─+╮\n│ l20-n12 {2}127\.0\.0\.1:4012 .*││ l20-n20 {2}127\.0\.0\.1:4020/);
    // The marks: ◧ on the left pane's host, ◨ on the right's.
    expect(ui.lastFrame()).toContain('l20-n12◧');
    expect(ui.lastFrame()).toContain('l20-n20◨');
    // A row down is the same column one row lower; tab one host on.
    ui.stdin.write('\u001b[B');
    await until(() => store.getState().ui.gridHost === hostsOfGrid(store)[perRow]!, 'a row down');
    ui.stdin.write('\t');
    await until(() => store.getState().ui.gridHost === hostsOfGrid(store)[perRow + 1]!, 'one host on');
    // [ ] still cycle the panes.
    ui.stdin.write(']');
    await until(() => store.getState().ui.rightHost === 20, '] cycles the right pane');
    ui.unmount();
  });

  it("keeps the cursor's host in view when it goes past the rows shown", async () => {
    const store = ranStore(64, 'stage');
    const ui = mountSized(store, controller(), { columns: 120, rows: 40 });
    await until(() => ui.lastFrame().includes('64 hosts:'), 'the grid');
    for (let i = 0; i < 8; i++) ui.stdin.write('\u001b[B');
    await until(() => store.getState().ui.gridHost === 63, 'the last host');
    const frame = ui.lastFrame();
    expect(frame).toMatch(/↑ \d+ more/);
    expect(gridCells(frame).map(([, h]) => h)).toContain('l20-n64');
    frameFits(frame, { columns: 120, rows: 40 });
    ui.unmount();
  });

  it('with two hosts there is no grid, and tab does nothing', async () => {
    const store = ranStore(2, 'stage');
    const ui = mountSized(store, controller(), { columns: 120, rows: 40 });
    await until(() => ui.lastFrame().includes('cluster checks'), 'the stage view');
    expect(ui.lastFrame()).not.toMatch(/\d+ hosts: /);
    ui.stdin.write('\t');
    ui.stdin.write('{');
    await new Promise((r) => setImmediate(r));
    expect(store.getState().ui).toMatchObject({ leftHost: 0, rightHost: 1, gridHost: 0 });
    ui.unmount();
  });
});

function hostsOfGrid(store: AppStore): number[] {
  const s = store.getState();
  return hostsWorstFirst(s, s.ui.selectedStage).map((e) => e.index);
}

describe('the pipeline at 64 hosts', () => {
  for (const size of [
    { columns: 120, rows: 40 },
    { columns: 200, rows: 50 },
  ]) {
    it(`is compact at ${size.columns}×${size.rows}: a glyph per host, trouble first, failing hosts named, connections counted`, async () => {
      const store = ranStore(64, 'pipeline');
      const ui = mountSized(store, controller(), size);
      await until(() => ui.lastFrame().includes('connections:'), 'the pipeline');
      const frame = ui.lastFrame();
      frameFits(frame, size);
      const inventory = frame.split('\n').find((l) => l.includes(' 1 inventory'))!;
      // Columns worst first over every stage: l20-n20 (error) and l20-n40 (lost), then l20-n7 and l20-n33 (fail), l20-n12 (warn).
      const glyphs = inventory.slice(16).replace(/ /g, '');
      expect(glyphs.slice(0, 5)).toBe('?✔✘✔!');
      expect(inventory).toContain(
        size.columns >= 200 ? '1 error · 1 fail · 1 warn · 61 pass' : '1err 1fail 1warn 61pass',
      );
      expect(frame).toContain(
        'inventory on 64 hosts: ? error: l20-n20 · ⊘ unreachable: l20-n40 · ✘ fail: l20-n7 · ! warn: l20-n12 · 60 ✔ pass',
      );
      expect(frame).toContain('connections: 1 lost: l20-n40 (read ECONNRESET) · 63 connected');
      expect(frame).not.toContain('● l20-n');
      // The ruler names the columns: l20-n20, l20-n40, l20-n7, l20-n33, l20-n12.
      const lines = frame.split('\n');
      const r = lines.findIndex((l) => l.startsWith('stage'));
      const cell = size.columns >= 200 ? 2 : 1;
      const numbers = [0, 1, 2, 3, 4].map((k) => `${lines[r]![16 + k * cell]}${lines[r + 1]![16 + k * cell]}`.trim());
      expect(numbers).toEqual(['20', '40', '7', '33', '12']);
      ui.unmount();
    });
  }

  it("names the selected stage's failing hosts as the cursor moves", async () => {
    const store = ranStore(64, 'pipeline');
    const ui = mountSized(store, controller(), { columns: 120, rows: 40 });
    ui.stdin.write('j');
    await until(() => ui.lastFrame().includes('os on 64 hosts:'), 'the os stage');
    expect(ui.lastFrame()).toContain('✘ fail: l20-n33 · ! warn: l20-n12');
    ui.unmount();
  });

  it('an output line of any host renders nothing again in the pipeline; a verdict does', async () => {
    const store = ranStore(64, 'pipeline');
    const ui = mountSized(store, controller(), { columns: 120, rows: 40 });
    await until(() => ui.lastFrame().includes('connections:'), 'the pipeline');
    const before = ui.writes();
    for (const h of store.getState().hostOrder) {
      store.dispatch({
        type: 'cmd.output',
        host: h,
        runId: `vllm-${h}-0`,
        stage: 'vllm',
        probe: 'ssh-connection',
        stream: 'stdout',
        lines: [clean('another line')],
      });
    }
    await new Promise((r) => setImmediate(r));
    expect(ui.writes()).toBe(before);
    store.dispatch({
      type: 'check.result',
      result: {
        id: 'inventory.os',
        stage: 'inventory',
        host: 'l20-n64',
        status: 'fail',
        summary: 'Ubuntu 20.04',
        evidence: '',
      },
    });
    await until(() => ui.lastFrame().includes('✘ fail: l20-n7 l20-n64'), 'the new verdict');
    ui.unmount();
  });

  it('in the stage view an output line of a host not in a pane renders nothing again', async () => {
    const store = ranStore(64, 'stage');
    const ui = mountSized(store, controller(), { columns: 160, rows: 48 });
    await until(() => ui.lastFrame().includes('64 hosts:'), 'the grid');
    const before = ui.writes();
    store.dispatch({
      type: 'cmd.output',
      host: 'l20-n50',
      runId: 'inventory-l20-n50-0',
      stage: 'inventory',
      probe: 'os-release',
      stream: 'stdout',
      lines: [clean('another line')],
    });
    await new Promise((r) => setImmediate(r));
    expect(ui.writes()).toBe(before);
    store.dispatch({
      type: 'cmd.output',
      host: 'l20-n1',
      runId: 'inventory-l20-n1-0',
      stage: 'inventory',
      probe: 'os-release',
      stream: 'stdout',
      lines: [clean('a line in the left pane')],
    });
    await until(() => ui.lastFrame().includes('a line in the left pane'), 'the left pane');
    ui.unmount();
  });
});

describe('a small terminal', () => {
  it('at 80×24 both views fit, the worst hosts still named', async () => {
    const size = { columns: 80, rows: 24 };
    for (const screen of ['pipeline', 'stage'] as const) {
      const store = ranStore(64, screen);
      const ui = mountSized(store, controller(), size);
      await until(() => ui.lastFrame().includes(screen === 'stage' ? '64 hosts:' : 'connections:'), screen);
      frameFits(ui.lastFrame(), size);
      expect(ui.lastFrame()).toContain(screen === 'stage' ? '? l20-n20' : '? error: l20-n20');
      if (screen === 'pipeline') expect(ui.lastFrame()).toContain('the 29 worst of 64');
      ui.unmount();
    }
  });
});

describe('layout functions', () => {
  it("gives the grid at most one body row in eight and never the panes' minimum", () => {
    expect(stageLayout({ height: 36, hostCount: 64, perRow: 10, fixedRows: 6 })).toEqual({
      gridRows: 4,
      paneHeight: 25,
    });
    expect(stageLayout({ height: 44, hostCount: 64, perRow: 14, fixedRows: 6 })).toEqual({
      gridRows: 5,
      paneHeight: 32,
    });
    expect(stageLayout({ height: 20, hostCount: 64, perRow: 7, fixedRows: 6 })).toEqual({
      gridRows: 1,
      paneHeight: 12,
    });
    expect(stageLayout({ height: 36, hostCount: 2, perRow: 10, fixedRows: 6 })).toEqual({
      gridRows: 0,
      paneHeight: 30,
    });
  });

  it("scrolls the grid so the cursor's row is the last shown", () => {
    const s = initialState(hostsOf(30));
    const entries = hostsWorstFirst(s, 'inventory');
    const v = gridView(entries, { cursor: 25, left: 0, right: 1, perRow: 5, maxRows: 2, nameWidth: 7 });
    expect(v.rows.map((r) => r.map((c) => c.index))).toEqual([
      [20, 21, 22, 23, 24],
      [25, 26, 27, 28, 29],
    ]);
    expect(v).toMatchObject({ above: 20, below: 0 });
    expect(v.rows[1]![0]).toMatchObject({ cursor: true, text: '· l20-n26 ' });
  });

  it('switches the matrix to compact when full columns do not fit, one or two columns a host', () => {
    expect(matrixForm(100, 2)).toEqual({ kind: 'full', cellWidth: 16 });
    expect(matrixForm(200, 16)).toMatchObject({ kind: 'full' });
    expect(matrixForm(120, 16)).toMatchObject({ kind: 'compact', hostCell: 2, shown: 16 });
    expect(matrixForm(120, 64)).toMatchObject({ kind: 'compact', hostCell: 1, shown: 64 });
    expect(matrixForm(200, 64)).toMatchObject({ kind: 'compact', hostCell: 2, shown: 64 });
    // Too narrow for every host: the worst ones are drawn (they come first).
    expect(matrixForm(80, 64)).toMatchObject({ kind: 'compact', hostCell: 1, shown: 29 });
    expect(rulerLines([19, 39, 6], 1, 64)).toEqual(['24 ', '007']);
  });

  it('says "all" when every host has the same verdict instead of naming each', () => {
    const s = initialState(hostsOf(16));
    expect(
      stageHostsTokens(s, 'os', [])
        .map((t) => t.text)
        .join(' '),
    ).toBe('os on 16 hosts: all · not run');
    const lost = stageHostsTokens(s, 'os', ['l20-n3'])
      .map((t) => t.text)
      .join(' ');
    expect(lost).toBe('os on 16 hosts: ⊘ unreachable: l20-n3 · 15 · not run');
  });

  it('wraps names into the lines given and counts the hosts left out', () => {
    const tokens = [
      { text: 'fail:' },
      ...Array.from({ length: 20 }, (_, i) => ({ text: `l20-n${i + 1}`, host: true })),
    ];
    const lines = wrapTokens(tokens, 30, 2).map((l) => l.map((t) => t.text).join(''));
    expect(lines).toEqual(['fail: l20-n1 l20-n2 l20-n3', 'l20-n4 l20-n5 … +15 more']);
    expect(lines.every((l) => Array.from(l).length <= 30)).toBe(true);
  });
});
