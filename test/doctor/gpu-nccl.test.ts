/** NCCL logs, nccl-tests and torch watchdog logs: facts and the NCCL output rules. */
import { describe, expect, it } from 'vitest';
import type { NcclLogFacts } from '../../src/parse/nccl-log-schema.js';
import type { NcclTestsFacts } from '../../src/parse/nccl-tests.js';
import type { TorchWatchdogFacts } from '../../src/parse/torch-nccl-watchdog.js';
import { doctorText } from '../../src/doctor/doctor.js';
import { doctorInput, expectDetected, finding, report, rules, run } from './gpu-helpers.js';

const nccl = (f: string) => {
  const text = doctorInput(f);
  expectDetected(text, 'nccl-log');
  return run<NcclLogFacts>('nccl-log', text);
};
const log = (...lines: string[]) => run<NcclLogFacts>('nccl-log', `${lines.join('\n')}\n`);

describe('nccl-log facts across NCCL 2.4 … 2.29', () => {
  it('h200-x2 torch all-reduce on 2.28.9: socket fallback, no HCA, GDR disabled, one node → D01 info', () => {
    const { facts, findings } = nccl('h200-x2/nccl_info_torch_allreduce.txt');
    expect(facts).toMatchObject({
      ncclVersion: '2.28.9',
      ncclBuild: '2.28.9+cuda13.0',
      network: 'Socket',
      hcas: [],
      gdr: false,
      errors: [],
      nNodes: 1,
      nRanks: 2,
      hosts: ['vm'],
    });
    expect(facts.socketInterfaces).toEqual(['eth0:192.0.2.2<0>']);
    expect(rules(findings)).toEqual(['D01']);
    const d01 = finding(findings, 'D01');
    expect(d01.severity).toBe('info');
    expect(d01.line).toBe(17);
    expect(d01.evidence).toContain('vm:667:667 [1] NCCL INFO NET/IB : No device found.');
    expect(d01.evidence).toContain('Using network Socket');
    expect(d01.fix).toContain('rdma link show');
  });

  it('2.29.3 over RoCE: eight HCAs as printed, GDRDMA, 2 nodes, no D finding; echoed GID pin, prefix: R05/R14', () => {
    const { facts, findings: all } = nccl('corpus/nccl-debug__2node-roce-8x-mlx5-nccl-2.29.3-gdrdma-sglang.txt');
    // The env echo (`NCCL_IB_GID_INDEX set by environment to 3.`) is judged by the cfg rules, as lint would judge it.
    expect(rules(all.filter((f) => f.rule.startsWith('R')))).toEqual(['R05', 'R14']);
    const findings = all.filter((f) => !f.rule.startsWith('R'));
    expect(facts).toMatchObject({
      ncclVersion: '2.29.3',
      network: 'IB',
      gdr: true,
      nNodes: 2,
      nRanks: 16,
      gdrdmaChannels: 64,
    });
    expect(facts.hcas).toHaveLength(9);
    expect(facts.hcas[0]).toBe('mlx5_0:1/RoCE');
    expect(facts.env).toMatchObject({ NCCL_IB_TC: '106', NCCL_IB_GID_INDEX: '3', NCCL_NET_GDR_LEVEL: 'PIX' });
    expect(findings).toEqual([]);
  });

  it('2.27.5 with aws-ofi-nccl that initialised then was dropped for internal IB → D22 info only', () => {
    const { facts, findings: all } = nccl('corpus/nccl-debug__2node-roce-nccl-2.27.5-ofi-plugin-fallback-to-ib.txt');
    // Echoed GID pin and interface prefix.
    expect(rules(all.filter((f) => f.rule.startsWith('R')))).toEqual(['R05', 'R14']);
    const findings = all.filter((f) => !f.rule.startsWith('R'));
    expect(facts).toMatchObject({
      ncclVersion: '2.27.5',
      network: 'IB',
      gdr: true,
      nNodes: 2,
      netPlugin: 'AWS Libfabric (v6)',
    });
    expect(facts.hcas).toEqual([
      'mlx5_0:1/RoCE',
      'mlx5_1:1/RoCE',
      'mlx5_2:1/RoCE',
      'mlx5_5:1/RoCE',
      'mlx5_6:1/RoCE',
      'mlx5_7:1/RoCE',
      'mlx5_8:1/RoCE',
      'mlx5_11:1/RoCE',
    ]);
    expect(rules(findings)).toEqual(['D22']);
    expect(finding(findings, 'D22')).toMatchObject({ severity: 'info' });
    expect(finding(findings, 'D22').fix).toContain('NCCL_NET_PLUGIN=none');
  });

  it('plugins: IBext_v8 on irdma RoCE (2.21.5) and SHARP IBext are the networks used, no D22', () => {
    const l40 = nccl('corpus/nccl-debug__l40-irdma-roce-hpcx-ibext-plugin-2.21.5.txt');
    expect(l40.facts).toMatchObject({
      ncclVersion: '2.21.5',
      network: 'IBext_v8',
      hcas: ['irdma0:1/RoCE', 'irdma3:1/RoCE'],
      hosts: ['ai-worker01', 'ai-worker03'],
    });
    expect(l40.findings).toEqual([]);
    const sharp = nccl('corpus/nccl-debug__ib-sharp-ibext-plugin-nccl-collnet-capable.txt');
    expect(sharp.facts).toMatchObject({
      network: 'IBext',
      hcas: ['mlx5_0:1/IB/SHARP', 'mlx5_1:1/IB/SHARP', 'mlx5_4:1/IB/SHARP', 'mlx5_5:1/IB/SHARP'],
    });
    expect(sharp.findings).toEqual([]);
  });

  it('socket fallback across many hosts and via NET/Socket channels → D01 high', () => {
    const { facts, findings } = nccl('corpus/nccl-debug__fallback-net-socket-no-ib-device-found.txt');
    expect(facts).toMatchObject({ ncclVersion: '2.11.4', network: 'Socket', hcas: [] });
    expect(facts.channels['NET/Socket']).toBe(4);
    expect(finding(findings, 'D01')).toMatchObject({ severity: 'high', line: 2 });
    expect(finding(findings, 'D01').evidence).toContain('hosts');
  });

  it('completion error 12, vendor err 129 → D04 blocker naming the status', () => {
    const { facts, findings } = nccl('corpus/nccl-debug__azure-ib-roce-got-completion-error-12-vendor-129.txt');
    expect(facts.hcas).toEqual(['ibP111p0s0:1/IB', 'rdmaP1111p0s2:1/RoCE']);
    const d04 = finding(findings, 'D04');
    expect(d04).toMatchObject({ severity: 'blocker', line: 3 });
    expect(d04.evidence).toContain('with error 12, opcode 0, len');
    expect(d04.fix).toContain('NCCL_IB_GID_INDEX');
  });

  it('ibv_modify_qp Network is unreachable → D05 blocker, errno 101', () => {
    const { facts, findings } = nccl('corpus/nccl-debug__error-ibv_modify_qp-network-unreachable-dgxh100.txt');
    expect(facts.errors[0]).toBe('Call to ibv_modify_qp failed with error Network is unreachable');
    expect(facts.warnCount).toBe(4);
    const d05 = finding(findings, 'D05');
    expect(d05).toMatchObject({ severity: 'blocker', line: 1 });
    expect(d05.evidence).toContain('errno 101');
    expect(rules(findings)).toEqual(['D05']);
  });
});

