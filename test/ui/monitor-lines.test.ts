import { describe, expect, it } from 'vitest';
import type { Alert, GpuReading, PortReading } from '../../src/monitor/types.js';
import {
  alertLines,
  bar,
  celsius,
  chooseColumns,
  gbps,
  gib,
  gpuHeader,
  gpuRange,
  gpuRow,
  mhz,
  nextMetric,
  pauseText,
  portHeader,
  portRow,
  processLine,
  rate,
  sparkline,
  vllmLines,
  watts,
  type GpuMetric,
} from '../../screens/monitor/monitor-lines.js';

const width = (s: string): number => Array.from(s).length;

function gpu(index: number, over: Partial<GpuReading> = {}): GpuReading {
  return {
    index,
    name: 'NVIDIA L20',
    uuid: `GPU-${index}`,
    utilPct: 87,
    memUsedMiB: 40210,
    memTotalMiB: 46068,
    tempC: 61,
    powerW: 301.5,
    powerCapW: 350,
    smClockMHz: 2520,
    smClockMaxMHz: 2520,
    pstate: 'P0',
    eventReasons: 0,
    processes: [],
    ...over,
  };
}

function port(over: Partial<PortReading> = {}): PortReading {
  return {
    netdev: 'ens1f0np0',
    rdmaDevice: 'mlx5_0',
    speedGbps: 25,
    up: true,
    adminUp: true,
    txGbps: 21.7,
    rxGbps: 21.5,
    rdmaTxGbps: 21.0,
    rdmaRxGbps: 20.9,
    pauseRxPerSec: { '3': 1234 },
    pauseTxPerSec: { '3': 0 },
    discardsPerSec: 0,
    outOfBufferPerSec: 0,
    ...over,
  };
}

describe('bar', () => {
  it('fills eighths of a cell between the caps, exactly width columns', () => {
    expect(bar(0, 100, 10)).toBe('▕        ▏');
    expect(bar(100, 100, 10)).toBe('▕████████▏');
    expect(bar(50, 100, 10)).toBe('▕████    ▏');
    // 43.75% of 8 cells = 3.5 cells: three full blocks and a half block.
    expect(bar(43.75, 100, 10)).toBe('▕███▌    ▏');
    expect(bar(1, 100, 10)).toBe('▕▏       ▏');
    expect(bar(250, 100, 6)).toBe('▕████▏');
    expect(bar(null, 100, 6)).toBe('▕····▏');
    for (let v = 0; v <= 100; v += 7) expect(width(bar(v, 100, 12))).toBe(12);
  });
});

describe('sparkline', () => {
  it('draws a fixed scale, keeps the newest points at the right edge and marks gaps', () => {
    expect(sparkline([0, 25, 50, 75, 100], 100, 5)).toBe(' ▂▄▆█');
    expect(sparkline([100, 100], 100, 5)).toBe('   ██'); // history shorter than the width: blank on the left
    expect(sparkline([10, null, 90], 100, 3)).toBe('▁·▇');
    expect(sparkline([1, 2, 3, 4, 50, 100], 100, 2)).toBe('▄█'); // only the last `width` points
    expect(sparkline([0.1], 100, 1)).toBe('▁'); // above zero is never blank
    expect(sparkline([400], 100, 1)).toBe('█'); // clipped at the scale's top
    expect(sparkline([], 100, 0)).toBe('');
  });
});

describe('numbers', () => {
  it('formats Gb/s, GiB, watts, °C, MHz and rates; missing values are a dash', () => {
    expect(gbps(21.66)).toBe('21.7');
    expect(gib(46068)).toBe('45.0');
    expect(watts(301.5)).toBe('302W');
    expect(celsius(61.4)).toBe('61°C');
    expect(mhz(2520)).toBe('2520MHz');
    expect([rate(0), rate(3.5), rate(120), rate(1234), rate(35_000), rate(1_200_000)]).toEqual([
      '0',
      '3.5',
      '120',
      '1.2k',
      '35k',
      '1.2M',
    ]);
    expect([gbps(null), gib(null), watts(null), celsius(null), mhz(null), rate(null)]).toEqual([
      '—',
      '—',
      '—',
      '—',
      '—',
      '—',
    ]);
  });

  it('cycles the GPU sparkline metric util → mem → power → temp → sm → util', () => {
    const seen: GpuMetric[] = ['util'];
    for (let i = 0; i < 5; i++) seen.push(nextMetric(seen[seen.length - 1]!));
    expect(seen).toEqual(['util', 'mem', 'power', 'temp', 'sm', 'util']);
  });
});

