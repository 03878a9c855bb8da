/** nvidia-smi in all its forms (table, CSV, -q, -q -x, dmon/pmon, -L, --version), nvcc, driver version, topo. */
import { describe, expect, it } from 'vitest';
import type { NvidiaSmiFacts } from '../../src/parse/nvidia-smi.js';
import type { NvidiaSmiCsvFacts } from '../../src/parse/nvidia-smi-csv.js';
import type { NvidiaSmiQFacts } from '../../src/parse/nvidia-smi-q-facts.js';
import type { NvidiaSmiDmonFacts } from '../../src/parse/nvidia-smi-dmon.js';
import { doctorInput, expectDetected, finding, rules, run } from './gpu-helpers.js';

const smi = (f: string) => {
  const text = doctorInput(f);
  expectDetected(text, 'nvidia-smi');
  return run<NvidiaSmiFacts>('nvidia-smi', text);
};

describe('nvidia-smi default table, drivers 390 … 595', () => {
  it('390.25: no CUDA version, 8 GPUs, GPU/PID/Type processes', () => {
    const { facts, findings } = smi('corpus/nvidia-smi__8x-gtx1080ti-390.25-old-format-processes.txt');
    expect(facts.driverVersion).toBe('390.25');
    expect(facts.cudaVersion).toBeUndefined();
    expect(facts.gpus).toHaveLength(8);
    expect(facts.gpus[3]).toMatchObject({
      index: 3,
      name: 'GeForce GTX 108...',
      busId: '00000000:09:00.0',
      memUsedMiB: 7996,
      memTotalMiB: 11178,
      utilPct: 100,
      tempC: 82,
      powerW: 217,
      powerCapW: 250,
      fanPct: 65,
    });
    expect(facts.processes).toHaveLength(13);
    expect(facts.processes[3]).toEqual({
      gpu: 3,
      pid: 4755,
      type: 'C',
      name: '...ware/MATLAB/matlab94/bin/glnxa64/MATLAB',
      memMiB: 389,
    });
    expect(findings).toEqual([]);
  });

  it('440.82 in docker: empty Processes table', () => {
    const { facts } = smi('corpus/nvidia-smi__440.82-in-docker-empty-processes.txt');
    expect(facts).toMatchObject({ driverVersion: '440.82', cudaVersion: '10.2' });
    expect(facts.gpus.map((g) => g.memUsedMiB)).toEqual([10916, 149]);
    expect(facts.processes).toEqual([]);
  });

  it('450.57: MIG M. row and GI/CI process columns', () => {
    const { facts, findings } = smi('corpus/nvidia-smi__2gpu-450.57-gi-ci-columns-first-appearance.txt');
    expect(facts).toMatchObject({ driverVersion: '450.57', cudaVersion: '11.0' });
    expect(facts.gpus[1]).toMatchObject({
      index: 1,
      name: 'GeForce GTX 750 Ti',
      dispA: 'On',
      migMode: 'N/A',
      powerW: 1,
      powerCapW: 46,
    });
    expect(facts.processes).toHaveLength(6);
    expect(facts.processes[0]).toEqual({
      gpu: 0,
      gi: 'N/A',
      ci: 'N/A',
      pid: 1032,
      type: 'C',
      name: 'python',
      memMiB: 745,
    });
    expect(findings).toEqual([]);
  });

  it('525: Fan ERR! → D21 graded high (fan only)', () => {
    const { facts, findings } = smi('corpus/nvidia-smi__rtx4090-525.125-old-format-fan-err.txt');
    expect(facts).toMatchObject({ driverVersion: '525.125.06', cudaVersion: '12.0' });
    expect(facts.gpus[0]).toMatchObject({
      errFields: ['fan'],
      tempC: 38,
      computeMode: 'E. Process',
      memTotalMiB: 23028,
    });
    expect(facts.gpus[0]?.fanPct).toBeUndefined();
    const d21 = finding(findings, 'D21');
    expect(d21.severity).toBe('high');
    expect(d21.evidence).toContain('|ERR!   38C    P5    49W / 450W |');
    expect(d21.line).toBe(9);
  });

  it('550 / 570 / 580 / 590 / 595 tables, H100, H200, L40S, A100, RTX PRO', () => {
    const h100 = smi('corpus/nvidia-smi__8x-h100-550.90-idle-no-processes.txt').facts;
    expect(h100).toMatchObject({ driverVersion: '550.90.07', cudaVersion: '12.4', noRunningProcesses: true });
    expect(h100.gpus).toHaveLength(8);
    expect(h100.gpus.every((g) => g.name === 'NVIDIA H100 80GB HBM3' && g.memTotalMiB === 81559)).toBe(true);
    const a100 = smi('corpus/nvidia-smi__a100-580.126.09-plus-separator-exclusive-process-truncated.txt').facts;
    expect(a100).toMatchObject({ driverVersion: '580.126.09', cudaVersion: '13.0' });
    expect(a100.gpus[1]).toMatchObject({
      index: 1,
      busId: '00000000:10:1D.0',
      computeMode: 'E. Process',
      migMode: 'Disabled',
    });
    const rtx = smi('corpus/nvidia-smi__rtx-pro-6000-570.172-whitespace-separator-line.txt').facts;
    expect(rtx.gpus[0]).toMatchObject({ name: 'NVIDIA RTX PRO 6000 Blac...', memTotalMiB: 97887, powerCapW: 600 });
    const h200 = smi('corpus/nvidia-smi__h200-590.48-idle.txt').facts;
    expect(h200.gpus[0]).toMatchObject({ name: 'NVIDIA H200', memTotalMiB: 143771, busId: '00000000:83:00.0' });
    const l40s = smi('corpus/nvidia-smi__l40s-595.80-with-processes.txt').facts;
    expect(l40s).toMatchObject({ driverVersion: '595.80', cudaVersion: '13.2' });
    expect(l40s.gpus[0]).toMatchObject({
      name: 'NVIDIA L40S',
      memUsedMiB: 1235,
      memTotalMiB: 46068,
      utilPct: 9,
      powerW: 110,
      powerCapW: 350,
      migMode: 'N/A',
    });
    expect(l40s.processes.map((p) => [p.pid, p.name, p.memMiB])).toEqual([
      [20037, 'ffmpeg', 538],
      [20038, 'ffmpeg', 681],
    ]);
    expect(smi('corpus/nvidia-smi__l40s-595.80-idle-no-processes.txt').facts.processes).toEqual([]);
    const hp = smi('corpus/nvidia-smi__h100-80gb-590.48-with-processes.txt').facts;
    expect(hp.processes.map((p) => p.name)).toContain('/root/tools/memhog');
  });

  it('MIG enabled (590) → D23 medium; "On" in the ECC cell is not an error count', () => {
    const { facts, findings } = smi('corpus/nvidia-smi__h100-590.48-mig-enabled.txt');
    expect(facts.gpus[0]).toMatchObject({ migMode: 'Enabled', eccUncorr: 'On' });
    expect(facts.migDevices).toHaveLength(4);
    expect(facts.migDevices?.[0]).toEqual({ gpu: 0, gi: 2, ci: 0, mig: 0, memUsedMiB: 11091, memTotalMiB: 40448 });
    expect(facts.processes).toHaveLength(3);
    expect(rules(findings)).toEqual(['D23']);
    expect(finding(findings, 'D23').severity).toBe('medium');
  });

  it('`nvidia-smi | grep MiB`: GPU rows without index, processes', () => {
    const { facts } = smi('corpus/nvidia-smi-grep-MiB__8x-h100-sglang-processes.txt');
    expect(facts.gpus).toHaveLength(8);
    expect(facts.gpus[0]).toMatchObject({ memUsedMiB: 1718, memTotalMiB: 81559, utilPct: 100, powerCapW: 700 });
    expect(facts.processes[7]).toMatchObject({ gpu: 7, pid: 62357, name: 'sglang::scheduler_TP7', memMiB: 1708 });
  });

  it('h200-x2 captures: idle and busy', () => {
    const idle = smi('h200-x2/nvidia-smi.txt').facts;
    expect(idle).toMatchObject({ driverVersion: '580.159.04', cudaVersion: '13.0' });
    expect(idle.gpus.map((g) => g.busId)).toEqual(['00000000:00:06.0', '00000000:00:07.0']);
    const busy = smi('h200-x2/nvidia-smi_busy_with_process.txt');
    expect(busy.facts.gpus[0]).toMatchObject({
      index: 0,
      utilPct: 100,
      powerW: 691,
      powerCapW: 700,
      memUsedMiB: 883,
      tempC: 51,
    });
    expect(busy.facts.processes).toEqual([
      { gpu: 0, gi: 'N/A', ci: 'N/A', pid: 871, type: 'C', name: 'python3', memMiB: 874 },
    ]);
    expect(busy.findings).toEqual([]);
  });

  it('an error instead of the table → gpus: [] and D13; lost GPU and ECC → D21 blocker; R610 field names', () => {
    const err = run<NvidiaSmiFacts>(
      'nvidia-smi',
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
    );
    expect(err.facts.gpus).toEqual([]);
    expect(finding(err.findings, 'D13')).toMatchObject({ severity: 'blocker', line: 1 });
    const nvml = run<NvidiaSmiFacts>(
      'nvidia-smi',
      'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.126\n',
    );
    expect(finding(nvml.findings, 'D13').fix).toContain('reboot');
    const lost = run<NvidiaSmiFacts>(
      'nvidia-smi',
      'Unable to determine the device handle for GPU0000:9C:00.0: Unknown Error\n',
    );
    expect(finding(lost.findings, 'D21').severity).toBe('blocker');
    const table = doctorInput('h200-x2/nvidia-smi.txt').replace(
      'Off |                    0 |',
      'Off |                    2 |',
    );
    const ecc = run<NvidiaSmiFacts>('nvidia-smi', table);
    expect(finding(ecc.findings, 'D21')).toMatchObject({ severity: 'blocker' });
    const r610 = run<NvidiaSmiFacts>(
      'nvidia-smi',
      doctorInput('h200-x2/nvidia-smi.txt').replace(
        'Driver Version: 580.159.04     CUDA Version',
        'KMD Version: 610.43.02     CUDA UMD Version',
      ),
    );
    expect(r610.facts).toMatchObject({ driverVersion: '610.43.02', cudaVersion: '13.0' });
  });
});

