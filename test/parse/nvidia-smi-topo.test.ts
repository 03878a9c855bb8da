import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiTopo } from '../../src/parse/nvidia-smi-topo.js';
import {
  ansiWrap,
  CUTS,
  loadFixture,
  spacesToTabs,
  tabsToSpaces,
  toCrlf,
  truncateAt,
  withPrompt,
  withTrailingSpaces,
} from './fixtures.js';

const NIC12 = 'corpus/nvidia-smi-topo-m__8x-h100-nv18-12nic-roce-tabs-nic-legend.txt';
const NIC9_TABS = 'corpus/nvidia-smi-topo-m__8x-h100-nv18-9nic-true-tabs-truncated.txt';
const PXB_LAG = 'corpus/nvidia-smi-topo-m__8x-h100-nv18-8nic-pxb-roce-lag-truncated.txt';
const NV8 = 'corpus/nvidia-smi-topo-m__8gpu-nv8-9nic-truncated.txt';
const A100 = 'corpus/nvidia-smi-topo-m__8x-a100-nv12-no-nics-spaces.txt';
const H100_NONIC = 'corpus/nvidia-smi-topo-m__8x-h100-nv18-no-nics-spaces.txt';
const L40S = 'corpus/nvidia-smi-topo-m__l40s-single-gpu-ansi-escapes.txt';
const FRAGMENT = 'corpus/nvidia-smi-topo-m__many-nics-misaligned-columns-fragment.txt';
const MP_PIX = 'corpus/nvidia-smi-topo-mp__2x-rtx-pro-6000-pix-no-nvlink-legend.txt';
const MP_14NIC = 'corpus/nvidia-smi-topo-mp__8gpu-pcie-14nic-node-sys-truncated.txt';
const LSMOD_THEN_TOPO = 'corpus/lsmod-grep-nvidia__h100-peermem-gdrdrv.txt';
const H200 = 'h200-x2/topo_-m.txt';

const gpus = (n: number): string[] => Array.from({ length: n }, (_, i) => `GPU${i}`);
const nics = (n: number): string[] => Array.from({ length: n }, (_, i) => `NIC${i}`);

