import { describe, expect, it, vi } from 'vitest';
import { AppStore, appState } from '../../screens/state/app-store.js';
import type { Controller } from '../../src/engine/controller.js';
import { fakeController } from '../helpers/fake-controller.js';
import { mountSized, until } from '../helpers/sized-app.js';
import type { Screen } from '../../screens/state/ui-types.js';
import {
  seriesKey,
  type Alert,
  type GpuReading,
  type HostSample,
  type MonitorFrame,
  type PortReading,
} from '../../src/monitor/types.js';
import { hostColumnLines, monitorLayout, pickerItems, pickerWindow } from '../../screens/monitor/layout.js';

// ── A terminal of a given size (ink-testing-library's has 100 columns and no rows) ────────────────

const mount = (store: AppStore, c: Controller, size = { columns: 200, rows: 60 }) => mountSized(store, c, size);

const controller = (): Controller => fakeController({}, ['inventory']);
const calls = (f: unknown): number => (f as ReturnType<typeof vi.fn>).mock.calls.length;

// ── A frame like the sampler publishes: hosts × 8 L20 × 4 ConnectX ports, vLLM, 60-point histories ─

const TIME = '2026-11-29T12:00:00.000Z';
const NETDEVS = ['ens1f0np0', 'ens1f1np1', 'ens2f0np0', 'ens2f1np1'];

function gpu(index: number): GpuReading {
  return {
    index,
    name: 'NVIDIA L20',
    uuid: `GPU-${index}`,
    utilPct: 90 + index,
    memUsedMiB: 40210,
    memTotalMiB: 46068,
    tempC: 60 + index,
    powerW: 300,
    powerCapW: 350,
    smClockMHz: 2520,
    smClockMaxMHz: 2520,
    pstate: 'P0',
    eventReasons: 0,
    processes: [{ pid: 4000 + index, name: 'VllmWorker', memUsedMiB: 39014 }],
  };
}

function port(i: number): PortReading {
  return {
    netdev: NETDEVS[i]!,
    rdmaDevice: `mlx5_${i}`,
    speedGbps: 25,
    up: true,
    adminUp: true,
    txGbps: 21.7,
    rxGbps: 21.5,
    rdmaTxGbps: 21,
    rdmaRxGbps: 20.9,
    pauseRxPerSec: { '3': 120 },
    pauseTxPerSec: { '3': 0 },
    discardsPerSec: 0,
    outOfBufferPerSec: 0,
  };
}

function host(name: string, over: Partial<HostSample> = {}): HostSample {
  return {
    name,
    stale: false,
    updated: TIME,
    error: null,
    gpus: [0, 1, 2, 3, 4, 5, 6, 7].map(gpu),
    ports: [0, 1, 2, 3].map(port),
    vllm: {
      url: 'http://127.0.0.1:8000',
      running: 12,
      waiting: 3,
      generationTokensPerSec: 1843,
      promptTokensPerSec: 900,
      kvCacheUsagePct: 41,
      ttftMs: 182,
    },
    xids: [],
    alerts: [],
    ...over,
  };
}

/** A ramp 0 → top over 60 points, so every sparkline ends in a full block. */
const ramp = (top: number): number[] => Array.from({ length: 60 }, (_, i) => (top * (i + 1)) / 60);

function frame(hosts: HostSample[], over: Partial<MonitorFrame> = {}): MonitorFrame {
  const history: MonitorFrame['history'] = {};
  for (const h of hosts) {
    const series: Record<string, (number | null)[]> = {};
    for (const g of h.gpus)
      for (const [m, top] of [
        ['util', 100],
        ['mem', 100],
        ['temp', 100],
        ['power', 350],
        ['sm', 2520],
      ] as const)
        series[seriesKey.gpu(g.index, m)] = ramp(top);
    for (const p of h.ports) series[seriesKey.port(p.netdev, 'tx')] = ramp(25);
    series[seriesKey.vllm('tokens')] = ramp(2000);
    history[h.name] = series;
  }
  return {
    sample: { version: 1, time: TIME, hosts },
    timebase: '1m',
    history,
    source: 'live',
    replay: null,
    intervalMs: 1000,
    ...over,
  };
}

