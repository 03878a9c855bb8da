#!/usr/bin/env node
// Benchmark: what drawing the pipeline and the stage view costs at 2, 16 and 64 hosts (issue 8,
// item 4: "readable and fast at 64 hosts"; an output tick of one host should re-render little).
//
// The views are the built ones (dist/), rendered by Ink into a fake terminal of COLS×ROWS in Ink's
// debug mode, where every React commit lays out and writes the whole frame synchronously: the time
// of one store.dispatch() is then the reducer + React render + Yoga layout + the frame's text. The
// store holds what a full check run leaves: every stage's real probes and checks on every host, the
// panes full of output (PANE_LINES lines per host), two hosts failing, one warning.
// Measured per view and host count (median over REPEATS):
//   full frame   — the view mounted afresh (a new key): everything rendered and laid out;
//   output tick  — 10 output lines of one host: a host shown in a pane, and one that is not;
//   verdict      — one check.result of one host;
// and "frames" — how many of the REPEATS updates wrote a frame at all (0: nothing re-rendered).
//
// Run: npm run build && node bench/ui-render.mjs [REPEATS=40] [COLS=160] [ROWS=48]
//      (DIST=/path/to/dist measures another build of the views, e.g. an older commit's)
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FakeStdin, FakeStdout } from './lib/fake-terminal.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = process.env.DIST ?? join(root, 'dist');
const repeats = Number(process.argv[2] ?? 40);
const columns = Number(process.argv[3] ?? 160);
const rows = Number(process.argv[4] ?? 48);
const load = (p) => import(pathToFileURL(join(dist, p)).href);

const React = (await import('react')).default;
const { render } = await import('ink');
const { Providers } = await load('screens/store-context.js');
const { PipelineView } = await load('screens/pipeline/PipelineView.js');
const { StageView } = await load('screens/stage/StageView.js');
const { PANE_LINES } = await load('src/engine/store.js');
const { AppStore, appState } = await load('screens/state/app-store.js');
const { STAGES } = await load('checks/stages.js');
const { STAGE_IDS, worstStatus } = await load('src/engine/types.js');

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The store after a full check run on n hosts: l20-n2 fails inventory, the last host fails os, l20-n3 warns everywhere. */
function filledStore(n) {
  const hosts = Array.from({ length: n }, (_, i) => ({ name: `l20-n${i + 1}`, address: `127.0.0.1:${4001 + i}` }));
  const store = new AppStore(appState(hosts, { screen: 'stage' }));
  const last = hosts[n - 1].name;
  const verdict = (stage, host) =>
    (host === 'l20-n2' && stage === 'inventory') || (host === last && n > 2 && stage === 'os')
      ? 'fail'
      : host === 'l20-n3'
        ? 'warn'
        : 'pass';
  const linesPerProbe = Math.ceil(PANE_LINES / 10);
  for (const h of hosts) store.dispatch({ type: 'host.state', host: h.name, state: 'connected' });
  for (const stage of STAGES) {
    store.dispatch({ type: 'stage.state', stage: stage.id, state: 'running' });
    const statuses = [];
    for (const { name: h } of hosts) {
      stage.probes.forEach((p, i) => {
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
        store.dispatch({
          type: 'cmd.output',
          host: h,
          runId,
          stage: stage.id,
          probe: p.id,
          stream: 'stdout',
          lines: Array.from({ length: linesPerProbe }, (_, k) => `${p.id}: line ${k} of the probe's output on ${h}`),
        });
        store.dispatch({
          type: 'cmd.exit',
          host: h,
          runId,
          exitCode: 0,
          signal: null,
          durationMs: 40,
          timedOut: false,
          cancelled: false,
        });
      });
      for (const c of stage.checks.filter((x) => x.scope === 'host')) {
        const status = verdict(stage.id, h);
        statuses.push(status);
        store.dispatch({
          type: 'check.result',
          result: { id: c.id, stage: stage.id, host: h, status, summary: `${c.title}: ${status}`, evidence: '' },
        });
      }
    }
    for (const c of stage.checks.filter((x) => x.scope === 'pair')) {
      statuses.push('pass');
      store.dispatch({
        type: 'check.result',
        result: { id: c.id, stage: stage.id, host: null, status: 'pass', summary: `${c.title}: pass`, evidence: '' },
      });
    }
    store.dispatch({ type: 'stage.state', stage: stage.id, state: worstStatus(statuses) });
  }
  store.dispatch({ type: 'engine.idle' });
  return store;
}

const controller = {
  implementedStages: [...STAGE_IDS],
  stagePurpose: (id) => STAGES.find((s) => s.id === id)?.purpose ?? id,
  stageTitle: (id) => id,
};

