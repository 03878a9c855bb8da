import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { aggregateCheck, bwCheck, countersCheck, crossPairCheck, lagCheck } from '../../checks/rdma-link/bw-checks.js';
import {
  toBwRun,
  trafficClass,
  type BwRun,
  type BwUnit,
  type CounterSnapshot,
  type RdmaLinkCluster,
} from '../../checks/rdma-link/cluster.js';
import type { RdmaLinkFacts } from '../../checks/rdma-link/facts.js';
import type { ClusterInput } from '../../src/config/schema.js';
import type { PairCheckDef } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';

const corpus = (name: string) => readFileSync(new URL(`../fixtures/corpus/${name}`, import.meta.url), 'utf8');
const result = (stdout: string, exitCode = 0, stderr = ''): RunResult => ({
  commandLine: 'x',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});

const DEV = ['rocep26s0f0', 'rocep26s0f1', 'rocep154s0f0', 'rocep154s0f1'];
const IF = ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1'];
function unit(k: number, line = 25): BwUnit {
  const end = (h: number) => ({
    host: `l20-n${h}`,
    device: DEV[k - 1]!,
    netdevs: [IF[k - 1]!],
    gidIndex: 3,
    ip: `192.168.10${k}.${h}`,
  });
  return { label: `cable ${k}`, cable: k, client: end(1), server: end(2), qps: 4, lineGbps: line };
}
const ok = (k: number, gbps: number, mtu = 4096): BwRun => ({
  unit: unit(k),
  port: 18514 + k,
  clientLine: 'c',
  serverLine: 's',
  gbps,
  mtu,
  evidence: '',
});

function snap(
  host: string,
  ethtool: Record<string, Record<string, number>> = {},
  hw: Record<string, Record<string, number>> = {},
): CounterSnapshot {
  return { host, ok: true, ethtool, hw };
}
function cluster(over: Partial<RdmaLinkCluster> = {}): RdmaLinkCluster {
  const runs = [1, 2, 3, 4].map((k) => ok(k, 24.1 + k / 100));
  const flat = [snap('l20-n1', { ens1f0: { rx_discards_phy: 0 } }), snap('l20-n2', { ens1f0: { rx_discards_phy: 0 } })];
  return {
    cabling: { cables: [], unknown: [], loops: [] },
    units: runs.map((r) => r.unit),
    skipped: [],
    runs,
    aggregate: runs.map((r) => ({ ...r, gbps: (r.gbps ?? 0) - 0.05 })),
    before: flat,
    after: flat,
    strays: [],
    tclass: 106,
    ...over,
  };
}
const evalPair = (
  check: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster>,
  cl: RdmaLinkCluster | undefined,
  settings: Partial<Omit<ClusterInput, 'hosts'>> = {},
) => check.evaluate([], { ...testContext(undefined, settings), cluster: cl });

describe('perftest results into runs', () => {
  it('reads the BW average and Mtu of a real client output (GB10 sample)', () => {
    const r = toBwRun(
      unit(1, 100),
      18515,
      ['ib_write_bw'],
      ['ib_write_bw'],
      result(corpus('ib_write_bw__gb10-cx7-roce-client-duration-cpu-util-masked.txt')),
      undefined,
      30_000,
    );
    expect(r).toMatchObject({ gbps: 92.57, mtu: 1024 });
  });
  it('a completion error is kept as such, a refused connection as an error', () => {
    const ce = toBwRun(
      unit(1),
      18515,
      [],
      [],
      result(
        '',
        1,
        ' Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n',
      ),
      undefined,
      30_000,
    );
    expect(ce.completionError).toBe('completion error, status 12');
    const refused = toBwRun(
      unit(1),
      18515,
      [],
      [],
      result('', 1, "Couldn't connect to 192.168.101.2:18515\n Unable to init the socket connection\n"),
      undefined,
      30_000,
    );
    expect(refused.error).toBe("Couldn't connect to 192.168.101.2:18515; Unable to init the socket connection");
  });
  it('derives --tclass from the DSCP: 26 → 106 (ECN-capable)', () => {
    expect(trafficClass(testContext().config)).toBe(106);
  });
});