const thermal: Alert = { kind: 'thermal', subject: 'gpu3', message: '92 °C, HW slowdown', severity: 'fail' };
const storm: Alert = {
  kind: 'pause-storm',
  subject: 'ens1f0np0',
  message: '12k pause frames/s on priority 3',
  severity: 'warn',
};

function monitorStore(names: string[], screen: Screen = 'monitor'): AppStore {
  return new AppStore(
    appState(
      names.map((n, i) => ({ name: n, address: `127.0.0.1:${4001 + i}` })),
      { screen },
    ),
  );
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('monitor screen', () => {
  it("waits for the first sample, then shows both hosts' 8 GPUs and 4 ports with bars, sparklines, vLLM and highlighted alerts", async () => {
    const store = monitorStore(['l20-n1', 'l20-n2']);
    const ui = mount(store, controller());
    await until(() => ui.lastFrame().includes('waiting for the first sample from l20-n1, l20-n2…'), 'waiting line');
    store.dispatch({
      type: 'monitor.frame',
      frame: frame([host('l20-n1'), host('l20-n2', { alerts: [thermal, storm] })]),
    });
    await until(() => ui.lastFrame().includes('l20-n2  updated'), 'the columns');
    const f = ui.lastFrame();
    expect(f).toContain('live · every 1s · timebase 1m (t) · GPU sparkline util (s)');
    expect(f).toMatch(/✔ l20-n1 +updated \d\d:\d\d:\d\d · 8 GPUs · 4 ports/);
    expect(f).toMatch(/✘ l20-n2 +updated/);
    // Eight util bars per host, and each GPU's sparkline ends at full scale ("now" is the right edge).
    expect(count(f, '▕')).toBe(16);
    expect(count(f, '▇▇▇▇████')).toBe(16 + 8 + 2); // GPUs, ports' tx, vLLM tokens/s
    expect(f).toContain('pause rx/tx');
    for (let i = 0; i < 8; i++) expect(f).toMatch(new RegExp(`\\s${i} ▕[█▉▊▋▌▍▎▏ ]{8}▏ +${90 + i}%`));
    for (const n of NETDEVS) expect(count(f, n)).toBe(n === 'ens1f0np0' ? 3 : 2); // + the alert line
    expect(f).toContain('25G 21.7  87% 21.5  86% p3 120/0');
    expect(count(f, 'vLLM  run 12  wait 3  gen 1.8k tok/s  KV 41%  TTFT 182ms')).toBe(2);
    expect(count(f, 'VllmWorker ×8 · 38.1 GiB each · gpu0–7')).toBe(2);
    // The alerts' subjects are marked on their rows (and coloured), failures listed first.
    expect(f).toMatch(/✘ {2}3 ▕/);
    expect(f).toContain('! ens1f0np0');
    expect(f.indexOf('✘ gpu3 thermal — 92 °C, HW slowdown')).toBeLessThan(
      f.indexOf('! ens1f0np0 pause-storm — 12k pause frames/s'),
    );
    expect(count(f, '✔ no alerts')).toBe(1);
    expect(f.split('\n').length).toBeLessThanOrEqual(59);
    ui.unmount();
  });

  it('m opens the monitor from the pipeline, the stage view and setup (not while a field is edited)', async () => {
    const c = controller();
    const pipeline = mount(monitorStore(['l20-n1', 'l20-n2'], 'pipeline'), c, { columns: 120, rows: 30 });
    expect(pipeline.lastFrame()).toContain('m monitor');
    pipeline.stdin.write('m');
    await until(() => calls(c.openMonitor) === 1, 'openMonitor from the pipeline');
    pipeline.unmount();

    const stage = mount(monitorStore(['l20-n1', 'l20-n2'], 'stage'), c, { columns: 120, rows: 30 });
    stage.stdin.write('m');
    await until(() => calls(c.openMonitor) === 2, 'openMonitor from the stage view');
    stage.stdin.write('?');
    await until(() => stage.lastFrame().includes('live monitor: GPUs, ports, vLLM and alerts'), 'the help lists it');
    stage.unmount();

    const setup = mount(monitorStore([], 'setup'), c, { columns: 120, rows: 30 });
    setup.stdin.write('\r'); // edit the name field: m is a letter of the name now
    await until(() => setup.lastFrame().includes('▏'), 'edit mode');
    setup.stdin.write('m');
    await until(() => setup.lastFrame().includes('m▏'), 'typed');
    expect(calls(c.openMonitor)).toBe(2);
    setup.stdin.write('\r');
    await until(() => !setup.lastFrame().includes('▏'), 'committed');
    setup.stdin.write('m');
    await until(() => calls(c.openMonitor) === 3, 'openMonitor from setup');
    setup.unmount();
  });

  it('t switches the timebase, s the GPU sparkline metric, m and esc go back; the footer and help list the keys', async () => {
    const store = monitorStore(['l20-n1', 'l20-n2']);
    const c = controller();
    const ui = mount(store, c);
    store.dispatch({ type: 'monitor.frame', frame: frame([host('l20-n1'), host('l20-n2')]) });
    await until(() => ui.lastFrame().includes('GPU sparkline util'), 'the frame');
    expect(ui.lastFrame()).toContain('esc back  t timebase  s gpu metric  ←→ host  [ left  ] right  q quit  ? help');
    ui.stdin.write('t');
    await until(() => calls(c.monitorTimebase) === 1, 'monitorTimebase');
    expect(c.monitorTimebase).toHaveBeenCalledWith();
    // The store's timebase changes before the sampler's next frame does: the line says both.
    store.dispatch({ type: 'monitor.timebase', timebase: '10m' });
    await until(() => ui.lastFrame().includes('timebase 1m → 10m'), 'pending timebase');
    ui.stdin.write('s');
    await until(() => ui.lastFrame().includes('GPU sparkline mem (s)'), 'mem metric');
    expect(ui.lastFrame()).toContain('mem 1m');
    ui.stdin.write('s');
    await until(() => ui.lastFrame().includes('GPU sparkline power (s)'), 'power metric');
    ui.stdin.write('m');
    await until(() => calls(c.closeMonitor) === 1, 'closeMonitor on m');
    ui.stdin.write('\u001b');
    await until(() => calls(c.closeMonitor) === 2, 'closeMonitor on esc');
    ui.stdin.write('?');
    await until(() => ui.lastFrame().includes('GPU sparkline: util → mem → power → temp → SM clock'), 'help');
    expect(calls(c.openMonitor)).toBe(0);
    ui.unmount();
  });

  it("with three hosts a picker shows each host's status; → moves the cursor and ] puts that host in the right column", async () => {
    const store = monitorStore(['l20-n1', 'l20-n2', 'l20-n3']);
    const ui = mount(store, controller());
    store.dispatch({
      type: 'monitor.frame',
      frame: frame([host('l20-n1'), host('l20-n2', { alerts: [storm] }), host('l20-n3', { alerts: [thermal] })]),
    });
    await until(() => ui.lastFrame().includes('hosts ✔ l20-n1 ◧  ! l20-n2 ◨  ✘ l20-n3'), 'the picker');
    expect(ui.lastFrame()).not.toContain('l20-n3  updated');
    ui.stdin.write('\u001b[C');
    ui.stdin.write('l');
    await until(() => store.getState().ui.monitor.cursor === 2, 'cursor on l20-n3');
    ui.stdin.write(']');
    await until(() => ui.lastFrame().includes('✘ l20-n3  updated'), 'l20-n3 in a column');
    expect(store.getState().ui.monitor).toMatchObject({ left: 0, right: 2 });
    expect(ui.lastFrame()).not.toContain('l20-n2  updated');
    expect(ui.lastFrame()).toContain('hosts ✔ l20-n1 ◧  ! l20-n2  ✘ l20-n3 ◨');
    ui.stdin.write('h');
    ui.stdin.write('[');
    await until(() => store.getState().ui.monitor.left === 1, 'l20-n2 on the left');
    await until(() => ui.lastFrame().includes('! l20-n2  updated'), 'l20-n2 shown');
    ui.unmount();
  });

  it('a stale host says STALE with its error and keeps its last values; one host gets one full-width column', async () => {
    const store = monitorStore(['l20-n1', 'l20-n2']);
    const ui = mount(store, controller(), { columns: 160, rows: 40 });
    store.dispatch({
      type: 'monitor.frame',
      frame: frame([
        host('l20-n1'),
        host('l20-n2', { stale: true, updated: '2026-11-29T11:59:40.000Z', error: 'connection lost: ECONNRESET' }),
      ]),
    });
    await until(() => ui.lastFrame().includes('STALE'), 'stale header');
    expect(ui.lastFrame()).toMatch(/⊘ l20-n2 +STALE — connection lost: ECONNRESET · last data \d\d:\d\d:\d\d/);
    expect(count(ui.lastFrame(), '▕')).toBe(16); // its last readings stay on screen (dimmed)
    ui.unmount();

    const one = monitorStore(['l20-n1']);
    const single = mount(one, controller(), { columns: 160, rows: 40 });
    one.dispatch({ type: 'monitor.frame', frame: frame([host('l20-n1')]) });
    await until(() => single.lastFrame().includes('l20-n1  updated'), 'one column');
    // At full width every column fits, the SM clock included, and the rows are not split.
    expect(count(single.lastFrame(), '2520MHz')).toBe(8);
    expect(single.lastFrame()).not.toContain('hosts ');
    single.unmount();
  });

  it('shows the replay position and never draws a frame taller than the terminal', async () => {
    for (const size of [
      { columns: 80, rows: 24 },
      { columns: 100, rows: 30 },
      { columns: 60, rows: 12 },
      { columns: 200, rows: 60 },
      { columns: 240, rows: 18 },
    ]) {
      const store = monitorStore(['l20-n1', 'l20-n2', 'l20-n3']);
      const ui = mount(store, controller(), size);
      store.dispatch({
        type: 'monitor.frame',
        frame: frame([host('l20-n1', { alerts: [thermal, storm, thermal, storm] }), host('l20-n2'), host('l20-n3')], {
          source: 'replay',
          replay: { position: 37, total: 120, file: 'run.jsonl' },
        }),
      });
      await until(
        () => ui.lastFrame().includes('replay 37/120 run.jsonl'),
        `replay line at ${size.columns}×${size.rows}`,
      );
      const lines = ui.lastFrame().split('\n');
      expect(lines.length, `${size.columns}×${size.rows}`).toBeLessThanOrEqual(size.rows - 1);
      for (const l of lines) expect(Array.from(l).length).toBeLessThanOrEqual(size.columns);
      expect(lines[lines.length - 1]).toContain('esc back'); // the footer is never pushed off
      ui.unmount();
    }
  });
});

describe('monitor layout', () => {
  const full = host('l20-n1', {
    alerts: [thermal, storm, { ...storm, subject: 'l20-n1', kind: 'stale', message: 'sampler restarted' }],
  });
  const history = frame([full]).history['l20-n1']!;
  const lines = (height: number, width = 90) =>
    hostColumnLines(full, history, { width, height, metric: 'util', timebase: '1m', now: TIME });
  const keys = (height: number) => lines(height).map((l) => l.key);

  it('fits any height and width exactly, and drops lines in the stated order', () => {
    for (let height = 0; height <= 40; height++) {
      for (const width of [10, 45, 90]) {
        const ls = lines(height, width);
        expect(ls.length).toBeLessThanOrEqual(height);
        for (const l of ls) expect(Array.from(l.text).length).toBe(width);
      }
    }
    // Everything: header, 2 table headers, 8 GPUs, 4 ports, vLLM + its sparkline, processes, 3 alerts.
    expect(lines(21)).toHaveLength(21);
    expect(keys(21)).toContain('vllm-spark');
    expect(keys(20)).not.toContain('vllm-spark');
    expect(keys(20)).toContain('processes');
    expect(keys(19)).not.toContain('processes');
    expect(keys(19).filter((k) => k.startsWith('alert'))).toEqual(['alert0', 'alert1', 'alert2']);
    expect(keys(18).filter((k) => k.startsWith('alert'))).toEqual(['alert0', 'alert-more']);
    expect(lines(18).at(-1)?.text).toContain('… 2 more alerts');
    expect(keys(17)).toEqual(expect.arrayContaining(['gpu-head', 'port-head', 'alert0']));
    expect(lines(17).at(-1)?.text).toMatch(/^✘ gpu3 thermal — 92 °C, HW slowdown +\(\+2 more\)$/);
    expect(keys(16)).not.toContain('port-head');
    expect(keys(15)).not.toContain('gpu-head');
    expect(keys(15)).toContain('alert0');
    expect(keys(14)).toEqual([
      'header',
      ...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => `gpu${i}`),
      ...NETDEVS.map((n) => `port:${n}`),
      'vllm',
    ]);
    expect(keys(10).at(-1)).toBe('cut');
    expect(lines(10).at(-1)?.text).toContain('… 5 more rows (terminal too short)');
  });

  it('a host without GPU readings says why on the GPU line (nvidia-smi missing), not only in the header', () => {
    const why = 'nvidia-smi is not installed (no NVIDIA driver yet: stage gpu-driver)';
    const bare = host('l20-n2', { gpus: [], error: why, gpuError: why });
    const ls = hostColumnLines(bare, history, { width: 120, height: 30, metric: 'util', timebase: '1m', now: TIME });
    expect(ls.find((l) => l.key === 'gpu-none')?.text.trimEnd()).toBe(`GPUs: no readings — ${why}`);
    const quiet = hostColumnLines(host('l20-n2', { gpus: [] }), history, {
      width: 120,
      height: 30,
      metric: 'util',
      timebase: '1m',
      now: TIME,
    });
    expect(quiet.find((l) => l.key === 'gpu-none')?.text.trimEnd()).toBe('GPUs: no readings');
  });

  it('colours the rows and the header an alert concerns', () => {
    const ls = lines(21);
    expect(ls.find((l) => l.key === 'gpu3')?.color).toBe('red');
    expect(ls.find((l) => l.key === 'gpu2')?.color).toBeUndefined();
    expect(ls.find((l) => l.key === 'port:ens1f0np0')?.color).toBe('yellow');
    expect(ls.find((l) => l.key === 'header')?.color).toBe('yellow'); // the host-level warning
  });

  it("splits the body and keeps the picker's cursor in view", () => {
    expect(monitorLayout(20, 2)).toEqual({ picker: false, columnHeight: 19 });
    expect(monitorLayout(20, 3)).toEqual({ picker: true, columnHeight: 18 });
    expect(monitorLayout(1, 5)).toEqual({ picker: true, columnHeight: 0 });
    const hosts = Array.from({ length: 12 }, (_, i) => host(`l20-node-${i}`));
    const items = pickerItems(hosts, 11, 0, 1);
    const { shown, before } = pickerWindow(items, 60);
    expect(before).toBe(true);
    expect(shown[0]?.index).toBeGreaterThan(0);
    expect(shown.some((s) => s.cursor)).toBe(true);
    expect(pickerWindow(pickerItems(hosts, 0, 0, 1), 60).before).toBe(false);
  });
});