describe('nvidia-smi --query-gpu / --query-compute-apps CSV', () => {
  const csv = (f: string) => {
    const text = doctorInput(f);
    expectDetected(text, 'nvidia-smi-csv');
    return run<NvidiaSmiCsvFacts>('nvidia-smi-csv', text);
  };
  it('header with units: numbers, null for [N/A]', () => {
    const { facts, findings } = csv('h200-x2/query-gpu_csv.txt');
    expect(facts.query).toBe('gpu');
    expect(facts.columns).toHaveLength(19);
    expect(facts.rows[0]).toMatchObject({
      index: 0,
      name: 'NVIDIA H200',
      'pci.bus_id': '00000000:00:06.0',
      'memory.total': 143771,
      'power.draw': 78.39,
      'fan.speed': null,
      'ecc.errors.uncorrected.volatile.total': 0,
    });
    expect(findings).toEqual([]);
  });
  it('compute apps: identifiers stay text, memory is a number', () => {
    const l40s = csv('corpus/nvidia-smi-query-compute-apps__l40s-595.80-csv.txt').facts;
    expect(l40s.query).toBe('compute-apps');
    expect(l40s.rows[1]).toMatchObject({
      gpu_serial: '0000000000000',
      pid: 20038,
      process_name: 'ffmpeg',
      used_gpu_memory: 681,
    });
    expect(csv('h200-x2/query-compute-apps.txt').facts.rows).toEqual([
      { gpu_uuid: 'GPU-0acd7153-f2b9-e4e9-4e35-3853cd8eaa07', pid: 871, process_name: 'python3', used_gpu_memory: 874 },
    ]);
  });
  it('nounits, units in values, renamed event reasons; noheader keeps raw cells', () => {
    expect(csv('corpus/nvidia-smi-query-gpu__p100-510-csv-nounits.txt').facts.rows[0]).toMatchObject({
      name: 'Tesla P100-PCIE-16GB',
      'fan.speed': null,
      'power.draw': 28.16,
    });
    expect(csv('corpus/nvidia-smi-query-gpu__2x-rtx-pro-6000-570-csv-power-ecc.txt').facts.rows[1]).toMatchObject({
      index: 1,
      'power.draw': 28.54,
      'power.limit': 600,
    });
    expect(
      csv('corpus/nvidia-smi-query-gpu__2x-rtx-pro-6000-570-throttle-renamed-event-reasons.txt').facts.rows[0],
    ).toMatchObject({ 'clocks_event_reasons.sw_power_cap': 'Active' });
    const nh = csv('h200-x2/query-gpu_csv_noheader_nounits.txt').facts;
    expect(nh).toMatchObject({ columns: [], rows: [], columnsUnknown: true });
    expect(nh.values?.[1]?.slice(0, 4)).toEqual([
      1,
      'NVIDIA H200',
      'GPU-c6743d1c-f4ab-e19f-fcd3-75a52f9d957f',
      '00000000:00:07.0',
    ]);
    expect(csv('h200-x2/query-gpu_lms500_busy.txt').facts.values).toHaveLength(16);
  });
  it('uncorrected volatile ECC > 0 → D21; mig.mode.current Enabled → D23', () => {
    const { findings } = run(
      'nvidia-smi-csv',
      'index, mig.mode.current, ecc.errors.uncorrected.volatile.total\n0, Enabled, 0\n1, Disabled, 3\n',
    );
    expect(rules(findings)).toEqual(['D21', 'D23']);
  });
});