describe('rdma-link.bw', () => {
  it('passes at ≈ 24 Gb/s per cable', () => {
    expect(evalPair(bwCheck, cluster())).toMatchObject({
      status: 'pass',
      summary: '4 × 24.1–24.1 Gb/s (≥ 90 % of line rate)',
    });
  });
  it('warns between 75 and 90 %, fails below, and on a completion error', () => {
    expect(evalPair(bwCheck, cluster({ runs: [ok(1, 24.1), ok(2, 20.0)] }))).toMatchObject({
      status: 'warn',
      summary: 'cable 2: 20.00 Gb/s (80 %)',
    });
    expect(evalPair(bwCheck, cluster({ runs: [ok(1, 24.1), ok(2, 15.0)] })).status).toBe('fail');
    const ce: BwRun = { ...ok(3, 0), gbps: undefined, completionError: 'completion error, status 12' } as BwRun;
    delete (ce as Partial<BwRun>).gbps;
    expect(evalPair(bwCheck, cluster({ runs: [ok(1, 24.1), ce] }))).toMatchObject({
      status: 'fail',
      summary: 'cable 3: completion error, status 12',
    });
  });
  it('at path MTU 1024 passes from 88 % and otherwise names R24', () => {
    expect(evalPair(bwCheck, cluster({ runs: [ok(2, 22.4, 1024)] })).status).toBe('pass');
    expect(evalPair(bwCheck, cluster({ runs: [ok(2, 21.5, 1024)] }))).toMatchObject({ status: 'warn', rule: 'R24' });
  });
  it('an untested cable fails the check (link down)', () => {
    const v = evalPair(
      bwCheck,
      cluster({
        runs: [1, 2, 3].map((k) => ok(k, 24.1)),
        skipped: [
          {
            label: 'l20-n1:ens2f1 (cable 4 by its subnet)',
            reason: 'no peer seen on the port (RDMA DOWN): not tested',
          },
        ],
      }),
    );
    expect(v.status).toBe('fail');
    expect(v.summary).toContain('cable 4');
  });
  it('low bandwidth with drops and retransmissions is the PFC-mismatch signature (R26)', () => {
    const before = [
      snap('l20-n1', { ens1f0: { tx_prio3_pause: 0 } }, { rocep26s0f0: { packet_seq_err: 0 } }),
      snap('l20-n2', { ens1f0: { rx_discards_phy: 0 } }, { rocep26s0f0: { out_of_sequence: 0 } }),
    ];
    const after = [
      snap('l20-n1', { ens1f0: { tx_prio3_pause: 9000 } }, { rocep26s0f0: { packet_seq_err: 1200 } }),
      snap('l20-n2', { ens1f0: { rx_discards_phy: 1500 } }, { rocep26s0f0: { out_of_sequence: 1400 } }),
    ];
    const v = evalPair(bwCheck, cluster({ runs: [ok(1, 16.2)], before, after }));
    expect(v).toMatchObject({ status: 'fail', rule: 'R26', fix: expect.stringContaining('qos.persist') });
    expect(v.evidence).toContain('l20-n2 ens1f0 rx_discards_phy: 0 → 1500 (+1500)');
  });
  it('without a cluster run there is no measurement', () => {
    expect(evalPair(bwCheck, undefined).status).toBe('fail');
  });
});

describe('rdma-link.bw-aggregate', () => {
  it('passes from 88 Gb/s, warns from 70', () => {
    expect(evalPair(aggregateCheck, cluster()).status).toBe('pass');
    const three = [1, 2, 3].map((k) => ok(k, 24.1));
    expect(evalPair(aggregateCheck, cluster({ aggregate: three })).status).toBe('warn');
    expect(evalPair(aggregateCheck, cluster({ aggregate: [ok(1, 24.1), ok(2, 24.1)] })).status).toBe('fail');
  });

  it('with no test run there is nothing to add up: it skips instead of "0.0 Gb/s over 0 tests"', () => {
    const none = cluster({
      runs: [],
      aggregate: [],
      skipped: [{ label: 'cable 1', reason: 'ens1f0 is down' }] as RdmaLinkCluster['skipped'],
    });
    expect(evalPair(aggregateCheck, none)).toMatchObject({ status: 'skip', evidence: 'cable 1: ens1f0 is down' });
  });

  it('one host in the inventory: the measured checks skip, nothing to measure between', () => {
    const one = { ...testContext(['l20-n1']), cluster: cluster() };
    for (const check of [bwCheck, aggregateCheck]) {
      expect(check.evaluate([], one)).toMatchObject({
        status: 'skip',
        summary: 'one host (l20-n1): nothing to compare',
      });
    }
  });
});