describe('NCCL output rules on single lines (every wording variant)', () => {
  it('D03: Unrecognized element token "COLLNET_CHAIN" → blocker, names the variable', () => {
    const { findings } = log(
      'n1:1:1 [0] NCCL INFO NCCL_ALGO set by environment to COLLNET_CHAIN',
      'n1:1:1 [0] enqueue.cc:1234 NCCL WARN Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"',
    );
    const d03 = finding(findings, 'D03');
    expect(d03).toMatchObject({ severity: 'blocker', line: 2 });
    expect(d03.fix).toContain('NCCL_ALGO');
    expect(d03.fix).toContain('COLLNET_CHAIN');
    for (const l of [
      'n1:1:1 [0] NCCL WARN Error : no algorithm/protocol available',
      'n1:1:1 [0] NCCL WARN No algorithm/protocol available for function AllReduce with datatype ncclFloat32. NCCL_ALGO was set to COLLNETCHAIN.',
      'n1:1:1 [0] NCCL WARN All entries except the first must have a prefix: "ring;tree"',
    ]) {
      expect(rules(log(l).findings)).toEqual(['D03']);
    }
  });
  it('D04: 2.2x and current wordings; status 5 is secondary', () => {
    const cur = log(
      'n1:1:2 [1] NCCL WARN NET/IB: Got completion from peer 10.0.1.2<45678> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  localGid ::ffff:10.0.1.1 remoteGids ::ffff:10.0.1.2 hca mlx5_1',
    );
    expect(finding(cur.findings, 'D04').fix).toContain('ib_write_bw -d mlx5_1');
    const mid = log(
      'n1:1:2 [1] NCCL WARN NET/IB : Got completion from peer 10.0.1.2<45678> with status=5 opcode=0 len=0 vendor err 249 (Recv) hca mlx5_0',
      'n1:1:2 [1] NCCL WARN NET/IB : Got completion from peer 10.0.1.2<45678> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fe80::1 remoteGids fe80::2 hca mlx5_1',
    );
    expect(finding(mid.findings, 'D04')).toMatchObject({
      title: 'RDMA completion error 12 from peer 10.0.1.2<45678>',
      line: 2,
    });
  });
  it('D05: 110 Connection timed out; an INFO retrying line alone does not fire', () => {
    const t = log(
      'n1:1:2 [1] misc/ibvwrap.cc:188 NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.1.1, remote GID ::ffff:10.0.2.2',
    );
    expect(finding(t.findings, 'D05').evidence).toContain('errno 110');
    expect(
      log(
        'n1:1:2 [1] NCCL INFO Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, retrying 1/5 after 100 msec of sleep',
      ).findings,
    ).toEqual([]);
  });
  it('D06: both bootstrap wordings and the socket wordings', () => {
    for (const l of [
      'n1:1:1 [0] NCCL WARN Bootstrap : no socket interface found',
      'n1:1:1 [0] NCCL WARN Bootstrap: no socket interface found',
      'n1:1:1 [0] NCCL WARN NET/Socket : No usable listening interface found',
    ]) {
      // R14: the echoed value has no leading `=` (a prefix), as lint says of the same nccl.conf line.
      const ifname = 'n1:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0';
      expect(rules(log(ifname, l).findings)).toEqual(['D06', 'R14']);
    }
    expect(
      finding(
        log(
          'n1:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to bond0',
          'n1:1:1 [0] NCCL WARN Bootstrap : no socket interface found',
        ).findings,
        'D06',
      ).evidence,
    ).toContain('NCCL_SOCKET_IFNAME=bond0');
  });
  it('D02: GDR disabled for an IB HCA (with and without "(no module)"); NET/Socket does not count', () => {
    const d = log(
      "n1:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no module)",
      'n1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0',
      "n1:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'",
    );
    expect(d.facts.gdr).toBe(false);
    expect(finding(d.findings, 'D02')).toMatchObject({
      severity: 'medium',
      title: 'GPUDirect RDMA disabled for mlx5_0, mlx5_1',
      line: 1,
    });
    expect(
      log("n1:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'").findings.map((f) => f.rule),
    ).not.toContain('D02');
  });
  it('D17 points to the underlying WARN; D07 from a watchdog line; D22 on a plugin dlerror', () => {
    const u = log(
      'n1:1:1 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error Network is unreachable',
      'RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1',
    );
    expect(rules(u.findings)).toEqual(['D05', 'D17']);
    expect(finding(u.findings, 'D17').evidence).toContain('see D05');
    const w = log(
      'n1:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE',
      '[rank0]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9, NumelOut=9, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.',
    );
    expect(finding(w.findings, 'D07')).toMatchObject({
      severity: 'high',
      line: 2,
      title: 'Collective timeout caught by the NCCL watchdog (ALLREDUCE, SeqNum 808)',
    });
    const p = log(
      'n1:1:1 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory',
      'n1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB ens1f0:10.0.0.1<0>',
      'n1:1:1 [0] NCCL INFO Using network IB',
    );
    expect(rules(p.findings)).toEqual(['D22']);
    expect(
      log(
        'n1:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.',
        'n1:1:1 [0] NCCL INFO Using network IB',
      ).findings,
    ).toEqual([]);
  });
});