describe('nvidia-smi -q and -q -x', () => {
  const q = (f: string) => {
    const text = doctorInput(f);
    expectDetected(text, 'nvidia-smi-q');
    return run<NvidiaSmiQFacts>('nvidia-smi-q', text);
  };
  it('text and XML of the same H200 host agree', () => {
    const t = q('h200-x2/nvidia-smi_-q.txt').facts;
    const x = q('h200-x2/nvidia-smi_-q_-x.xml').facts;
    for (const f of [t, x]) {
      expect(f).toMatchObject({ driverVersion: '580.159.04', cudaVersion: '13.0', attachedGpus: 2 });
      expect(f.gpus.map((g) => [g.name, g.busId])).toEqual([
        ['NVIDIA H200', '00000000:00:06.0'],
        ['NVIDIA H200', '00000000:00:07.0'],
      ]);
      expect(f.gpus[0]).toMatchObject({
        eccMode: { current: 'Enabled' },
        eccVolatile: { dramUncorrectable: 0, sramUncorrectableParity: 0 },
        remappedRows: { pending: false, failure: false },
        pcieGenMax: 5,
        pcieWidthCurrent: 16,
        memTotalMiB: 143771,
      });
    }
    expect(t.format).toBe('text');
    expect(x.format).toBe('xml');
  });
  it('535 / 550 / 590 / 595 text layouts, vGPU -q -d, MIG XML → D23', () => {
    const h100 = q('corpus/nvidia-smi-q__8x-h100-535.183.01-full.txt');
    expect(h100.facts.gpus).toHaveLength(8);
    expect(h100.facts).toMatchObject({ driverVersion: '535.183.01', cudaVersion: '12.2' });
    // One GPU of this real sample shows SW Thermal Slowdown and HW Power Brake Slowdown active: D26, nothing else.
    expect(rules(h100.findings)).toEqual(['D26']);
    expect(finding(h100.findings, 'D26')).toMatchObject({ severity: 'high' });
    expect(q('corpus/nvidia-smi-q__8x-rtx4090-535.154.05-full.txt').facts.gpus[0]).toMatchObject({
      name: 'NVIDIA GeForce RTX 4090',
      eccVolatile: { dramUncorrectable: null },
    });
    expect(q('corpus/nvidia-smi-q__a10-550.127-full.txt').facts.gpus[0]?.name).toBe('NVIDIA A10');
    expect(q('corpus/nvidia-smi-q__h100-80gb-590.48-full.txt').facts.gpus[0]).toMatchObject({
      powerLimitW: 700,
      migMode: { current: 'Disabled' },
    });
    expect(q('corpus/nvidia-smi-q__l40s-595.80-full.txt').facts).toMatchObject({
      driverVersion: '595.80',
      cudaVersion: '13.2',
      gpus: [{ name: 'NVIDIA L40S' }],
    });
    expect(q('corpus/nvidia-smi-q-d__memory-performance-580-vgpu-cuda-not-found-truncated.txt').facts).toMatchObject({
      driverVersion: '580.105.06',
      cudaVersion: 'Not Found',
      attachedGpus: 4,
    });
    const mig = q('corpus/nvidia-smi-q-x__a100-sxm4-40gb-510-mig.xml.txt');
    expect(mig.facts.gpus[0]).toMatchObject({ name: 'NVIDIA A100-SXM4-40GB', migMode: { current: 'Enabled' } });
    expect(finding(mig.findings, 'D23').line).toBe(16);
    expect(q('corpus/nvidia-smi-q-x__rtx4090-535.86-dtd-v12.xml.txt').facts).toMatchObject({
      driverVersion: '535.86.05',
      cudaVersion: '12.2',
    });
  });
  it('volatile DRAM uncorrectable > 0 and a pending row remap → D21 blocker with the line', () => {
    const text = doctorInput('h200-x2/nvidia-smi_-q.txt');
    const bad = text
      .replace(/(Volatile\n(?:.*\n){4}\s+DRAM Uncorrectable\s+: )0/, '$17')
      .replace(/(Remapped Rows\n(?:.*\n){4}\s+Pending\s+: )No/, '$1Yes');
    const { findings } = run('nvidia-smi-q', bad);
    const d21 = finding(findings, 'D21');
    expect(d21.severity).toBe('blocker');
    expect(d21.evidence).toContain('DRAM Uncorrectable: 7');
    expect(d21.evidence).toContain('Remapped Rows/Pending: Yes');
  });
});

