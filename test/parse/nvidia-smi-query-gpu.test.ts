import { describe, expect, it } from 'vitest';
import { INVENTORY_GPU_FIELDS, parseNvidiaSmiQueryGpu } from '../../src/parse/nvidia-smi-query-gpu.js';
import { ansiWrap, CUTS, loadFixture, toCrlf, truncateAt, withPrompt, withTrailingSpaces } from './fixtures.js';

const H200_CSV = 'h200-x2/query-gpu_csv.txt';
const H200_NOHEADER = 'h200-x2/query-gpu_csv_noheader_nounits.txt';
const H200_LMS = 'h200-x2/query-gpu_lms500_busy.txt';
const RTX_POWER = 'corpus/nvidia-smi-query-gpu__2x-rtx-pro-6000-570-csv-power-ecc.txt';
const RTX_REASONS = 'corpus/nvidia-smi-query-gpu__2x-rtx-pro-6000-570-throttle-renamed-event-reasons.txt';
const P100 = 'corpus/nvidia-smi-query-gpu__p100-510-csv-nounits.txt';

// The header of query-gpu_csv.txt: the same query, printed with noheader,nounits in the other file.
const H200_FIELDS = [
  'index',
  'name',
  'uuid',
  'pci.bus_id',
  'driver_version',
  'pstate',
  'utilization.gpu',
  'utilization.memory',
  'memory.used',
  'memory.total',
  'temperature.gpu',
  'power.draw',
  'power.limit',
  'clocks.current.sm',
  'clocks.current.memory',
  'pcie.link.gen.current',
  'pcie.link.width.current',
  'fan.speed',
  'ecc.errors.uncorrected.volatile.total',
];

// The inventory query on the lab's 8 × L20 (noheader,nounits).
const L20 = Array.from(
  { length: 8 },
  (_, i) =>
    `${i}, NVIDIA L20, GPU-3f1a0c2e-5b7d-4e21-9a3c-00000000000${i}, 00000000:${['18', '19', '3a', '3b', '9c', '9d', 'bc', 'bd'][i]}:00.0, 46068, 580.126.09, 4, 16`,
).join('\n');

