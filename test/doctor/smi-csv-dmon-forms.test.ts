/**
 * nvidia-smi `--query-gpu` CSV with and without a header, and `dmon` in its column sets and `--format csv`,
 * as doctor input. Samples are real captures from one H200 (driver 580.159.04) in test/fixtures/nvidia-smi,
 * plus the two-GPU h200-x2 captures.
 */
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import type { NvidiaSmiCsvFacts } from '../../src/parse/nvidia-smi-csv.js';
import type { NvidiaSmiDmonFacts } from '../../src/parse/nvidia-smi-dmon.js';
import { INVENTORY_GPU_FIELDS } from '../../src/parse/nvidia-smi-query-gpu.js';
import { QUERY_FIELDS } from '../../checks/gpu-driver/probes.js';
import { APPS_FIELDS, EVENT_REASON_FIELDS, GPU_FIELDS } from '../../src/monitor/scripts.js';
import { loadFixture } from '../parse/fixtures.js';

const csv = (path: string) => {
  const { report, summary } = doctorText(loadFixture(path));
  expect(report.kind).toBe('nvidia-smi-csv');
  return { facts: report.facts as NvidiaSmiCsvFacts, summary };
};

describe('headerless --query-gpu CSV', () => {
  it('of a query l20-setup never runs is reported as unknown columns, never labelled by its width', () => {
    // Eight fields like the inventory query: before, this was labelled with the inventory's names (uuid "100 %").
    const { facts, summary } = csv('nvidia-smi/query-gpu-noheader__h200-580-8-fields-util-memory-power-busy.txt');
    const note = 'headerless CSV: cannot tell which columns';
    expect(facts).toMatchObject({ columns: [], rows: [], columnsUnknown: true, note });
    expect(facts.values?.[0]).toEqual([0, 'NVIDIA H200', 100, 22, 1011, 143771, 59, 691.04]);
    expect(summary).toContainEqual(['columns', 'headerless CSV: cannot tell which columns']);
  });

  it('the same query with its header names every column', () => {
    const { facts } = csv('nvidia-smi/query-gpu-header__h200-580-8-fields-util-memory-power-idle.txt');
    expect(facts.columns).toEqual([
      'index',
      'name',
      'utilization.gpu',
      'utilization.memory',
      'memory.used',
      'memory.total',
      'temperature.gpu',
      'power.draw',
    ]);
    const row = { index: 0, 'utilization.gpu': 0, 'memory.total': 143771, 'power.draw': 80.63 };
    expect(facts.rows[0]).toMatchObject(row);
  });

  const own: Array<[string, readonly string[]]> = [
    ['nvidia-smi/query-gpu-noheader__h200-580-inventory-fields.txt', INVENTORY_GPU_FIELDS],
    ['nvidia-smi/query-gpu-noheader__h200-580-gpu-driver-fields.txt', QUERY_FIELDS],
    [
      'nvidia-smi/query-gpu-noheader__h200-580-monitor-fields-event-reasons-idle-and-power-capped.txt',
      [...GPU_FIELDS, EVENT_REASON_FIELDS[0]],
    ],
    ['nvidia-smi/query-compute-apps-noheader__h200-580-monitor-fields.txt', APPS_FIELDS],
  ];
  for (const [path, fields] of own) {
    it(`of l20-setup's own query is read with that query's fields: ${path.split('__')[1]}`, () => {
      const { facts } = csv(path);
      expect(facts.columns).toEqual([...fields]);
      expect(facts.columnsUnknown).toBeUndefined();
      expect(facts.rows.length).toBeGreaterThan(0);
    });
  }

  it('an own query whose cells do not fit (a uuid column holding "99 %") stays unknown', () => {
    const text = '0, NVIDIA H200, 99 %, 00000000:00:06.0, 143771, 580.159.04, 5, 16\n';
    expect(doctorText(text).report.facts).toMatchObject({ columns: [], columnsUnknown: true });
  });

  it('h200-x2 noheader,nounits of 19 fields stays unknown; its header twin is read', () => {
    expect(csv('h200-x2/query-gpu_csv_noheader_nounits.txt').facts).toMatchObject({ columnsUnknown: true, rows: [] });
    expect(csv('h200-x2/query-gpu_csv.txt').facts.columns).toHaveLength(19);
  });

  it('[N/A] is null and units are stripped in the header form; a cut last row keeps its complete cells', () => {
    const uuid = 'GPU-c6743d1c-f4ab-e19f-fcd3-75a52f9d957f';
    const first = loadFixture('nvidia-smi/query-gpu-noheader__h200-580-inventory-fields.txt');
    const text = `${first}1, NVIDIA H200, ${uuid}, 00000000:00:07.0, 1437`;
    const { report } = doctorText(text);
    const f = report.facts as NvidiaSmiCsvFacts;
    expect(f.columns).toEqual([...INVENTORY_GPU_FIELDS]);
    expect(f.rows[1]).toEqual({ index: 1, name: 'NVIDIA H200', uuid, 'pci.bus_id': '00000000:00:07.0' });
  });
});

