import { describe, expect, it } from 'vitest';
import type { LoopFrame, PortCounters } from '../../src/monitor/parse.js';
import { portReadings, vllmReading } from '../../src/monitor/rates.js';
import { EVENT_REASONS } from '../../src/parse/clock-events.js';
import { hostAlerts } from '../../src/monitor/thresholds.js';
import { Series, SeriesBook } from '../../src/monitor/series.js';
import type { GpuReading, HostSample, PortReading } from '../../src/monitor/types.js';

function port(over: Partial<PortCounters>): PortCounters {
  return {
    netdev: 'ens1f0',
    rdmaDevice: 'mlx5_0',
    operstate: 'up',
    adminUp: true,
    speedMbps: 25000,
    txBytes: 0,
    rxBytes: 0,
    rxDropped: 0,
    xmitWords: 0,
    rcvWords: 0,
    outOfBuffer: 0,
    ethtool: {},
    ...over,
  };
}
const frame = (uptime: number, ...ports: PortCounters[]): LoopFrame => ({ uptime, ports });

describe('port rates', () => {
  it('adds kernel bytes and RDMA words × 4 over the host clock interval', () => {
    const prev = frame(
      100,
      port({
        txBytes: 1_000,
        xmitWords: 0,
        rcvWords: 0,
        ethtool: { rx_prio3_pause: 10, tx_prio3_pause: 0, rx_discards_phy: 5 },
      }),
    );
    // 2 s later: 5 GB of RDMA (1.25 G words) and 250 MB through the kernel went out.
    const cur = frame(
      102,
      port({
        txBytes: 250_001_000,
        xmitWords: 1_250_000_000,
        rcvWords: 625_000_000,
        ethtool: { rx_prio3_pause: 410, tx_prio3_pause: 0, rx_discards_phy: 5 },
      }),
    );
    const [r] = portReadings(cur, prev, 3);
    expect(r).toMatchObject({
      netdev: 'ens1f0',
      up: true,
      speedGbps: 25,
      rdmaTxGbps: 20,
      rdmaRxGbps: 10,
      txGbps: 21,
      rxGbps: 10,
      discardsPerSec: 0,
      outOfBufferPerSec: 0,
    });
    expect(r?.pauseRxPerSec).toEqual({ '3': 200 });
    expect(r?.pauseTxPerSec).toEqual({ '3': 0 }); // the RoCE priority shows even when quiet
  });

  it('gives no rate for a counter that went backwards (driver reload) or a first reading', () => {
    const prev = frame(10, port({ txBytes: 5_000, xmitWords: 9_000 }));
    const cur = frame(11, port({ txBytes: 10, xmitWords: 10 }));
    expect(portReadings(cur, prev)[0]).toMatchObject({ txGbps: null, rdmaTxGbps: null });
    expect(portReadings(cur, null)[0]).toMatchObject({ txGbps: null, up: true });
  });

  it('falls back to mlx5 vport counters when sysfs has no RDMA port counters, and marks a down port', () => {
    const prev = frame(0, port({ xmitWords: null, rcvWords: null, ethtool: { tx_vport_rdma_unicast_bytes: 0 } }));
    const cur = frame(
      1,
      port({ xmitWords: null, rcvWords: null, ethtool: { tx_vport_rdma_unicast_bytes: 1_000_000_000 } }),
      port({ netdev: 'ens1f1', operstate: 'down', speedMbps: null }),
    );
    const rs = portReadings(cur, prev);
    expect(rs[0]?.rdmaTxGbps).toBe(8);
    expect(rs[1]).toMatchObject({ up: false, speedGbps: null });
  });
});

describe('vLLM metrics', () => {
  const lines = (gen: number, ttftSum: number, ttftCount: number, kv: number) => [
    `vllm:num_requests_running{model_name="m"} 12`,
    `vllm:num_requests_waiting{model_name="m"} 3`,
    `vllm:generation_tokens_total{model_name="m"} ${gen}`,
    `vllm:kv_cache_usage_perc{model_name="m"} ${kv}`,
    `vllm:time_to_first_token_seconds_sum{model_name="m"} ${ttftSum}`,
    `vllm:time_to_first_token_seconds_count{model_name="m"} ${ttftCount}`,
  ];
  it('turns counters into tokens/s and the histogram into the mean TTFT of the interval', () => {
    const r = vllmReading(
      { at: 12, lines: lines(5_000, 3.0, 20, 0.42) },
      { at: 10, lines: lines(1_000, 1.0, 10, 0.4) },
      ':8000/metrics',
    );
    expect(r).toEqual({
      url: ':8000/metrics',
      running: 12,
      waiting: 3,
      generationTokensPerSec: 2000,
      promptTokensPerSec: null,
      kvCacheUsagePct: 42,
      ttftMs: 200,
    });
  });
  it('reads the older gpu_cache_usage_perc name and reports null when nothing answered', () => {
    expect(vllmReading({ at: 1, lines: ['vllm:gpu_cache_usage_perc 0.1'] }, null, 'x')?.kvCacheUsagePct).toBe(10);
    expect(vllmReading({ at: 1, lines: [] }, null, 'x')).toBeNull();
  });
});