describe('rdma-link.counters (R29)', () => {
  it('passes when only RoCE-priority pauses grew', () => {
    const before = [snap('l20-n1', { ens1f0: { rx_prio3_pause: 5 } })];
    const after = [snap('l20-n1', { ens1f0: { rx_prio3_pause: 90 } })];
    expect(evalPair(countersCheck, cluster({ before, after }))).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('priority 3 pauses grew'),
    });
  });
  it('warns on discards or pauses on another priority', () => {
    expect(
      evalPair(
        countersCheck,
        cluster({
          before: [snap('l20-n2', { ens1f0: { rx_discards_phy: 0 } })],
          after: [snap('l20-n2', { ens1f0: { rx_discards_phy: 7 } })],
        }),
      ),
    ).toMatchObject({ status: 'warn', rule: 'R29' });
    expect(
      evalPair(
        countersCheck,
        cluster({
          before: [snap('l20-n2', { ens1f0: { tx_prio0_pause: 0 } })],
          after: [snap('l20-n2', { ens1f0: { tx_prio0_pause: 3 } })],
        }),
      ),
    ).toMatchObject({ status: 'warn', summary: 'pause outside priority 3' });
  });
  it('skips when no test ran', () => {
    expect(evalPair(countersCheck, cluster({ runs: [], aggregate: [] })).status).toBe('skip');
  });
  it('fails when retransmission counters grow while the bandwidth falls short', () => {
    const before = [snap('l20-n1', {}, { rocep26s0f0: { local_ack_timeout_err: 0 } })];
    const after = [snap('l20-n1', {}, { rocep26s0f0: { local_ack_timeout_err: 4 } })];
    expect(evalPair(countersCheck, cluster({ runs: [ok(1, 15)], before, after }))).toMatchObject({
      status: 'fail',
      rule: 'R29',
    });
  });
});

describe('rdma-link.cross-pair and .lag', () => {
  it('cross-pair runs only for the tutorial; its completion error is R16 evidence, not a failure', () => {
    expect(evalPair(crossPairCheck, cluster()).status).toBe('skip');
    const crossed: BwRun = {
      unit: { ...unit(1), label: 'crossed pair', server: unit(2).server },
      port: 18555,
      clientLine: 'c',
      serverLine: 's',
      completionError: 'completion error, status 12',
      evidence: '',
    };
    expect(
      evalPair(crossPairCheck, cluster({ crossPair: crossed }), { network: { design: 'tutorial' } }),
    ).toMatchObject({ status: 'warn', rule: 'R16' });
  });
  it('lag: skip outside design B; fails when a member carried nothing', () => {
    expect(evalPair(lagCheck, cluster()).status).toBe('skip');
    const bond: BwUnit = {
      label: 'bond0',
      client: {
        host: 'l20-n1',
        device: 'mlx5_bond_0',
        netdevs: ['ens1f0', 'ens1f1'],
        gidIndex: 3,
        ip: '192.168.110.1',
      },
      server: {
        host: 'l20-n2',
        device: 'mlx5_bond_0',
        netdevs: ['ens1f0', 'ens1f1'],
        gidIndex: 3,
        ip: '192.168.110.2',
      },
      qps: 8,
      lineGbps: 50,
    };
    const run: BwRun = { unit: bond, port: 18515, clientLine: 'c', serverLine: 's', gbps: 24, mtu: 4096, evidence: '' };
    const before = [
      snap('l20-n1', { ens1f0: { tx_vport_rdma_unicast_bytes: 0 }, ens1f1: { tx_vport_rdma_unicast_bytes: 0 } }),
      snap('l20-n2', { ens1f0: { rx_vport_rdma_unicast_bytes: 0 }, ens1f1: { rx_vport_rdma_unicast_bytes: 0 } }),
    ];
    const busy = [
      snap('l20-n1', { ens1f0: { tx_vport_rdma_unicast_bytes: 9e9 }, ens1f1: { tx_vport_rdma_unicast_bytes: 9e9 } }),
      snap('l20-n2', { ens1f0: { rx_vport_rdma_unicast_bytes: 9e9 }, ens1f1: { rx_vport_rdma_unicast_bytes: 9e9 } }),
    ];
    const idle = [
      snap('l20-n1', { ens1f0: { tx_vport_rdma_unicast_bytes: 9e9 }, ens1f1: { tx_vport_rdma_unicast_bytes: 0 } }),
      snap('l20-n2', { ens1f0: { rx_vport_rdma_unicast_bytes: 9e9 }, ens1f1: { rx_vport_rdma_unicast_bytes: 0 } }),
    ];
    const b = { network: { design: 'B' as const } };
    expect(evalPair(lagCheck, cluster({ runs: [run], before, after: busy }), b).status).toBe('pass');
    expect(evalPair(lagCheck, cluster({ runs: [run], before, after: idle }), b)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('l20-n1:ens1f1'),
    });
  });
});