describe('parseNvidiaSmiQueryGpu', () => {
  it('reads the inventory query (no header) with the default field list', () => {
    const f = parseNvidiaSmiQueryGpu(L20);
    expect(f.columns).toEqual([...INVENTORY_GPU_FIELDS]);
    expect(f.gpus).toHaveLength(8);
    expect(f.gpus[2]).toMatchObject({
      index: 2,
      name: 'NVIDIA L20',
      busId: '00000000:3a:00.0',
      bdf: '0000:3a:00.0',
      memoryTotalMiB: 46068,
      driverVersion: '580.126.09',
      pcieLinkGenCurrent: 4,
      pcieLinkWidthCurrent: 16,
    });
    expect(f.rows[0]?.['memory.total']).toBe(46068);
  });

  it('reads the header variant with units in values (H200)', () => {
    const f = parseNvidiaSmiQueryGpu(loadFixture(H200_CSV));
    expect(f.columns).toEqual(H200_FIELDS);
    expect(f.units).toMatchObject({ 'memory.total': 'MiB', 'power.draw': 'W', 'utilization.gpu': '%' });
    expect(f.gpus).toHaveLength(2);
    expect(f.gpus[1]).toMatchObject({
      index: 1,
      name: 'NVIDIA H200',
      uuid: 'GPU-c6743d1c-f4ab-e19f-fcd3-75a52f9d957f',
      bdf: '0000:00:07.0',
      memoryTotalMiB: 143771,
      driverVersion: '580.159.04',
      pcieLinkGenCurrent: 5,
      pcieLinkWidthCurrent: 16,
    });
    expect(f.rows[0]).toMatchObject({
      'power.draw': 78.39,
      'power.limit': 700,
      'fan.speed': null,
      pstate: 'P0',
      'utilization.gpu': 0,
    });
  });

  it("reads noheader,nounits rows with the caller's field list, equal to the header variant", () => {
    const f = parseNvidiaSmiQueryGpu(loadFixture(H200_NOHEADER), { fields: H200_FIELDS });
    const withHeader = parseNvidiaSmiQueryGpu(loadFixture(H200_CSV));
    expect(f.gpus.map((g) => [g.index, g.uuid, g.memoryTotalMiB, g.pcieLinkGenCurrent])).toEqual(
      withHeader.gpus.map((g) => [g.index, g.uuid, g.memoryTotalMiB, g.pcieLinkGenCurrent]),
    );
    expect(f.rows[0]?.['power.draw']).toBe(78.44);
  });

  it('does not guess columns for headerless rows of another width', () => {
    const f = parseNvidiaSmiQueryGpu(loadFixture(H200_LMS));
    expect(f).toMatchObject({ columnsUnknown: true, gpus: [], rows: [] });
    const g = parseNvidiaSmiQueryGpu(loadFixture(H200_NOHEADER));
    expect(g.columnsUnknown).toBe(true);
  });

  it('reads corpus CSVs: units in values, renamed event-reason fields, P100 nounits without newline', () => {
    const power = parseNvidiaSmiQueryGpu(loadFixture(RTX_POWER));
    expect(power.gpus.map((g) => g.name)).toEqual([
      'NVIDIA RTX PRO 6000 Blackwell Server Edition',
      'NVIDIA RTX PRO 6000 Blackwell Server Edition',
    ]);
    expect(power.rows[1]).toMatchObject({
      'power.draw': 28.54,
      'power.limit': 600,
      'temperature.gpu': 25,
      'ecc.errors.corrected.volatile.total': 0,
    });
    const reasons = parseNvidiaSmiQueryGpu(loadFixture(RTX_REASONS), {
      fields: ['index', 'name', 'clocks_throttle_reasons.active'],
    });
    expect(reasons.columns[2]).toBe('clocks_event_reasons.active');
    expect(reasons.rows[0]).toMatchObject({
      'clocks_event_reasons.active': '0x0000000000000004',
      'clocks_event_reasons.sw_power_cap': 'Active',
    });
    const p100 = parseNvidiaSmiQueryGpu(loadFixture(P100));
    expect(p100.gpus[0]).toMatchObject({
      name: 'Tesla P100-PCIE-16GB',
      uuid: 'GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6',
    });
    expect(p100.rows[0]).toMatchObject({ 'fan.speed': null, 'memory.free': 16280, 'clocks.current.video': 835 });
  });

  it('ignores interleaved lines with commas and a junk line above the header', () => {
    const text = `[  812.331] NVRM: loading NVIDIA UNIX Open Kernel Module, build 580.126.09\n${loadFixture(H200_CSV)}`;
    const lines = text.split('\n');
    lines.splice(3, 0, 'Warning: persistence mode is disabled on device 00000000:00:06.0, see docs, or not');
    const f = parseNvidiaSmiQueryGpu(lines.join('\n'));
    expect(f.columns).toEqual(H200_FIELDS);
    expect(f.gpus.map((g) => g.index)).toEqual([0, 1]);
  });

  it('reports driver and NVML failures instead of rows', () => {
    const failed =
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n";
    expect(parseNvidiaSmiQueryGpu(failed)).toEqual({ columns: [], gpus: [], rows: [], driverLoaded: false });
    expect(
      parseNvidiaSmiQueryGpu(
        'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.126\n',
      ),
    ).toMatchObject({
      nvmlError: 'Driver/library version mismatch',
      gpus: [],
    });
    expect(parseNvidiaSmiQueryGpu('No devices were found\n')).toMatchObject({ noDevices: true, gpus: [] });
    expect(parseNvidiaSmiQueryGpu('bash: nvidia-smi: command not found')).toMatchObject({ notInstalled: true });
  });

  it.each([H200_CSV, RTX_POWER, P100])('%s: variations keep the facts', (name) => {
    const text = loadFixture(name);
    const base = parseNvidiaSmiQueryGpu(text);
    for (const v of [
      toCrlf(text),
      ansiWrap(text),
      withPrompt(text, 'nvidia-smi --query-gpu=index --format=csv'),
      withTrailingSpaces(text),
    ]) {
      expect(parseNvidiaSmiQueryGpu(v)).toEqual(base);
    }
  });

  it('drops the partial last cell of a cut row and never throws', () => {
    const base = parseNvidiaSmiQueryGpu(L20);
    for (const cut of CUTS) {
      const f = parseNvidiaSmiQueryGpu(truncateAt(L20, cut));
      f.gpus.slice(0, -1).forEach((g, i) => expect(g).toEqual(base.gpus[i]));
      const last = f.gpus[f.gpus.length - 1];
      for (const [k, v] of Object.entries(last?.values ?? {})) {
        const i = f.gpus.length - 1;
        if (k !== 'pcie.link.width.current') expect(v).toEqual(base.gpus[i]?.values[k]);
      }
    }
    expect(parseNvidiaSmiQueryGpu('')).toEqual({ columns: [], gpus: [], rows: [] });
  });
});
