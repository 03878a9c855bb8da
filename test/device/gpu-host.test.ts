/**
 * The monitor's sampler and the gpu-driver / gpudirect nvidia-smi probes as they ran on a real H200
 * (under a matrix-product load), read by the product's own parsers.
 */
import { describe, expect, it } from 'vitest';
import { QUERY_FIELDS } from '../../checks/gpu-driver/probes.js';
import { parseP2p } from '../../checks/gpudirect/p2p.js';
import { LoopFrameParser, parseGpuLine, type LoopFrame } from '../../src/monitor/parse.js';
import { parseNvidiaSmi } from '../../src/parse/nvidia-smi.js';
import { parseNvidiaSmiQueryGpu } from '../../src/parse/nvidia-smi-query-gpu.js';
import { parseNvidiaSmiTopo } from '../../src/parse/nvidia-smi-topo.js';
import { deviceFixture } from './helpers.js';

const UUID = /^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the monitor on the H200', () => {
  it("the host loop: a frame a second, the load's process in the apps frames, the kernel log readable", () => {
    const frames: LoopFrame[] = [];
    const parser = new LoopFrameParser((f) => frames.push(f));
    for (const line of deviceFixture('host-loop.txt').split('\n')) parser.line(line);
    expect(frames.length).toBeGreaterThanOrEqual(5);
    const uptimes = frames.map((f) => f.uptime ?? NaN);
    for (let i = 1; i < uptimes.length; i++) expect(uptimes[i]! - uptimes[i - 1]!).toBeGreaterThan(0.9);
    expect(frames.every((f) => f.ports.length === 0)).toBe(true); // no RDMA netdev on this box
    const apps = frames.filter((f) => f.apps !== undefined);
    expect(apps.length).toBeGreaterThanOrEqual(2); // frames 0 and 5 (APPS_EVERY)
    for (const f of apps) {
      expect(f.apps).toHaveLength(1);
      expect(f.apps![0]).toMatchObject({ name: 'python3' });
      expect(f.apps![0]!.gpuUuid).toMatch(UUID);
      expect(f.apps![0]!.memUsedMiB).toBeGreaterThan(0);
    }
    expect(frames[0]!.xids).toEqual({ readable: true, lines: [] });
  });

  it('the GPU sampler: every line parses, the load shows', () => {
    const lines = deviceFixture('gpu-sampler.txt')
      .split('\n')
      .filter((l) => l.trim());
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      const g = parseGpuLine(line, true);
      expect(g).toMatchObject({
        index: 0,
        name: 'NVIDIA H200',
        memTotalMiB: 143771,
        powerCapW: 700,
        smClockMaxMHz: 1980,
        pstate: 'P0',
      });
      expect(g!.uuid).toMatch(UUID);
      expect(g!.utilPct).toBeGreaterThanOrEqual(90);
      expect(g!.powerW).toBeGreaterThan(300);
      expect(g!.eventReasons).not.toBeNull();
    }
  });

  it('monitor --once --json over SSH reads the same GPU', () => {
    type SnapshotHost = { name: string; error: unknown; gpuError: unknown; gpus: Array<Record<string, unknown>> };
    type Snapshot = { hosts: SnapshotHost[] };
    const snap = JSON.parse(deviceFixture('monitor.json')) as Snapshot;
    expect(snap.hosts).toHaveLength(1);
    expect(snap.hosts[0]).toMatchObject({ name: 'h200', error: null, gpuError: null });
    expect(snap.hosts[0]!.gpus).toHaveLength(1);
    expect(snap.hosts[0]!.gpus[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA H200',
      memTotalMiB: 143771,
      powerCapW: 700,
    });
  });
});

describe('the nvidia-smi probes on the H200', () => {
  it('gpu-driver query and nvidia-smi', () => {
    const q = parseNvidiaSmiQueryGpu(deviceFixture('smi-query.txt'), { fields: QUERY_FIELDS });
    expect(q.gpus).toHaveLength(1);
    expect(q.gpus[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA H200',
      bdf: '0000:00:06.0',
      driverVersion: '580.159.04',
      memoryTotalMiB: 143771,
      pcieLinkGenCurrent: 5,
    });
    const smi = parseNvidiaSmi(deviceFixture('smi.txt'));
    expect(smi).toMatchObject({ driverVersion: '580.159.04', cudaVersion: '13.0' });
    expect(smi.gpus).toHaveLength(1);
  });

  it('gpudirect topo -m and topo -p2p r', () => {
    const topo = parseNvidiaSmiTopo(deviceFixture('smi-topo-m.txt'));
    expect(topo).toMatchObject({ devices: ['GPU0'], gpus: ['GPU0'], nics: [] });
    expect(topo.error).toBeUndefined();
    const p2p = parseP2p(deviceFixture('smi-topo-p2p.txt'));
    expect(p2p).toEqual({ gpus: ['GPU0'], status: { GPU0: {} } }); // one GPU: no pair to report
  });
});
