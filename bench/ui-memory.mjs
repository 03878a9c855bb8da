#!/usr/bin/env node
// Benchmark: does the TUI's heap stay flat while a screen keeps changing? The live monitor is meant to be
// left open for hours (a sample a second), and Ink keeps every string it has ever measured for layout in a
// module-level cache that nothing empties, so a view whose text changes on every frame grows the heap.
//
// The App (the built views, dist/, bundled the way scripts/bundle.mjs bundles the CLI: Ink inside, its text
// caches bounded by scripts/ink-bounded-caches; `--ink-as-is` bundles Ink unchanged, to compare) is rendered
// by Ink into a fake terminal of COLS×ROWS in debug mode (every update lays out and writes the whole frame),
// with React in production mode as the CLI runs it. The store gets FRAMES monitor samples of 2 hosts × 8 L20
// × 4 fabric ports, every reading different from the last (as a loaded cluster's are), with 60-point
// histories; then the stage view, a pane streaming a line per update. The heap is read after a full GC
// (node --expose-gc) at a quarter of the updates (after warm-up) and at the end: growth per 1,000 updates,
// and what that is per day at the monitor's 1 Hz.
//
// Run: npm run build && node --expose-gc bench/ui-memory.mjs [FRAMES=4000] [COLS=160] [ROWS=48] [--ink-as-is]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../scripts/esbuild-node.mjs';
import { FakeStdin, FakeStdout } from './lib/fake-terminal.mjs';

if (typeof globalThis.gc !== 'function') {
  console.error('run with node --expose-gc bench/ui-memory.mjs: the heap is read after a full garbage collection');
  process.exit(2);
}
process.env.NODE_ENV ??= 'production'; // as src/commands/interactive.ts sets it before React loads
const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const inkAsIs = process.argv.includes('--ink-as-is');
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const frames = Number(args[0] ?? 4000);
const columns = Number(args[1] ?? 160);
const rows = Number(args[2] ?? 48);

