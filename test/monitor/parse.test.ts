import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  isUnknownField,
  LoopFrameParser,
  parseAppLine,
  parseGpuLine,
  parsePrometheus,
  type LoopFrame,
} from '../../src/monitor/parse.js';
import { hostLoopScript, gpuCommand, GPU_FIELDS } from '../../src/monitor/scripts.js';

/** A fixture's body: the header lines (`# source`, `# context`) and the blank line after them dropped. */
function body(name: string): string[] {
  const lines = readFileSync(new URL(`../fixtures/monitor/${name}`, import.meta.url), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.trim() === '');
  return lines.slice(start + 1).filter((l) => l !== '');
}

describe('nvidia-smi --query-gpu stream (real H200 captures)', () => {
  it('reads every field of the idle and the busy stream, event reasons as bits', () => {
    const idle = body('h200-gpu-lms1000-idle.txt').map((l) => parseGpuLine(l, true));
    expect(idle).toHaveLength(3);
    expect(idle[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA H200',
      utilPct: 0,
      memTotalMiB: 143771,
      tempC: 40,
      powerCapW: 700,
      smClockMaxMHz: 1980,
      pstate: 'P0',
      eventReasons: 1,
    });
    expect(idle[0]?.uuid).toMatch(/^GPU-[0-9a-f-]{36}$/);
    const busy = body('h200-gpu-lms1000-busy.txt').map((l) => parseGpuLine(l, true));
    const last = busy.at(-1);
    expect(last).toMatchObject({ utilPct: 100, memUsedMiB: 1395, powerW: 697.58, smClockMHz: 1965, eventReasons: 4 });
  });

  it('refuses lines that are not data: headers, errors, a field count that does not match', () => {
    expect(parseGpuLine('index, utilization.gpu [%]', false)).toBeNull();
    const [line] = body('h200-gpu-lms1000-idle.txt');
    expect(parseGpuLine(line as string, false)).toBeNull(); // one field too many without event reasons
    const errorText = body('h200-query-unknown-field.txt').join('\n');
    expect(isUnknownField(errorText)).toBe(true);
    expect(parseGpuLine(errorText.split('\n')[0] as string, true)).toBeNull();
  });

  it('maps [N/A] and [Not Supported] to null', () => {
    const fields = [
      '3',
      'GPU-0acd7153-f2b9-e4e9-4e35-3853cd8eaa07',
      'NVIDIA L20',
      '[N/A]',
      '100',
      '46068',
      '50',
      '[Not Supported]',
      '350.00',
      '2520',
      '2520',
      'P0',
      '[N/A]',
    ];
    expect(fields).toHaveLength(GPU_FIELDS.length + 1);
    expect(parseGpuLine(fields.join(', '), true)).toMatchObject({
      index: 3,
      utilPct: null,
      powerW: null,
      eventReasons: null,
    });
  });
});

describe('compute apps', () => {
  it('reads the real noheader line and skips the header the loop mode prints once', () => {
    const lines = body('h200-apps-loop-header.txt');
    expect(parseAppLine(lines[0] as string)).toBeNull();
    expect(parseAppLine('GPU-d5a3d2f7-0d89-f729-d394-0caed108b12e, 601, python3, 1386')).toEqual({
      gpuUuid: 'GPU-d5a3d2f7-0d89-f729-d394-0caed108b12e',
      pid: 601,
      name: 'python3',
      memUsedMiB: 1386,
    });
    expect(parseAppLine('GPU-d5a3d2f7-0d89-f729-d394-0caed108b12e, 77, python3 -m vllm, serve, 9000')?.name).toBe(
      'python3 -m vllm, serve',
    );
  });
});

function frames(lines: readonly string[]): LoopFrame[] {
  const out: LoopFrame[] = [];
  const p = new LoopFrameParser((f) => out.push(f));
  for (const l of lines) p.line(l);
  return out;
}