describe('nccl-tests', () => {
  const tests = (f: string) => {
    const text = doctorInput(f);
    expectDetected(text, 'nccl-tests');
    return run<NcclTestsFacts>('nccl-tests', text);
  };
  it('2 nodes × 8 H100: 31 rows, avg busbw, largest size', () => {
    const { facts, findings } = tests('corpus/all_reduce_perf__2node-16x-h100-gcp-a3mega.txt');
    expect(facts).toMatchObject({
      test: 'all_reduce_perf',
      avgBusbw: 70.742,
      outOfBounds: 0,
      outOfBoundsStatus: 'OK',
      format: 'wrong',
      nGpus: 1,
      maxBytes: 8589934592,
    });
    expect(facts.rows).toHaveLength(31);
    expect(facts.rows[30]).toMatchObject({
      bytes: 8589934592,
      busbwOut: 338.82,
      busbwIn: 337.35,
      wrongOut: 0,
      wrongIn: 0,
      timeOutUs: 47535,
    });
    expect(facts.hosts).toEqual(['ztan-mig-235z', 'ztan-mig-gq73']);
    expect(facts.ranks).toHaveLength(16);
    expect(findings).toEqual([]);
  });
  it('with NCCL INFO interleaved (EFA, 2.29.2): rows by shape, framing test name', () => {
    const two = tests('corpus/all_reduce_perf+nccl-debug__2node-efa-rtx-pro-6000-nccl-2.29.2.txt');
    expect(two.facts).toMatchObject({ test: 'all_reduce_perf', avgBusbw: 4.26966 });
    expect(two.facts.rows).toHaveLength(28);
    expect(two.facts.rows[27]).toMatchObject({ bytes: 1073741824, busbwOut: 12.37, busbwIn: 12.39 });
    const eight = tests('corpus/all_reduce_perf+nccl-debug__8node-efa-rtx-pro-6000-nccl-2.29.2.txt');
    expect(eight.facts.avgBusbw).toBe(3.61047);
    expect(eight.facts.hosts.length).toBe(8);
    expect(report('corpus/all_reduce_perf+nccl-debug__2node-efa-rtx-pro-6000-nccl-2.29.2.txt')).toMatchObject({
      kind: 'nccl-tests',
      also: ['nccl-log'],
    });
  });
  it('gather_perf 2.16.5 cut by the collector: root column, 5 rows', () => {
    const { facts } = tests('corpus/gather_perf+nccl-debug__2node-a100-pcie-nccl-2.16.5-roce-ib-gdr-distance.txt');
    expect(facts.test).toBe('gather_perf');
    expect(facts.rows).toHaveLength(5);
    expect(facts.rows[0]).toMatchObject({
      bytes: 134217728,
      redop: 'none',
      root: 0,
      busbwOut: 20.19,
      busbwIn: 22.34,
      wrongOut: 0,
    });
    expect(facts.avgBusbw).toBeUndefined();
  });
  it('D15 on #wrong > 0 and on a FAILED footer; old error column; N/A = not validated', () => {
    const bad = run<NcclTestsFacts>(
      'nccl-tests',
      '# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n         128            32     float     sum      -1    30.12    0.00    0.01      3    29.81    0.00    0.01      0\n# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 0.01\n',
    );
    expect(finding(bad.findings, 'D15')).toMatchObject({ severity: 'blocker', line: 3 });
    const old = run<NcclTestsFacts>(
      'nccl-tests',
      '#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n     1048576        262144   float     sum    123.4    8.50   14.87  2e-07    120.1    8.73   15.28  2e-07\n',
    );
    expect(old.facts.format).toBe('error');
    expect(old.facts.rows[0]).toMatchObject({ errorOut: 2e-7, busbwIn: 15.28 });
    expect(old.findings).toEqual([]);
    const na = run<NcclTestsFacts>(
      'nccl-tests',
      '#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n 1024 256 float sum -1 10.0 0.10 0.19 N/A 10.0 0.10 0.19 N/A\n',
    );
    expect(na.facts.validated).toBe(false);
    expect(na.findings).toEqual([]);
  });
  it('D20: intra-node 8 × L20 all_reduce below 10 GB/s at ≥ 256 MiB', () => {
    const ranks = Array.from(
      { length: 8 },
      (_, i) => `#  Rank  ${i} Group  0 Pid  100${i} on l20-n1 device  ${i} [0x${(24 + i).toString(16)}] NVIDIA L20`,
    ).join('\n');
    const text = `# nThread 1 nGpus 1 minBytes 8 maxBytes 536870912 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n${ranks}\n#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n   536870912     134217728     float     sum      -1    98000    5.48    9.59      0    97000    5.53    9.69      0\n# Out of bounds values : 0 OK\n`;
    const { findings } = run('nccl-tests', `user@l20-n1:~$ ./build/all_reduce_perf -b 8 -e 512M -f 2 -g 1\n${text}`);
    expect(finding(findings, 'D20')).toMatchObject({ severity: 'medium', line: 15 });
    expect(
      rules(
        run('nccl-tests', `$ ./build/all_reduce_perf -g 1\n${text.replace(/NVIDIA L20/g, 'NVIDIA H100 80GB HBM3')}`)
          .findings,
      ),
    ).toEqual([]);
    expect(
      rules(
        run('nccl-tests', `$ ./build/all_reduce_perf -g 1\n${text.replace('9.59', '12.59').replace('9.69', '12.69')}`)
          .findings,
      ),
    ).toEqual([]);
  });
});

