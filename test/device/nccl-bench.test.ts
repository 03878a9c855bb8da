/**
 * The nccl stage's all-reduce benchmark as it ran on a real H200 (world size 1: one GPU), through the
 * stage's own runner (BENCH_RUN_SCRIPT) with NCCL_DEBUG=INFO, read by the stage's parsers and the doctor.
 */
import { describe, expect, it } from 'vitest';
import { THRESHOLDS } from '../../checks/nccl/validation.js';
import { doctorText } from '../../src/doctor/doctor.js';
import { ncclLogFindings } from '../../src/doctor/kinds/gpu/nccl.js';
import { lintText } from '../../src/lint/index.js';
import { parseNcclLog, scanNcclLog } from '../../src/parse/nccl-log.js';
import { parseTorchAllreduce, peakBusbw } from '../../src/parse/torch-allreduce.js';
import { deviceBox, deviceFixture } from './helpers.js';

const SIZES = Array.from({ length: 28 }, (_, i) => 8 * 2 ** i); // --min-bytes 8 --max-bytes 1G --factor 2
const rulesOf = (text: string) => ncclLogFindings(text).map((f) => f.rule);

describe('the benchmark on the H200 with our /etc/nccl.conf', () => {
  const log = deviceFixture('bench-ours.log');
  const table = parseTorchAllreduce(log);

  it('prints one row per size, as the stage parses them', () => {
    expect(table).toMatchObject({ op: 'sum', dtype: 'float32', world: 1 });
    expect(table.rows.map((r) => r.bytes)).toEqual(SIZES);
    for (const r of table.rows) {
      expect(r.timeUs).toBeGreaterThan(0);
      // algbw = bytes / time, to the rounding of the printed time (0.1 us).
      const algbw = r.bytes / r.timeUs / 1e3;
      expect(Math.abs(r.algbwGBps - algbw)).toBeLessThanOrEqual(0.01 + algbw * 0.005);
    }
    expect(table.rows.filter((r) => r.bytes >= 1024 ** 2).every((r) => r.algbwGBps > 0)).toBe(true);
  });

  it("busbw is algbw × 2(n−1)/n: 0 at world size 1, so the stage's figure is 0 (it runs 8 ranks a node)", () => {
    expect(table.rows.every((r) => r.busbwGBps === 0)).toBe(true);
    expect(peakBusbw(table, THRESHOLDS.interMinBytes)?.busbwGBps).toBe(0);
  });

  it('NCCL read our conf and fell back to sockets: no RDMA device there', () => {
    expect(deviceFixture('nccl-ours.conf')).toMatch(/^NCCL_SOCKET_IFNAME==eth0$/m);
    const facts = parseNcclLog(log);
    expect(facts).toMatchObject({
      ncclVersion: '2.28.9',
      network: 'Socket',
      hcas: [],
      gdr: false,
      errors: [],
      nRanks: 1,
      nNodes: 1,
      initComplete: 1,
    });
    expect(facts.env.NCCL_SOCKET_IFNAME).toBe('=eth0');
    expect(facts.socketInterfaces).toEqual(['eth0:192.0.2.2<0>']);
    expect(scanNcclLog(log).ibNoDevice.length).toBeGreaterThan(0);
    expect(log).toContain('NCCL INFO Using network Socket');
    expect(rulesOf(log)).toEqual(['D01']);
    expect(deviceBox().get('torch')).toContain('nccl 2.28.9');
  });

  it('the doctor reads the log as an NCCL log with the same finding', () => {
    const { report } = doctorText(log);
    expect(report?.kind).toBe('nccl-log');
    expect(report?.findings.map((f) => [f.rule, f.severity])).toEqual([['D01', 'info']]);
  });
});

describe("the tutorial's nccl.conf on the H200", () => {
  it('as written: NCCL_SOCKET_IFNAME=bond0 stops the bootstrap, D06 alone names it', () => {
    const log = deviceFixture('bench-tutorial.log');
    expect(parseTorchAllreduce(log).rows).toEqual([]);
    const facts = parseNcclLog(log);
    expect(facts.errors).toContain('Bootstrap : no socket interface found');
    expect(facts.env.NCCL_SOCKET_IFNAME).toBe('bond0');
    // PyTorch reports it as "invalid usage"; that is the bootstrap, not a rejected configuration (D03).
    expect(log).toContain('invalid usage (run with NCCL_DEBUG=WARN for details)');
    expect(rulesOf(log)).toEqual(['D06']);
    const found = doctorText(log).report?.findings.map((f) => [f.rule, f.severity]) ?? [];
    expect(found).toContainEqual(['D06', 'blocker']);
    expect(found.map(([rule]) => rule)).not.toContain('D03');
  });

  it('with its interface fixed, NCCL_ALGO=COLLNET_CHAIN passes at world size 1 (one rank picks no algorithm)', () => {
    const log = deviceFixture('bench-tutorial-ifname.log');
    expect(parseTorchAllreduce(log).rows.map((r) => r.bytes)).toEqual(SIZES);
    expect(parseNcclLog(log)).toMatchObject({ initComplete: 1, errors: [], network: 'Socket' });
    expect(rulesOf(log)).toEqual(['D01']);
    // The conf is still wrong for the real cluster: lint says so without running NCCL.
    const conf = deviceFixture('nccl-ours.conf').replace(/^NCCL_SOCKET_IFNAME.*$/m, 'NCCL_ALGO=COLLNET_CHAIN');
    const lint = lintText(conf, 'nccl.conf');
    expect(lint.findings.map((f) => f.rule)).toEqual(expect.arrayContaining(['R01', 'R02']));
  });
});

describe('NCCL_NET=Socket on the H200', () => {
  it('NCCL skips the IB plugin and uses NET/Socket on eth0', () => {
    const log = deviceFixture('bench-socket.log');
    expect(parseTorchAllreduce(log).rows.map((r) => r.bytes)).toEqual(SIZES);
    const scan = scanNcclLog(log);
    expect(scan.facts).toMatchObject({ network: 'Socket', socketInterfaces: ['eth0:192.0.2.2<0>'], initComplete: 1 });
    expect(scan.ibNoDevice).toEqual([]);
    expect(log).toMatch(/NCCL INFO NET\/Socket : Using \[0\]eth0:/);
    expect(rulesOf(log)).toEqual(['D01']);
  });
});