async function measure(view, n) {
  const store = filledStore(n);
  store.dispatch({ type: 'ui.screen', screen: view === 'pipeline' ? 'pipeline' : 'stage' });
  const stdout = new FakeStdout(columns, rows);
  const bodyHeight = rows - 4; // as the App gives its screens: title, notice and footer, a spare row
  const View = view === 'pipeline' ? PipelineView : StageView;
  const tree = (key) =>
    React.createElement(
      Providers,
      { store, controller },
      React.createElement(View, { key, width: columns, height: bodyHeight }),
    );
  const instance = render(tree(0), {
    stdout,
    stderr: new FakeStdout(80, 24),
    stdin: new FakeStdin(),
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  // React flushes a store update's render after dispatch() returns (a microtask): wait for the
  // event loop to come round, and count the time up to the frame's write, or, when no frame was
  // written, up to dispatch()'s return (the reducer and the selectors that found nothing changed).
  const settle = () => new Promise((r) => setImmediate(r));
  const time = async (f) => {
    const writes = stdout.writes;
    const t = performance.now();
    f();
    const returned = performance.now();
    await settle();
    return (stdout.writes > writes ? stdout.lastAt : returned) - t;
  };
  const series = async (f) => {
    await time(() => f(-1)); // warm-up
    const ms = [];
    const before = stdout.writes;
    for (let i = 0; i < repeats; i++) ms.push(await time(() => f(i)));
    return { ms: median(ms), frames: stdout.writes - before };
  };
  const shown = store.getState().hostOrder[store.getState().ui.leftHost];
  const hidden = n > 2 ? store.getState().hostOrder[n - 2] : null;
  // Output of the viewed stage's first probe (a pane shows its own stage's output only).
  const viewed = store.getState().ui.selectedStage;
  const viewedProbe = STAGES.find((s) => s.id === viewed).probes[0].id;
  const tick = (host) => (i) =>
    store.dispatch({
      type: 'cmd.output',
      host,
      runId: `${viewed}-${host}-0`,
      stage: viewed,
      probe: viewedProbe,
      stream: 'stdout',
      lines: Array.from({ length: 10 }, (_, k) => `tick ${i} line ${k} on ${host}`),
    });
  await settle();
  const full = await series((i) => instance.rerender(tree(i + 2)));
  const outShown = await series(tick(shown));
  const outHidden = hidden ? await series(tick(hidden)) : null;
  const verdict = await series((i) =>
    store.dispatch({
      type: 'check.result',
      result: {
        id: `inventory.bench-${i}`,
        stage: 'inventory',
        host: 'l20-n1',
        status: i % 2 ? 'pass' : 'warn',
        summary: 'bench',
        evidence: '',
      },
    }),
  );
  const frameLines = stdout.last.split('\n').length;
  instance.unmount();
  return { view, n, full, outShown, outHidden, verdict, frameLines };
}

const results = [];
for (const view of ['pipeline', 'stage']) for (const n of [2, 16, 64]) results.push(await measure(view, n));

const base = (r) => results.find((x) => x.view === r.view && x.n === 2);
const ms = (s) => (s ? s.ms.toFixed(2) : '—');
const fr = (s) => (s ? `${s.frames}/${repeats}` : '—');
console.log(
  `ui-render: views from ${dist === join(root, 'dist') ? 'dist/' : dist}, ${columns}×${rows}, ${repeats} repeats (median ms per update, sync in Ink debug mode); node ${process.version}; ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}`,
);
console.log(
  '| view     | hosts | full frame ms (frames) | ×2 hosts | output tick, pane host ms (frames) | output tick, other host ms (frames) | verdict ms (frames) | ×2 hosts |',
);
console.log(
  '|----------|-------|------------------------|----------|------------------------------------|-------------------------------------|---------------------|----------|',
);
for (const r of results) {
  const b = base(r);
  console.log(
    `| ${r.view.padEnd(8)} | ${String(r.n).padStart(5)} | ${`${ms(r.full)} (${fr(r.full)})`.padStart(22)} | ${(r.full.ms / b.full.ms).toFixed(1).padStart(7)}× | ${`${ms(r.outShown)} (${fr(r.outShown)})`.padStart(34)} | ${`${ms(r.outHidden)} (${fr(r.outHidden)})`.padStart(35)} | ${`${ms(r.verdict)} (${fr(r.verdict)})`.padStart(19)} | ${(r.verdict.ms / b.verdict.ms).toFixed(1).padStart(7)}× |`,
  );
}
console.log(`reproduce: npm run build && node bench/ui-render.mjs ${repeats} ${columns} ${rows}`);