describe('dmon / pmon, -L, --version, nvcc, driver version, topo', () => {
  it('dmon and pmon: columns, numbers, null for -', () => {
    for (const f of [
      'h200-x2/dmon_-c3.txt',
      'corpus/nvidia-smi-dmon__h100-590.48.txt',
      'corpus/nvidia-smi-dmon__l40s-595.80.txt',
      'corpus/nvidia-smi-dmon-s-pt__2x-rtx-pro-6000-570.txt',
      'h200-x2/pmon_-c2.txt',
      'corpus/nvidia-smi-pmon__l40s-595.80.txt',
    ])
      expectDetected(doctorInput(f), 'nvidia-smi-dmon');
    const d = run<NvidiaSmiDmonFacts>('nvidia-smi-dmon', doctorInput('h200-x2/dmon_-c3.txt')).facts;
    expect(d.mode).toBe('dmon');
    expect(d.columns).toEqual([
      'gpu',
      'pwr',
      'gtemp',
      'mtemp',
      'sm',
      'mem',
      'enc',
      'dec',
      'jpg',
      'ofa',
      'mclk',
      'pclk',
    ]);
    expect(d.rows).toHaveLength(6);
    expect(d.rows[0]).toMatchObject({ gpu: 0, pwr: 689, sm: 100, pclk: 1545 });
    const pt = run<NvidiaSmiDmonFacts>(
      'nvidia-smi-dmon',
      doctorInput('corpus/nvidia-smi-dmon-s-pt__2x-rtx-pro-6000-570.txt'),
    ).facts;
    expect(pt.rows[0]).toEqual({ gpu: 0, pwr: 30, gtemp: 25, mtemp: null, rxpci: 0, txpci: 0 });
    const p = run<NvidiaSmiDmonFacts>('nvidia-smi-dmon', doctorInput('h200-x2/pmon_-c2.txt')).facts;
    expect(p.mode).toBe('pmon');
    expect(p.rows[0]).toMatchObject({ gpu: 0, pid: 871, type: 'C', sm: 99, enc: null, command: 'python3' });
  });
  it('nvidia-smi -L and --version', () => {
    const l = doctorInput('h200-x2/nvidia-smi_-L.txt');
    expectDetected(l, 'nvidia-smi-list');
    expect(run('nvidia-smi-list', l).facts).toEqual({
      gpus: [
        { index: 0, name: 'NVIDIA H200', uuid: 'GPU-0acd7153-f2b9-e4e9-4e35-3853cd8eaa07' },
        { index: 1, name: 'NVIDIA H200', uuid: 'GPU-c6743d1c-f4ab-e19f-fcd3-75a52f9d957f' },
      ],
    });
    expectDetected(doctorInput('corpus/nvidia-smi-L__l40s-595.80.txt'), 'nvidia-smi-list');
    const v = doctorInput('corpus/nvidia-smi--version__l40s-595.80.txt');
    expectDetected(v, 'nvidia-smi-version');
    expect(run('nvidia-smi-version', v).facts).toEqual({
      smiVersion: '595.80',
      nvmlVersion: '595.80',
      driverVersion: '595.80',
      cudaVersion: '13.2',
    });
  });
  it('nvcc 10.0 (4 lines), 12.4 (prompt above), 13.0', () => {
    const cases: Array<[string, string]> = [
      ['corpus/nvcc--version__cuda-10.0.txt', '10.0'],
      ['corpus/nvcc--version__cuda-12.4-ubuntu22.txt', '12.4'],
      ['h200-x2/nvcc_--version.txt', '13.0'],
    ];
    for (const [f, v] of cases) {
      expectDetected(doctorInput(f), 'nvcc');
      expect(run('nvcc', doctorInput(f)).facts).toMatchObject({ cudaVersion: v });
    }
  });
  it('driver version and topo kinds over the existing parsers', () => {
    const h = doctorInput('h200-x2/proc_driver_nvidia_version.txt');
    expectDetected(h, 'nvidia-driver-version');
    expect(run('nvidia-driver-version', h).facts).toMatchObject({ version: '580.159.04', openKernelModule: true });
    const p = doctorInput('corpus/proc-driver-nvidia-version__proprietary-515-and-580.txt');
    expectDetected(p, 'nvidia-driver-version');
    expect(run('nvidia-driver-version', p).facts).toMatchObject({ version: '515.76', openKernelModule: false });
    const t = doctorInput('h200-x2/topo_-m.txt');
    expectDetected(t, 'nvidia-smi-topo');
    expect(run('nvidia-smi-topo', t).facts).toMatchObject({
      gpus: ['GPU0', 'GPU1'],
      links: { GPU0: { GPU1: 'NV18' } },
    });
    const roce = doctorInput('corpus/nvidia-smi-topo-m__8x-h100-nv18-12nic-roce-tabs-nic-legend.txt');
    expectDetected(roce, 'nvidia-smi-topo');
    expect(run<{ nics: string[]; nicNames: Record<string, string> }>('nvidia-smi-topo', roce).facts.nicNames.NIC0).toBe(
      'mlx5_0',
    );
    for (const f of [
      'corpus/nvidia-smi-topo-mp__2x-rtx-pro-6000-pix-no-nvlink-legend.txt',
      'corpus/nvidia-smi-topo-m__many-nics-misaligned-columns-fragment.txt',
      'corpus/nvidia-smi-topo-m__8x-a100-nv12-no-nics-spaces.txt',
    ])
      expectDetected(doctorInput(f), 'nvidia-smi-topo');
  });
});
