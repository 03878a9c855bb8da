/** D20 (shared with nccl-tests): thresholds per docs/RULES.md, fires only when the link speed is known. */
import { describe, expect, it } from 'vitest';
import { d20Bandwidth, D20_THRESHOLDS } from '../../src/rules/output/d20-bandwidth.js';

describe('d20Bandwidth — perftest', () => {
  const base = { kind: 'perftest' as const, evidence: ' 65536      5000   18.50   18.40   0.035' };
  it('fires below 20 Gb/s per 25GbE port, with the arithmetic and the line', () => {
    const f = d20Bandwidth({ ...base, bwAvgGbps: 18.4, lineRateGbps: 25, line: 22, device: 'mlx5_0', gidIndex: 3 });
    expect(f).toMatchObject({ rule: 'D20', severity: 'medium', line: 22 });
    expect(f!.evidence).toContain('18.4 Gb/s < 20 Gb/s');
    expect(f!.evidence).toContain('1 × 25 Gb/s');
    expect(f!.fix).toContain('ib_write_bw -d mlx5_0 -x 3 -F --report_gbits -q 4 -D 10');
  });
  it('marginal 20–22 and passing ≥ 22 give no finding', () => {
    expect(d20Bandwidth({ ...base, bwAvgGbps: 21, lineRateGbps: 25 })).toBeUndefined();
    expect(d20Bandwidth({ ...base, bwAvgGbps: 20, lineRateGbps: 25 })).toBeUndefined();
    expect(d20Bandwidth({ ...base, bwAvgGbps: 23.9, lineRateGbps: 25 })).toBeUndefined();
  });
  it('n ports in parallel multiply the threshold', () => {
    expect(d20Bandwidth({ ...base, bwAvgGbps: 70, lineRateGbps: 25, ports: 4 })!.evidence).toContain('< 80 Gb/s');
    expect(d20Bandwidth({ ...base, bwAvgGbps: 85, lineRateGbps: 25, ports: 4 })).toBeUndefined();
  });
  it('never fires without a known link speed', () => {
    expect(d20Bandwidth({ ...base, bwAvgGbps: 1 })).toBeUndefined();
  });
  it('Mtu 1024 adds R24 as a cause', () => {
    expect(d20Bandwidth({ ...base, bwAvgGbps: 15, lineRateGbps: 25, mtu: 1024 })!.evidence).toContain('R24');
    expect(d20Bandwidth({ ...base, bwAvgGbps: 15, lineRateGbps: 25, mtu: 4096 })!.evidence).not.toContain('R24');
  });
  it('scales to other line rates (100 Gb/s port: < 80 fires)', () => {
    expect(d20Bandwidth({ ...base, bwAvgGbps: 75, lineRateGbps: 100 })).toBeDefined();
    expect(d20Bandwidth({ ...base, bwAvgGbps: 90, lineRateGbps: 100 })).toBeUndefined();
  });
});

describe('d20Bandwidth — nccl-tests', () => {
  const big = 1024 * 1024 * 1024;
  const base = {
    kind: 'nccl-tests' as const,
    evidence: '  1073741824  268435456  float  sum  -1  250000  4.29  4.02  0',
  };
  it('inter-node: below 40 % of the aggregate RDMA line rate fires (4 × 25 Gb/s → < 5 GB/s)', () => {
    const f = d20Bandwidth({ ...base, busbwGBps: 4.02, bytes: big, interNode: true, lineRateGbps: 100, line: 40 });
    expect(f).toMatchObject({ rule: 'D20', severity: 'medium', line: 40 });
    expect(f!.evidence).toContain('< 5 GB/s');
    expect(d20Bandwidth({ ...base, busbwGBps: 7.5, bytes: big, interNode: true, lineRateGbps: 100 })).toBeUndefined();
  });
  it('inter-node without a link speed, unknown scope, or a small largest size: no finding', () => {
    expect(d20Bandwidth({ ...base, busbwGBps: 1, bytes: big, interNode: true })).toBeUndefined();
    expect(
      d20Bandwidth({ ...base, busbwGBps: 1, bytes: big, interNode: undefined, lineRateGbps: 100 }),
    ).toBeUndefined();
    expect(
      d20Bandwidth({
        ...base,
        busbwGBps: 1,
        bytes: D20_THRESHOLDS.ncclMinBytes - 1,
        interNode: true,
        lineRateGbps: 100,
      }),
    ).toBeUndefined();
  });
  it('intra-node 8 × L20: < 10 GB/s fires, 10–25 expected', () => {
    expect(d20Bandwidth({ ...base, busbwGBps: 6, bytes: big, interNode: false })).toMatchObject({ rule: 'D20' });
    expect(d20Bandwidth({ ...base, busbwGBps: 12, bytes: big, interNode: false })).toBeUndefined();
  });
});