// Inside the project, so that what stays outside the bundle (ssh2, just-bash) resolves from node_modules.
const tmp = mkdtempSync(join(root, 'node_modules/.cache-l20-ui-memory-'));
const entry = join(tmp, 'entry.mjs');
const d = (p) => JSON.stringify(join(dist, p));
writeFileSync(
  entry,
  [
    "export { default as React } from 'react';",
    "export { render } from 'ink';",
    `export { Providers } from ${d('screens/store-context.js')};`,
    `export { App } from ${d('screens/App.js')};`,
    `export { AppStore, appState } from ${d('screens/state/app-store.js')};`,
    `export { STAGES } from ${d('checks/stages.js')};`,
    `export { STAGE_IDS } from ${d('src/engine/types.js')};`,
    `export { seriesKey } from ${d('src/monitor/types.js')};`,
  ].join('\n'),
);
let views;
try {
  await build({
    ...nodeBundleOptions({ boundInkCaches: !inkAsIs }),
    entryPoints: [entry],
    outdir: join(tmp, 'out'),
    outExtension: { '.js': '.mjs' },
  });
  views = await import(pathToFileURL(join(tmp, 'out/entry.mjs')).href);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const { React, render, Providers, App, AppStore, appState, STAGES, STAGE_IDS, seriesKey } = views;

const noop = () => undefined;
const controller = new Proxy(
  {
    implementedStages: [...STAGE_IDS],
    stagePurpose: (id) => STAGES.find((s) => s.id === id)?.purpose ?? id,
    stageTitle: (id) => id,
    initialHosts: [],
  },
  { get: (t, k) => (k in t ? t[k] : noop) },
);

// A deterministic stream of readings that differ frame to frame, like a busy cluster's.
let seed = 42;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const NETDEVS = ['ens1f0np0', 'ens1f1np1', 'ens2f0np0', 'ens2f1np1'];
const HOSTS = ['l20-a', 'l20-b'];
const history = Object.fromEntries(HOSTS.map((h) => [h, {}]));

function sample(t) {
  const time = new Date(Date.UTC(2026, 10, 30, 12) + t * 1000).toISOString();
  const hosts = HOSTS.map((name) => {
    const gpus = Array.from({ length: 8 }, (_, index) => ({
      index,
      name: 'NVIDIA L20',
      uuid: `GPU-${name}-${index}`,
      utilPct: Math.floor(60 + 40 * rnd()),
      memUsedMiB: Math.floor(40000 + 2000 * rnd()),
      memTotalMiB: 46068,
      tempC: Math.floor(55 + 20 * rnd()),
      powerW: round(200 + 150 * rnd()),
      powerCapW: 350,
      smClockMHz: Math.floor(2000 + 520 * rnd()),
      smClockMaxMHz: 2520,
      pstate: 'P0',
      eventReasons: 0,
      processes: [{ pid: 4000 + index, name: 'VllmWorker', memUsedMiB: 39014 }],
    }));
    const ports = NETDEVS.map((netdev, i) => ({
      netdev,
      rdmaDevice: `mlx5_${i}`,
      speedGbps: 25,
      up: true,
      adminUp: true,
      txGbps: round(20 * rnd(), 2),
      rxGbps: round(20 * rnd(), 2),
      rdmaTxGbps: round(19 * rnd(), 2),
      rdmaRxGbps: round(19 * rnd(), 2),
      pauseRxPerSec: { 3: Math.floor(200 * rnd()) },
      pauseTxPerSec: { 3: 0 },
      discardsPerSec: 0,
      outOfBufferPerSec: 0,
    }));
    const vllm = {
      url: 'http://127.0.0.1:8000',
      running: Math.floor(20 * rnd()),
      waiting: Math.floor(5 * rnd()),
      generationTokensPerSec: round(1500 + 500 * rnd()),
      promptTokensPerSec: round(900 * rnd()),
      kvCacheUsagePct: round(60 * rnd()),
      ttftMs: round(100 + 200 * rnd()),
    };
    const series = history[name];
    const push = (key, v) => {
      const s = (series[key] ??= []);
      s.push(v);
      if (s.length > 60) s.shift();
    };
    for (const g of gpus) {
      push(seriesKey.gpu(g.index, 'util'), g.utilPct);
      push(seriesKey.gpu(g.index, 'mem'), (100 * g.memUsedMiB) / g.memTotalMiB);
      push(seriesKey.gpu(g.index, 'temp'), g.tempC);
      push(seriesKey.gpu(g.index, 'power'), g.powerW);
      push(seriesKey.gpu(g.index, 'sm'), g.smClockMHz);
    }
    for (const p of ports) push(seriesKey.port(p.netdev, 'tx'), p.txGbps);
    push(seriesKey.vllm('tokens'), vllm.generationTokensPerSec);
    return { name, stale: false, updated: time, error: null, gpus, ports, vllm, xids: [], alerts: [] };
  });
  const hist = Object.fromEntries(
    HOSTS.map((h) => [h, Object.fromEntries(Object.entries(history[h]).map(([k, v]) => [k, [...v]]))]),
  );
  return {
    sample: { version: 1, time, hosts },
    timebase: '1m',
    history: hist,
    source: 'live',
    replay: null,
    intervalMs: 1000,
  };
}

const settle = () => new Promise((r) => setImmediate(r));
const heapMiB = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

/** Mounts the App on a fresh store, applies `update(i)` for i < frames, reads the heap at frames/4 and at the end. */
async function run(what, prepare, update) {
  const store = new AppStore(
    appState(
      HOSTS.map((name, i) => ({ name, address: `127.0.0.1:${4001 + i}` })),
      { screen: 'pipeline' },
    ),
  );
  prepare(store);
  const stdout = new FakeStdout(columns, rows);
  const app = React.createElement(Providers, { store, controller }, React.createElement(App));
  const instance = render(app, {
    stdout,
    stderr: new FakeStdout(80, 24),
    stdin: new FakeStdin(),
    debug: true,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  await settle();
  const warm = Math.floor(frames / 4);
  let start = 0;
  const t0 = performance.now();
  for (let i = 0; i < frames; i++) {
    if (i === warm) start = heapMiB();
    update(store, i);
    await settle();
  }
  const ms = (performance.now() - t0) / frames;
  const end = heapMiB();
  instance.unmount();
  const per1000 = ((end - start) / (frames - warm)) * 1000;
  return { what, writes: stdout.writes, per1000, perDay: per1000 * 86.4, ms, start, end };
}

const results = [];
results.push(
  await run(
    'monitor, 2 hosts × 8 GPUs × 4 ports',
    (store) => store.dispatch({ type: 'monitor.open' }),
    (store, i) => store.dispatch({ type: 'monitor.frame', frame: sample(i) }),
  ),
);
results.push(
  await run(
    'stage view, a command streaming on both hosts',
    (store) => {
      store.dispatch({ type: 'ui.screen', screen: 'stage' });
      store.dispatch({ type: 'stage.state', stage: STAGES[0].id, state: 'running' });
      for (const host of HOSTS)
        store.dispatch({
          type: 'cmd.start',
          host,
          runId: `r-${host}`,
          stage: STAGES[0].id,
          probe: 'stream',
          commandLine: 'seq 1 1000000',
          sudo: false,
        });
    },
    (store, i) =>
      store.dispatch({
        type: 'cmd.output',
        host: HOSTS[i % 2],
        runId: `r-${HOSTS[i % 2]}`,
        stage: STAGES[0].id,
        probe: 'stream',
        stream: 'stdout',
        lines: [`${i} ${(rnd() * 1e6).toFixed(0)}`],
      }),
  ),
);

console.log(
  `# ui-memory (Ink ${inkAsIs ? 'as is' : 'with bounded text caches'}): ${frames} updates per view, heap after full GC (warm-up ${Math.floor(frames / 4)}), ${columns}×${rows}, Node ${process.version}, ${cpus()[0]?.model ?? '?'} × ${cpus().length}`,
);
console.log(
  '| view | frames written | heap at warm-up (MiB) | heap at end (MiB) | growth per 1,000 frames (MiB) | per day at 1 Hz (MiB) | ms per update |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.what} | ${r.writes} | ${r.start.toFixed(1)} | ${r.end.toFixed(1)} | ${r.per1000.toFixed(2)} | ${r.perDay.toFixed(0)} | ${r.ms.toFixed(2)} |`,
  );
}