describe('table rows', () => {
  const history = {
    'gpu0.util': [0, 50, 100],
    'gpu0.power': [350, 350, 350],
    'port:ens1f0np0.tx': [25, 12.5, null],
  };

  it('a GPU row has index, bar, util, memory, temperature, power/cap, SM clock and the sparkline at a wide width', () => {
    const row = gpuRow(gpu(0), history, 80);
    expect(width(row)).toBe(80);
    expect(row).toMatch(/^ {3}0 ▕███████ ▏ {2}87% +39\.3\/45\.0 61°C 302\/350W 2520MHz +▄█$/);
    expect(gpuRow(gpu(0), history, 80, 'power')).toMatch(/███$/);
    expect(gpuRow(gpu(3), {}, 80, 'util', 'fail').startsWith('✘  3')).toBe(true);
    expect(width(gpuHeader(80, 'util', '1m'))).toBe(80);
    expect(gpuHeader(80, 'util', '1m')).toContain('util 1m');
  });

  it('narrow rows drop the SM clock, then the bar, then the sparkline, and always fit exactly', () => {
    expect(gpuRow(gpu(0), history, 55)).not.toContain('MHz');
    expect(gpuRow(gpu(0), history, 55)).toContain('▕');
    expect(gpuRow(gpu(0), history, 45)).not.toContain('▕');
    expect(gpuRow(gpu(0), history, 45)).toMatch(/▄█$/);
    expect(gpuRow(gpu(0), history, 34)).toMatch(/61°C 302\/350W$/);
    expect(gpuRow(gpu(0), history, 33)).toMatch(/61°C +$/); // power does not fit: nothing after it either
    for (const w of [1, 5, 12, 20, 33, 40, 47, 52, 61, 70, 120, 200]) {
      expect(
        width(
          gpuRow(gpu(7, { utilPct: null, memUsedMiB: null, tempC: null, powerW: null, smClockMHz: null }), history, w),
        ),
      ).toBe(w);
      expect(width(portRow(port({ up: false, speedGbps: null, txGbps: null }), history, w))).toBe(w);
      expect(width(gpuHeader(w, 'mem', '10m'))).toBe(w);
      expect(width(portHeader(w, '1h'))).toBe(w);
    }
  });

  it('chooses columns by rank and gives the flexible column what is left', () => {
    const cols = [
      { key: 'a', width: 5, rank: 0 },
      { key: 'b', width: 5, rank: 2 },
      { key: 'c', width: 3, rank: 1, flex: true },
    ];
    expect([...chooseColumns(cols, 20)]).toEqual([
      ['a', 5],
      ['b', 5],
      ['c', 8],
    ]);
    expect([...chooseColumns(cols, 12)]).toEqual([
      ['a', 5],
      ['c', 6],
    ]);
    expect([...chooseColumns(cols, 4)]).toEqual([]);
  });

  it('a port row has netdev, RDMA device, speed, tx/rx with the share of line rate, pause by priority, discards, tx sparkline', () => {
    const row = portRow(port(), history, 90);
    expect(width(row)).toBe(90);
    expect(row).toMatch(/^ {2}ens1f0np0 mlx5_0 {4}25G 21\.7 {2}87% 21\.5 {2}86% p3 1\.2k\/0 +0 +█▄·$/);
    expect(portRow(port({ up: false, speedGbps: null, txGbps: 0, rxGbps: 0 }), {}, 90)).toMatch(/down {2}0\.0 +0\.0/);
    expect(portRow(port(), history, 90, 'warn').startsWith('! ens1f0np0')).toBe(true);
  });

  it('pause shows every priority that moved as received/sent, or the configured one at 0', () => {
    expect(pauseText(port({ pauseRxPerSec: { '3': 10, '4': 0 }, pauseTxPerSec: { '4': 2000 } }))).toBe(
      'p3 10/0 p4 0/2.0k',
    );
    expect(pauseText(port({ pauseRxPerSec: { '3': 0 }, pauseTxPerSec: { '3': 0 } }))).toBe('p3 0/0');
    expect(pauseText(port({ pauseRxPerSec: {}, pauseTxPerSec: {} }))).toBe('0');
  });
});