describe('nvidia-smi dmon forms', () => {
  const dmon = (path: string) => {
    const { report } = doctorText(loadFixture(path));
    expect(report.kind).toBe('nvidia-smi-dmon');
    return report.facts as NvidiaSmiDmonFacts;
  };

  it('one GPU, default columns, and every -s group', () => {
    const util = ['gpu', 'sm', 'mem', 'enc', 'dec', 'jpg', 'ofa'];
    expect(dmon('nvidia-smi/dmon-s-u__h200-580.txt')).toMatchObject({ columns: util, gpus: [0] });
    const all = dmon('nvidia-smi/dmon-s-pucvmet__h200-580-busy.txt');
    expect(all.columns).toHaveLength(22);
    expect(all.units).toMatchObject({ pwr: 'W', tviol: 'bool', rxpci: 'MB/s' });
    expect(all.rows.map((r) => r.pviol)).toEqual([0, 100, 100]);
    const pt = { gpu: 0, pwr: 82, gtemp: 36, mtemp: 36, rxpci: 0, txpci: 0 };
    expect(dmon('nvidia-smi/dmon-s-pt__h200-580.txt').rows[0]).toEqual(pt);
    expect(dmon('nvidia-smi/dmon-s-e__h200-580.txt').columns).toEqual(['gpu', 'sbecc', 'dbecc', 'pci']);
  });

  it('-o DT: the date and time columns keep their text', () => {
    const f = dmon('nvidia-smi/dmon-o-DT__h200-580.txt');
    expect(f.columns.slice(0, 3)).toEqual(['Date', 'Time', 'gpu']);
    expect(f.rows[0]).toMatchObject({ Date: '20261202', Time: '00:53:13', gpu: 0, pwr: 82 });
  });

  it('--format csv: the same header lines and rows, comma-separated', () => {
    const f = dmon('nvidia-smi/dmon-format-csv__h200-580.txt');
    const columns = ['gpu', 'pwr', 'gtemp', 'mtemp', 'sm', 'mem', 'enc', 'dec', 'jpg', 'ofa', 'mclk', 'pclk'];
    expect(f.columns).toEqual(columns);
    expect(f.units).toMatchObject({ pwr: 'W', mclk: 'MHz' });
    expect(f.rows).toEqual([
      { gpu: 0, pwr: 82, gtemp: 36, mtemp: 36, sm: 0, mem: 0, enc: 0, dec: 0, jpg: 0, ofa: 0, mclk: 3201, pclk: 345 },
      { gpu: 0, pwr: 82, gtemp: 36, mtemp: 36, sm: 0, mem: 0, enc: 0, dec: 0, jpg: 0, ofa: 0, mclk: 3201, pclk: 345 },
    ]);
  });

  it('two GPUs (h200-x2) and pmon with no process', () => {
    expect(dmon('h200-x2/dmon_-c3.txt')).toMatchObject({ gpus: [0, 1] });
    expect(dmon('h200-x2/dmon_-c3.txt').rows).toHaveLength(6);
    const p = dmon('nvidia-smi/pmon__h200-580-no-process.txt');
    expect(p.mode).toBe('pmon');
    expect(p.rows[0]).toMatchObject({ gpu: 0, pid: null, command: null });
  });
});