function gpu(over: Partial<GpuReading>): GpuReading {
  return {
    index: 0,
    name: 'NVIDIA L20',
    uuid: 'GPU-x',
    utilPct: 50,
    memUsedMiB: 1,
    memTotalMiB: 46068,
    tempC: 60,
    powerW: 200,
    powerCapW: 350,
    smClockMHz: 2520,
    smClockMaxMHz: 2520,
    pstate: 'P0',
    eventReasons: 0,
    processes: [],
    ...over,
  };
}
function portReading(over: Partial<PortReading>): PortReading {
  return {
    netdev: 'ens1f0',
    rdmaDevice: 'mlx5_0',
    speedGbps: 25,
    up: true,
    adminUp: true,
    txGbps: 20,
    rxGbps: 20,
    rdmaTxGbps: 20,
    rdmaRxGbps: 20,
    pauseRxPerSec: { '3': 0 },
    pauseTxPerSec: { '3': 0 },
    discardsPerSec: 0,
    outOfBufferPerSec: 0,
    ...over,
  };
}
function host(over: Partial<Omit<HostSample, 'alerts'>>): Omit<HostSample, 'alerts'> {
  return {
    name: 'l20-n1',
    stale: false,
    updated: null,
    error: null,
    gpus: [],
    ports: [],
    vllm: null,
    xids: [],
    ...over,
  };
}

describe('thresholds', () => {
  it('is quiet for a healthy busy host', () => {
    expect(hostAlerts(host({ gpus: [gpu({})], ports: [portReading({ pauseRxPerSec: { '3': 300 } })] }), 25)).toEqual(
      [],
    );
  });

  it('flags thermal and power events from NVML reasons and temperature', () => {
    const alerts = hostAlerts(
      host({
        gpus: [
          gpu({ index: 1, eventReasons: EVENT_REASONS.swPowerCap, powerW: 349 }),
          gpu({ index: 2, eventReasons: EVENT_REASONS.hwThermalSlowdown, tempC: 92 }),
          gpu({ index: 3, tempC: 85 }),
          gpu({ index: 4, eventReasons: EVENT_REASONS.hwPowerBrakeSlowdown }),
        ],
      }),
      null,
    );
    expect(alerts.map((a) => [a.subject, a.kind, a.severity])).toEqual([
      ['gpu1', 'power', 'warn'],
      ['gpu2', 'thermal', 'fail'],
      ['gpu3', 'thermal', 'warn'],
      ['gpu4', 'power', 'fail'],
    ]);
  });

  it('tells a pause storm (many pauses, little data) from congestion, and flags any discard', () => {
    const storm = hostAlerts(
      host({ ports: [portReading({ txGbps: 0.3, rxGbps: 0.2, pauseTxPerSec: { '3': 30_000 } })] }),
      25,
    );
    expect(storm).toMatchObject([{ kind: 'pause-storm', severity: 'fail', subject: 'ens1f0' }]);
    const busy = hostAlerts(host({ ports: [portReading({ pauseRxPerSec: { '3': 30_000 } })] }), 25);
    expect(busy).toMatchObject([{ kind: 'pause-storm', severity: 'warn' }]);
    const drops = hostAlerts(host({ ports: [portReading({ discardsPerSec: 120 })] }), 25);
    expect(drops[0]).toMatchObject({ kind: 'discards', severity: 'fail' });
    expect(drops[0]?.message).toContain('R26');
  });

  it('flags a port down or slower than its peers, Xid lines, and a stale host alone', () => {
    expect(hostAlerts(host({ ports: [portReading({ up: false })] }), 25)).toMatchObject([
      {
        kind: 'port-down',
        severity: 'fail',
        message: 'ens1f0 is up but has no link (cable, peer port or transceiver)',
      },
    ]);
    // Not brought up yet (a fresh host before the network stage) is not a broken link.
    expect(hostAlerts(host({ ports: [portReading({ up: false, adminUp: false })] }), 25)).toMatchObject([
      { kind: 'port-down', severity: 'warn' },
    ]);
    expect(hostAlerts(host({ ports: [portReading({ speedGbps: 10 })] }), 25)).toMatchObject([
      { kind: 'port-speed', severity: 'warn' },
    ]);
    expect(
      hostAlerts(host({ xids: ['[ 5.1] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.'] }), 25),
    ).toMatchObject([{ kind: 'xid', message: 'NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.' }]);
    expect(
      hostAlerts(host({ stale: true, error: 'connection lost', ports: [portReading({ up: false })] }), 25),
    ).toEqual([
      { kind: 'stale', subject: 'l20-n1', severity: 'fail', message: 'l20-n1 not answering: connection lost' },
    ]);
  });
});

describe('history', () => {
  it('keeps 60 one-second buckets, averages within a bucket and leaves gaps where nothing arrived', () => {
    const s = new Series();
    s.push(1_000, 10);
    s.push(1_500, 20);
    s.push(2_000, 30);
    s.push(5_000, 40); // 3 and 4 s missing
    expect(s.points('1m')).toEqual([15, 30, null, null, 40]);
    for (let t = 6; t < 200; t++) s.push(t * 1_000, t);
    expect(s.points('1m')).toHaveLength(60);
    expect(s.points('1m').at(-1)).toBe(199);
    expect(s.points('10m').at(-2)).toBeCloseTo(184.5); // the 180–189 s bucket
    expect(s.points('1h')).toHaveLength(4);
  });

  it('ignores samples older than the open bucket and keys series by name', () => {
    const b = new SeriesBook();
    b.push('gpu0.util', 10_000, 5);
    b.push('gpu0.util', 3_000, 99);
    expect(b.points('gpu0.util', '1m')).toEqual([5]);
    expect(b.points('missing', '1m')).toEqual([]);
    expect(b.keys()).toEqual(['gpu0.util']);
  });
});