describe('parseNvidiaSmiTopo', () => {
  it('reads the complete 8 GPU + 12 NIC table with NIC legend (tabs, trailing tabs)', () => {
    const f = parseNvidiaSmiTopo(loadFixture(NIC12));
    expect(f.devices).toEqual([...gpus(8), ...nics(12)]);
    expect(f.gpus).toEqual(gpus(8));
    expect(f.nics).toEqual(nics(12));
    expect(f.matrix['GPU0']?.['GPU0']).toBe('X');
    expect(f.matrix['GPU0']?.['GPU1']).toBe('NV18');
    expect(f.matrix['GPU0']?.['NIC0']).toBe('PIX');
    expect(f.matrix['GPU3']?.['NIC5']).toBe('PIX');
    expect(f.matrix['GPU7']?.['NIC11']).toBe('PIX');
    expect(f.matrix['NIC3']?.['NIC4']).toBe('PIX');
    expect(Object.keys(f.matrix['NIC11'] ?? {})).toHaveLength(20);
    expect(f.affinity['GPU0']).toEqual({ cpuAffinity: '0-191', numaAffinity: '0', numaNode: 0 });
    expect(f.affinity['NIC0']).toBeUndefined();
    expect(f.nicLegend['NIC0']).toBe('mlx5_0');
    expect(f.nicLegend['NIC11']).toBe('mlx5_11');
    expect(f.nicNames).toEqual(f.nicLegend);
    expect(f.links).toEqual(f.matrix);
    expect(f.legendCodes).toEqual(['X', 'SYS', 'NODE', 'PHB', 'PXB', 'PIX', 'NV#']);
    expect(f.error).toBeUndefined();
  });

  it('reads a true-tab table cut after NIC5 (NIC0 SYS to every GPU)', () => {
    const f = parseNvidiaSmiTopo(loadFixture(NIC9_TABS));
    expect(f.devices).toHaveLength(17);
    expect(Object.keys(f.matrix)).toEqual([...gpus(8), ...nics(6)]);
    expect(gpus(8).map((g) => f.matrix[g]?.['NIC0'])).toEqual(Array(8).fill('SYS'));
    expect(f.matrix['GPU0']?.['NIC8']).toBe('PIX');
    expect(f.matrix['GPU7']?.['NIC1']).toBe('PIX');
    expect(f.affinity['GPU4']).toEqual({ cpuAffinity: '80-159', numaAffinity: '1', numaNode: 1 });
    expect(f.nicLegend).toEqual({});
  });

  it('reads PXB GPU↔NIC pairs and keeps the complete cells of the cut GPU6 row', () => {
    const f = parseNvidiaSmiTopo(loadFixture(PXB_LAG));
    expect(gpus(6).map((g, i) => f.matrix[g]?.[`NIC${i}`])).toEqual(Array(6).fill('PXB'));
    expect(f.matrix['GPU6']).toMatchObject({ GPU6: 'X', NIC3: 'SYS' });
    expect(Object.keys(f.matrix['GPU6'] ?? {})).toHaveLength(12);
    expect(f.affinity['GPU6']).toBeUndefined();
    expect(f.affinity['GPU4']).toEqual({ cpuAffinity: '64-127,192-255', numaAffinity: '1', numaNode: 1 });
  });

  it('reads an NV8 table without the GPU NUMA ID column', () => {
    const f = parseNvidiaSmiTopo(loadFixture(NV8));
    expect(f.matrix['GPU0']?.['GPU5']).toBe('NV8');
    expect(f.matrix['GPU0']?.['NIC2']).toBe('PIX');
    expect(f.affinity['GPU4']).toEqual({ cpuAffinity: '48-95,144-191', numaAffinity: '1', numaNode: 1 });
    expect(Object.keys(f.matrix['GPU7'] ?? {})).toEqual(['GPU0', 'GPU1', 'GPU2', 'GPU3']);
  });

  it('reads re-spaced doc tables without NICs, after a `$ nvidia-smi topo -m` line', () => {
    const a100 = parseNvidiaSmiTopo(loadFixture(A100));
    expect(a100.devices).toEqual(gpus(8));
    expect(a100.nics).toEqual([]);
    expect(a100.matrix['GPU3']?.['GPU7']).toBe('NV12');
    expect(a100.affinity['GPU7']).toEqual({ cpuAffinity: '24-47', numaAffinity: '1', numaNode: 1 });
    const h100 = parseNvidiaSmiTopo(loadFixture(H100_NONIC));
    expect(h100.affinity['GPU4']?.cpuAffinity).toBe('52-103');
    expect(h100.matrix['GPU4']?.['GPU4']).toBe('X');
  });

  it('strips ANSI underline escapes in the header (single L40S)', () => {
    const f = parseNvidiaSmiTopo(loadFixture(L40S));
    expect(f.devices).toEqual(['GPU0']);
    expect(f.matrix).toEqual({ GPU0: { GPU0: 'X' } });
    expect(f.affinity['GPU0']).toEqual({ cpuAffinity: '0-7', numaAffinity: '0', numaNode: 0 });
  });

  it('reads -mp output: PIX pair, legend without NV#', () => {
    const f = parseNvidiaSmiTopo(loadFixture(MP_PIX));
    expect(f.matrix['GPU0']?.['GPU1']).toBe('PIX');
    expect(f.matrix['GPU1']?.['GPU0']).toBe('PIX');
    expect(f.affinity['GPU1']).toEqual({ cpuAffinity: '0-47', numaAffinity: '0', numaNode: 0 });
    expect(f.legendCodes).not.toContain('NV#');
  });

  it('drops the cut `SY` fragment of a truncated -mp row (14 NICs, misaligned header)', () => {
    const f = parseNvidiaSmiTopo(loadFixture(MP_14NIC));
    expect(f.devices).toEqual([...gpus(8), ...nics(14)]);
    expect(f.matrix['GPU0']?.['NIC0']).toBe('PIX');
    expect(f.matrix['GPU3']?.['NIC7']).toBe('PIX');
    expect(f.matrix['GPU0']?.['NIC13']).toBe('SYS');
    expect(f.matrix['GPU4']?.['NIC6']).toBe('SYS');
    expect(f.matrix['GPU4']?.['NIC7']).toBeUndefined();
  });

  it('reads the H200 pair (NV18) and a table pasted after lsmod output', () => {
    const h200 = parseNvidiaSmiTopo(loadFixture(H200));
    expect(h200.matrix).toEqual({ GPU0: { GPU0: 'X', GPU1: 'NV18' }, GPU1: { GPU0: 'NV18', GPU1: 'X' } });
    expect(h200.affinity['GPU1']).toEqual({ cpuAffinity: '0-31', numaAffinity: '0', numaNode: 0 });
    const after = parseNvidiaSmiTopo(loadFixture(LSMOD_THEN_TOPO));
    expect(Object.keys(after.matrix)).toEqual(['GPU0', 'GPU1', 'GPU2']);
    expect(after.matrix['GPU2']?.['NIC1']).toBe('PIX');
    expect(after.affinity['GPU0']?.cpuAffinity).toBe('0-31,64-95');
  });

  it('reports a fragment without header instead of guessing columns', () => {
    const f = parseNvidiaSmiTopo(loadFixture(FRAGMENT));
    expect(f.devices).toEqual([]);
    expect(f.matrix).toEqual({});
    expect(f.error).toBeDefined();
  });

  it('reads older outputs that name NIC columns mlx5_N', () => {
    const text = [
      '\tGPU0\tGPU1\tmlx5_0\tmlx5_1\tCPU Affinity',
      'GPU0\t X \tPIX\tPIX\tSYS\t0-19',
      'GPU1\tPIX\t X \tPIX\tSYS\t0-19',
      'mlx5_0\tPIX\tPIX\t X \tSYS\t',
      'mlx5_1\tSYS\tSYS\tSYS\t X \t',
    ].join('\n');
    const f = parseNvidiaSmiTopo(text);
    expect(f.nics).toEqual(['mlx5_0', 'mlx5_1']);
    expect(f.matrix['GPU1']?.['mlx5_0']).toBe('PIX');
    expect(f.affinity['GPU1']).toEqual({ cpuAffinity: '0-19' });
  });

  it.each([NIC12, NIC9_TABS, A100, L40S, MP_PIX, H200])(
    '%s: CRLF, ANSI, tabs/spaces, prompt keep the facts',
    (name) => {
      const text = loadFixture(name);
      const base = parseNvidiaSmiTopo(text);
      for (const v of [
        toCrlf(text),
        ansiWrap(text),
        tabsToSpaces(text),
        spacesToTabs(text),
        withPrompt(text, 'nvidia-smi topo -m'),
        withTrailingSpaces(text),
      ]) {
        const f = parseNvidiaSmiTopo(v);
        expect(f.matrix).toEqual(base.matrix);
        expect(f.nicLegend).toEqual(base.nicLegend);
        expect(f.devices).toEqual(base.devices);
      }
    },
  );

  it.each([NIC12, NIC9_TABS, MP_14NIC])('%s: truncation keeps only cells that were printed in full', (name) => {
    const text = loadFixture(name);
    const base = parseNvidiaSmiTopo(text);
    for (const cut of CUTS) {
      const f = parseNvidiaSmiTopo(truncateAt(text, cut));
      for (const [row, cells] of Object.entries(f.matrix)) {
        for (const [col, code] of Object.entries(cells)) expect(code).toBe(base.matrix[row]?.[col]);
      }
      for (const [nic, dev] of Object.entries(f.nicLegend)) expect(base.nicLegend[nic]?.startsWith(dev)).toBe(true);
    }
  });

  it('drops an affinity cell that may have been cut on the last line', () => {
    const text =
      '\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tNV18\t0-31\t0\t\tN/A\nGPU1\tNV18\t X \t0-3';
    const f = parseNvidiaSmiTopo(text);
    expect(f.affinity).toEqual({ GPU0: { cpuAffinity: '0-31', numaAffinity: '0', numaNode: 0 } });
    expect(f.matrix['GPU1']).toEqual({ GPU0: 'NV18', GPU1: 'X' });
  });

  it('never throws on junk', () => {
    expect(parseNvidiaSmiTopo('').error).toBe('empty output');
    expect(
      parseNvidiaSmiTopo("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.").devices,
    ).toEqual([]);
    expect(parseNvidiaSmiTopo('\tGPU0\nGPU0').matrix).toEqual({ GPU0: {} });
  });
});