describe('host loop frames', () => {
  it('reads the real capture from a machine without RDMA devices: frames, apps block, Xid block', () => {
    const fs = frames(body('h200-hostloop-no-rdma.txt'));
    expect(fs.length).toBeGreaterThanOrEqual(4);
    expect(fs[0]?.uptime).toBeCloseTo(72.35);
    expect(fs[0]?.ports).toEqual([]);
    expect(fs[0]?.apps).toEqual([
      { gpuUuid: 'GPU-d5a3d2f7-0d89-f729-d394-0caed108b12e', pid: 601, name: 'python3', memUsedMiB: 1386 },
    ]);
    expect(fs[0]?.xids).toEqual({ readable: true, lines: [] });
    expect(fs[0]?.metrics).toEqual([]);
    expect(fs[1]?.apps).toBeUndefined(); // not read in that frame: the last list stands
  });

  it('reads ports, RDMA counters, filtered ethtool lines, metrics and Xids; ignores what precedes the first frame', () => {
    const fs = frames([
      'Welcome to Ubuntu 22.04',
      'B 100.50',
      'N ens1f0 mlx5_0 up 25000 1000 2000 3 0x1003',
      'R ens1f0 250 500 7',
      'N ens1f1 mlx5_1 down -1 - - - 0x1002',
      'R ens1f1 - - -',
      'E ens1f0',
      '     rx_prio3_pause: 12',
      '     tx_prio3_pause: 4',
      '     rx_discards_phy: 9',
      'E ens1f1',
      '     tx_vport_rdma_unicast_bytes: 4096',
      'M',
      'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
      'M.',
      'X',
      "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
      'X. 1',
      'Z',
    ]);
    expect(fs).toHaveLength(1);
    const [f] = fs;
    expect(f?.ports[0]).toMatchObject({
      netdev: 'ens1f0',
      rdmaDevice: 'mlx5_0',
      operstate: 'up',
      adminUp: true,
      speedMbps: 25000,
      txBytes: 1000,
      rxBytes: 2000,
      rxDropped: 3,
      xmitWords: 250,
      rcvWords: 500,
      outOfBuffer: 7,
      ethtool: { rx_prio3_pause: 12, tx_prio3_pause: 4, rx_discards_phy: 9 },
    });
    expect(f?.ports[1]).toMatchObject({
      netdev: 'ens1f1',
      operstate: 'down',
      adminUp: false,
      speedMbps: null,
      txBytes: null,
      xmitWords: null,
      ethtool: { tx_vport_rdma_unicast_bytes: 4096 },
    });
    expect(f?.metrics).toHaveLength(1);
    expect(f?.xids?.lines[0]).toContain('Xid (PCI:0000:3b:00): 79');
  });

  it('drops a frame cut off by a lost connection instead of reporting half of it', () => {
    expect(
      frames(['B 1', 'N ens1f0 mlx5_0 up 25000 1 1 0', 'B 2', 'N ens1f0 mlx5_0 up 25000 2 2 0', 'Z']),
    ).toHaveLength(1);
  });
});

describe('Prometheus text', () => {
  it('sums a metric over its label sets and skips comments, NaN and malformed lines', () => {
    const m = parsePrometheus([
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      'vllm:num_requests_running{engine="0",model_name="a"} 3.0',
      'vllm:num_requests_running{engine="1",model_name="a"} 2.0',
      'vllm:kv_cache_usage_perc{engine="0"} 0.25',
      'vllm:kv_cache_usage_perc{engine="1"} NaN',
      'garbage',
      'vllm:generation_tokens_total 1.5e3',
    ]);
    expect(m.get('vllm:num_requests_running')).toEqual({ sum: 5, count: 2 });
    expect(m.get('vllm:kv_cache_usage_perc')).toEqual({ sum: 0.25, count: 1 });
    expect(m.get('vllm:generation_tokens_total')?.sum).toBe(1500);
  });
});

describe('sampler commands', () => {
  it('runs nvidia-smi in loop mode with the event-reasons field, then its old name, then without', () => {
    expect(gpuCommand(1000, 0)).toContain('-lms');
    expect(gpuCommand(1000, 0).join(' ')).toContain(',clocks_event_reasons.active ');
    expect(gpuCommand(1000, 1).join(' ')).toContain(',clocks_throttle_reasons.active ');
    expect(gpuCommand(1000, 2).join(' ')).not.toContain('reasons');
  });

  it('refuses intervals and ports that are not plain numbers, and never splices a netdev name as code', () => {
    expect(() => hostLoopScript({ intervalMs: 1.5, vllmPort: 8000 })).toThrow(/interval/);
    expect(() => hostLoopScript({ intervalMs: 50, vllmPort: 8000 })).toThrow(/interval/);
    expect(() => hostLoopScript({ intervalMs: 1000, vllmPort: 70000 })).toThrow(/port/);
    const script = hostLoopScript({
      intervalMs: 1000,
      vllmPort: null,
      netdevs: ['ens1f0', '$(touch /tmp/pwned)', 'a;b'],
    });
    expect(script).toContain('" ens1f0 "');
    expect(script).not.toContain('pwned');
    expect(script).not.toContain('a;b');
    expect(script).not.toContain('/metrics');
  });
});