describe('vLLM, processes and alerts', () => {
  it('vLLM: the numbers, then tokens/s over time scaled to the largest value in view', () => {
    const [numbers, spark] = vllmLines(
      {
        url: 'http://127.0.0.1:8000',
        running: 12,
        waiting: 3,
        generationTokensPerSec: 1843,
        promptTokensPerSec: 900,
        kvCacheUsagePct: 41.2,
        ttftMs: 182.4,
      },
      { 'vllm.tokens': [0, 1000, 2000] },
      80,
    );
    expect(numbers).toBe('vLLM  run 12  wait 3  gen 1.8k tok/s  KV 41%  TTFT 182ms  http://127.0.0.1:8000'.padEnd(80));
    expect(width(spark)).toBe(80);
    expect(spark).toMatch(/^tok\/s +▄█ max 2\.0k$/);
  });

  it("groups the GPUs' processes by name with memory and GPU ranges", () => {
    const worker = (i: number) =>
      gpu(i, { processes: [{ pid: 1000 + i, name: '/usr/bin/VllmWorker', memUsedMiB: 39014 }] });
    expect(processLine([0, 1, 2, 3, 4, 5, 6, 7].map(worker), 80).trimEnd()).toBe(
      'VllmWorker ×8 · 38.1 GiB each · gpu0–7',
    );
    const mixed = [
      worker(0),
      worker(1),
      gpu(5, {
        processes: [
          { pid: 9, name: 'python3', memUsedMiB: 1024 },
          { pid: 10, name: 'python3', memUsedMiB: 2048 },
        ],
      }),
    ];
    expect(processLine(mixed, 100).trimEnd()).toBe(
      'VllmWorker ×2 · 38.1 GiB each · gpu0–1  python3 ×2 · 1.0–2.0 GiB · gpu5',
    );
    expect(processLine([gpu(0)], 30).trimEnd()).toBe('processes: none on the GPUs');
    // Ranks of one job group together; a version digit in a name is not a rank.
    const ranked = [0, 1, 2].map((i) => ({
      ...gpu(i),
      processes: [{ pid: 10 + i, name: `VLLM::EngineCore_DP${i}`, memUsedMiB: 41461 }],
    }));
    expect(
      processLine(
        [...ranked, { ...gpu(3), processes: [{ pid: 9, name: 'python3', memUsedMiB: 1024 }] }],
        100,
      ).trimEnd(),
    ).toBe('VLLM::EngineCore ×3 · 40.5 GiB each · gpu0–2  python3 ×1 · 1.0 GiB · gpu3');
    expect(width(processLine([0, 1, 2, 3].map(worker), 20))).toBe(20);
    expect(gpuRange([5, 0, 1, 2, 7])).toBe('gpu0–2,5,7');
  });

  it('lists failures before warnings, marked, one line each', () => {
    const alerts: Alert[] = [
      { kind: 'pause-storm', subject: 'ens1f0np0', message: '12k pause frames/s on priority 3', severity: 'warn' },
      { kind: 'thermal', subject: 'gpu3', message: '92 °C, HW slowdown', severity: 'fail' },
    ];
    const lines = alertLines(alerts, 40);
    expect(lines.map((l) => l.severity)).toEqual(['fail', 'warn']);
    expect(lines[0]!.text).toBe('✘ gpu3 thermal — 92 °C, HW slowdown'.padEnd(40));
    expect(lines[1]!.text).toBe('! ens1f0np0 pause-storm — 12k pause fra…');
  });
});