describe('torch NCCL watchdog', () => {
  it('2022 and 2024–2025 prefixes; D07 high', () => {
    const text = doctorInput('corpus/torch-nccl-watchdog-timeout__formats-2022-2025.txt');
    expectDetected(text, 'torch-nccl-watchdog');
    const { facts, findings } = run<TorchWatchdogFacts>('torch-nccl-watchdog', text);
    expect(facts.timeouts).toHaveLength(12);
    expect(facts.timeouts[0]).toEqual({
      rank: 1,
      seqNum: 469508,
      opType: 'ALLREDUCE',
      timeoutMs: 1800000,
      ranForMs: 1802212,
      line: 2,
    });
    expect(facts.opTypes).toEqual(['ALLREDUCE', 'BROADCAST']);
    expect(facts.exceptions[0]).toMatchObject({ rank: 1, work: 808, lastEnqueued: 811, lastCompleted: 807 });
    expect(rules(findings)).toEqual(['D07']);
    expect(finding(findings, 'D07')).toMatchObject({ severity: 'high', line: 2 });
  });
});

describe('lone NCCL error lines (pasted without a log around them)', () => {
  it('are an nccl-log and fire their rule', () => {
    const cases: Array<[string, string]> = [
      ['Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"', 'D03'],
      [
        'NET/IB: Got completion from peer 10.0.0.2<1234> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_RECV(128) vendor_err=129 hca mlx5_2',
        'D04',
      ],
      ['misc/ibvwrap.cc:187 Call to ibv_modify_qp failed with error Network is unreachable', 'D05'],
      ['Bootstrap : no socket interface found', 'D06'],
    ];
    for (const [line, rule] of cases) {
      const r = report_(line);
      expect(r.kind).toBe('nccl-log');
      expect(r.findings.map((f) => f.rule)).toEqual([rule]);
      expect(r.findings[0]).toMatchObject({ severity: 'blocker', line: 1 });
    }
  });
});

function report_(text: string) {
  return doctorText(`${text}\n`).report;
}

describe('D22 and a requested plugin', () => {
  it('Could not find is normal, unless NCCL_NET_PLUGIN asked for one', () => {
    const notFound =
      'n1:1:1 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net-ofi.so. Using internal network plugin.';
    const using = 'n1:1:1 [0] NCCL INFO Using network IB';
    expect(log(notFound, using).findings).toEqual([]);
    expect(
      rules(
        log('n1:1:1 [0] NCCL INFO NET/Plugin: Plugin name set by env to libnccl-net-ofi.so', notFound, using).findings,
      ),
    ).toEqual(['D22']);
    expect(
      rules(log('n1:1:1 [0] NCCL INFO NCCL_NET_PLUGIN set by environment to ofi', notFound, using).findings),
    ).toEqual(['D22']);
  });
});
