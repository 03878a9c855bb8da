import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as c from '../../checks/nccl/checks.js';
import { BENCH_SCRIPT } from '../../checks/nccl/bench-script.js';
import { desiredConf, resolveHca, trafficClass } from '../../checks/nccl/conf.js';
import { blocks, collectNccl, ncclVersionOf, type NcclFacts } from '../../checks/nccl/facts.js';
import { validationCheck, type BenchRun, type NcclCluster } from '../../checks/nccl/validation.js';
import type { FabricFacts } from '../../checks/common/fabric.js';
import type { HostCheckDef, HostFacts, PairCheckDef } from '../../src/engine/types.js';
import { parseTorchAllreduce, peakBusbw } from '../../src/parse/torch-allreduce.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';
import { unreadableVerdict } from '../helpers/needs.js';
import { ncclStage } from '../../checks/nccl/index.js';

const ctx = testContext();
const corpus = (name: string): string => readFileSync(new URL(`../fixtures/corpus/${name}`, import.meta.url), 'utf8');
const TUTORIAL_CONF = readFileSync(new URL('../fixtures/tutorial/etc/nccl.conf', import.meta.url), 'utf8');
const H200_TORCH = readFileSync(new URL('../fixtures/h200-x2/nccl_info_torch_allreduce.txt', import.meta.url), 'utf8');
const run = (stdout: string, exitCode = 0): RunResult => ({
  commandLine: 'x',
  exitCode,
  signal: null,
  stdout,
  stderr: '',
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});

const PORTS = ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1'];
const ROCEP = ['rocep26s0f0', 'rocep26s0f1', 'rocep154s0f0', 'rocep154s0f1'];

/** Design A fabric of host i (0-based) as collectFabric reads it from the lab's `ready`. */
function fabric(host: string, i: number, names = ROCEP): FabricFacts {
  const ports = PORTS.map((netdev, k) => ({
    netdev,
    bdf: `0000:${k < 2 ? '1a' : '9a'}:00.${k % 2}`,
    card: `0000:${k < 2 ? '1a' : '9a'}:00`,
    adminUp: true,
    operstate: 'UP',
    addresses: [`192.168.${101 + k}.${i + 1}/24`],
    rdmaDevice: names[k]!,
    rdmaState: 'ACTIVE',
    mtu: 9000,
  }));
  return {
    host,
    ports,
    netdevs: [
      { name: 'lo', bdf: null, adminUp: true, addresses: ['127.0.0.1/8', '::1/128'] },
      { name: 'eno1', bdf: '0000:03:00.0', adminUp: true, addresses: [`10.0.0.${i + 1}/24`] },
      ...ports.map((p) => ({ name: p.netdev, bdf: p.bdf, adminUp: true, addresses: [...p.addresses, 'fe80::1/64'] })),
    ],
    rdma: names.map((device, k) => ({ device, port: 1, state: 'ACTIVE', physState: 'LINK_UP', netdev: PORTS[k]! })),
    mgmt: { netdev: 'eno1', serverAddress: `10.0.0.${i + 1}` },
    neighbours: [],
  };
}

function facts(host = 'l20-n1', i = 0, over: Partial<NcclFacts> = {}): NcclFacts {
  const f = fabric(host, i);
  const want = desiredConf(ctx.config, f, ctx.runId);
  if (typeof want === 'string') throw new Error(want);
  return {
    host,
    fabric: f,
    confFiles: [{ path: '/etc/nccl.conf', mode: '644', text: want.content }],
    envLines: [],
    units: [],
    torch: { source: 'venv /opt/l20/venv', version: '2.8.0+cu128', nccl: '2.27.3' },
    torchruns: ['/opt/l20/venv/bin/torchrun'],
    venvDists: { vllm: '0.11.0', ray: '2.49.2', torch: '2.8.0' },
    benchScript: BENCH_SCRIPT,
    gdr: { openModule: true, peermem: false, kernel: '5.15.0-126-generic' },
    problems: [],
    ...over,
  };
}

const host = (check: HostCheckDef<NcclFacts>, f: NcclFacts) => check.evaluate(f, f.host, ctx);
const pair = <C>(check: PairCheckDef<NcclFacts, C>, all: HostFacts<NcclFacts>[], cluster?: C) =>
  check.evaluate(all, { ...ctx, cluster });

describe('nccl.conf generation', () => {
  it('design A names the cable-1 netdev and the four discovered devices, never the variables it must not set', () => {
    const want = desiredConf(ctx.config, fabric('l20-n1', 0), ctx.runId);
    if (typeof want === 'string') throw new Error(want);
    expect(want.content).toMatch(/^# l20-setup \S+ run 20261129T120000Z design A; generated from `rdma link show`\n/);
    expect(want.body).toBe(
      'NCCL_SOCKET_IFNAME==ens1f0\nNCCL_IB_HCA==rocep26s0f0:1,rocep26s0f1:1,rocep154s0f0:1,rocep154s0f1:1\nNCCL_IB_TC=106\nNCCL_CROSS_NIC=0\n',
    );
    expect(want.content).not.toMatch(/NCCL_(ALGO|IB_GID_INDEX|NET_GDR_LEVEL|BUFFSIZE|IB_CUDA_SUPPORT|DEBUG)/);
    expect(trafficClass(ctx.config)).toBe(106);
  });
  it('without the network stage there is nothing to generate, and it says why', () => {
    const f = fabric('l20-n1', 0);
    for (const p of f.ports) p.addresses = [];
    expect(desiredConf(ctx.config, f, ctx.runId)).toMatch(
      /no fabric port of l20-n1 has an address in 192\.168\.101\.0\/24/,
    );
  });
  it('design B takes the bond devices and two QPs per connection', () => {
    const f = fabric('l20-n1', 0);
    f.ports.forEach((p, k) => {
      p.master = k < 2 ? 'bond0' : 'bond1';
      p.rdmaDevice = k < 2 ? 'mlx5_bond_0' : 'mlx5_bond_1';
    });
    const want = desiredConf(testContext(undefined, { network: { design: 'B' } }).config, f, ctx.runId);
    expect(typeof want === 'string' ? want : want.body).toBe(
      'NCCL_SOCKET_IFNAME==bond0\nNCCL_IB_HCA==mlx5_bond_0:1,mlx5_bond_1:1\nNCCL_IB_TC=106\nNCCL_IB_QPS_PER_CONNECTION=2\n',
    );
  });
  it('NCCL_IB_HCA resolves as NCCL does: = exact, else prefix; ports other than 1 do not exist', () => {
    expect(resolveHca('mlx5_0:1,mlx5_0:2,mlx5_1:1,mlx5_1:2', ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']).devices).toEqual(
      ['mlx5_0', 'mlx5_1'],
    );
    expect(resolveHca('mlx5_1', ['mlx5_1', 'mlx5_10']).devices).toEqual(['mlx5_1', 'mlx5_10']);
    expect(resolveHca('=mlx5_1', ['mlx5_1', 'mlx5_10']).devices).toEqual(['mlx5_1']);
    expect(resolveHca('^mlx5_0', ['mlx5_0', 'mlx5_1']).devices).toEqual(['mlx5_1']);
    expect(resolveHca('mlx5_0:1', ROCEP).devices).toEqual([]);
  });
});

describe('nccl host checks', () => {
  it('a host with the generated file and the tools passes every host check', () => {
    const f = facts();
    for (const check of [c.confLint, c.hcaResolve, c.socketIfname, c.confNames, c.benchTools])
      expect(host(check, f), check.id).toMatchObject({ status: 'pass' });
  });

  it("the tutorial's nccl.conf: conf-lint fails on R01 with every finding quoted; HCA and socket findings too", () => {
    const f = facts('l20-n1', 0, { confFiles: [{ path: '/etc/nccl.conf', mode: '644', text: TUTORIAL_CONF }] });
    const lint = host(c.confLint, f);
    expect(lint).toMatchObject({ status: 'fail', rule: 'R01' });
    for (const rule of ['R01', 'R02', 'R03', 'R04', 'R05', 'R06', 'R10', 'R11', 'R14'])
      expect(lint.evidence).toContain(` ${rule} `);
    expect(lint.evidence).toContain('Unrecognized element token "COLLNET_CHAIN"');
    expect(lint.fix).toContain('apply nccl.conf');
    // Under rdma-core's rocep… names none of the tutorial's mlx5 tokens exists.
    expect(host(c.hcaResolve, f)).toMatchObject({
      status: 'fail',
      rule: 'R07',
      summary: expect.stringContaining('No device found'),
    });
    // With MLNX_OFED's mlx5_N names two of four rails resolve; the :2 ports do not exist.
    const ofed = { ...f, fabric: fabric('l20-n1', 0, ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']) };
    expect(host(c.hcaResolve, ofed)).toMatchObject({
      status: 'warn',
      rule: 'R06',
      summary: expect.stringMatching(/selects 2 of 4 rails .*mlx5_0:2, mlx5_1:2 match nothing/),
    });
    expect(host(c.socketIfname, f)).toMatchObject({ status: 'fail', rule: 'R14' });
    expect(host(c.confNames, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('not generated by l20-setup'),
    });
  });

  it('precedence: the environment wins over the file, and the lint says where each value came from', () => {
    const f = facts('l20-n1', 0, { envLines: ['NCCL_IB_HCA=mlx5_0'] });
    expect(host(c.hcaResolve, f)).toMatchObject({
      status: 'fail',
      evidence: expect.stringContaining('NCCL_IB_HCA=mlx5_0 (environment)'),
    });
    expect(host(c.confLint, f).evidence).toContain('NCCL_IB_HCA=mlx5_0  (environment)');
  });

  it('unset NCCL_IB_HCA fails; NCCL_SOCKET_IFNAME unset or a prefix warns; names that changed fail conf-names', () => {
    const none = facts('l20-n1', 0, { confFiles: [] });
    expect(host(c.hcaResolve, none)).toMatchObject({ status: 'fail', rule: 'R06' });
    expect(host(c.socketIfname, none)).toMatchObject({
      status: 'warn',
      rule: 'R14',
      summary: expect.stringContaining('eno1'),
    });
    expect(host(c.confNames, none)).toMatchObject({ status: 'fail', summary: '/etc/nccl.conf is missing' });
    // No file, no NCCL_* variable, no unit: nothing to lint is no pass.
    expect(host(c.confLint, none)).toMatchObject({
      status: 'skip',
      summary: expect.stringContaining('nothing to lint'),
    });
    const prefix = facts('l20-n1', 0, { envLines: ['NCCL_SOCKET_IFNAME=ens1f0'] });
    expect(host(c.socketIfname, prefix)).toMatchObject({ status: 'warn', summary: expect.stringContaining('prefix') });
    const renamed = { ...facts(), fabric: fabric('l20-n1', 0, ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']) };
    expect(host(c.confNames, renamed)).toMatchObject({ status: 'fail', rule: 'R07' });
    expect(host(c.hcaResolve, renamed)).toMatchObject({ status: 'fail' });
  });

  it('no RDMA device or no ConnectX port is the finding; rdma or ip missing is "cannot tell"', () => {
    const bare: NcclFacts = {
      ...facts('l20-n1', 0, { confFiles: [] }),
      fabric: { ...fabric('l20-n1', 0), ports: [], rdma: [] },
    };
    expect(host(c.hcaResolve, bare)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('no RDMA device on this host'),
    });
    expect(host(c.confNames, bare)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('no ConnectX port on l20-n1'),
    });
    const missing = (tool: string): RunResult => ({
      ...run('', 127),
      stderr: `bash: line 1: ${tool}: command not found\n`,
    });
    expect(unreadableVerdict(ncclStage, 'nccl.hca-resolve', { 'rdma-link': missing('rdma') })?.summary).toBe(
      'cannot tell: rdma is not installed on l20-n1 (package iproute2)',
    );
    expect(unreadableVerdict(ncclStage, 'nccl.socket-ifname', { 'ip-addr': missing('ip') })?.summary).toBe(
      'cannot tell: ip is not installed on l20-n1 (package iproute2)',
    );
    // NCCL_SOCKET_IFNAME unset and nothing up: the summary names NCCL's default, not an empty value.
    const down: NcclFacts = { ...bare, fabric: { ...bare.fabric, netdevs: [] } };
    expect(host(c.socketIfname, down).summary).toMatch(
      /^NCCL's default choice \(NCCL_SOCKET_IFNAME unset\) finds no UP interface/,
    );
  });

  it('a pinned GID index is a conf-lint finding (R05), and missing tools fail bench-tools', () => {
    const conf = facts().confFiles[0]!;
    const pinned = facts('l20-n1', 0, { confFiles: [{ ...conf, text: `${conf.text}NCCL_IB_GID_INDEX=3\n` }] });
    expect(host(c.confLint, pinned)).toMatchObject({ status: 'fail', rule: 'R05' });
    expect(host(c.benchTools, facts('l20-n1', 0, { venvDists: {}, torchruns: [] }))).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('pip install vllm==0.11.0 ray[default]==2.49.2'),
    });
    expect(host(c.benchTools, facts('l20-n1', 0, { benchScript: '#!/usr/bin/env python3\n' }))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('stale'),
    });
  });
});

describe('nccl pair checks', () => {
  const two = (b: Partial<NcclFacts> = {}) => [
    { host: 'l20-n1', facts: facts() },
    { host: 'l20-n2', facts: facts('l20-n2', 1, b) },
  ];
  it('identical files pass; files that differ only in names warn (R07); a missing file fails', () => {
    expect(pair(c.confParity, two())).toMatchObject({ status: 'pass' });
    const other = desiredConf(ctx.config, fabric('l20-n2', 1, ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']), ctx.runId);
    if (typeof other === 'string') throw new Error(other);
    expect(pair(c.confParity, two({ confFiles: [{ path: '/etc/nccl.conf', text: other.content }] }))).toMatchObject({
      status: 'warn',
      rule: 'R07',
    });
    expect(pair(c.confParity, two({ confFiles: [] }))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('l20-n2'),
    });
  });
  it('parity on one host skips: nothing to compare; the version check still says which NCCL it found', () => {
    const one = [{ host: 'l20-n1', facts: facts() }];
    expect(pair(c.versionParity, one)).toMatchObject({
      status: 'pass',
      summary: 'NCCL 2.27.3 on the one host (l20-n1): nothing to compare',
    });
    const noTorch = [
      { host: 'l20-n1', facts: facts('l20-n1', 0, { torch: { source: 'python3', error: 'ModuleNotFoundError' } }) },
    ];
    expect(pair(c.versionParity, noTorch)).toMatchObject({
      status: 'fail',
      summary: 'no NCCL found through torch on l20-n1',
    });
    expect(pair(c.confParity, one)).toMatchObject({ status: 'skip', summary: 'one host (l20-n1): nothing to compare' });
  });

  it('a torch that does not import is said so, never "torch ?"', () => {
    const broken = two({ torch: { source: 'python3', error: "ModuleNotFoundError: No module named 'torch'" } });
    const v = pair(c.versionParity, broken);
    expect(v).toMatchObject({ status: 'fail', rule: 'R47' });
    expect(v.evidence).toContain("python3: torch not importable, NCCL ModuleNotFoundError: No module named 'torch'");
  });

  it('NCCL versions: equal passes, different warns (R47), none fails', () => {
    expect(pair(c.versionParity, two())).toMatchObject({ status: 'pass', summary: 'NCCL 2.27.3 on 2 hosts' });
    expect(
      pair(c.versionParity, two({ torch: { source: 'python3', version: '2.7.1+cu126', nccl: '2.26.2' } })),
    ).toMatchObject({ status: 'warn', rule: 'R47' });
    const missing = two();
    delete missing[1]!.facts.torch;
    expect(pair(c.versionParity, missing)).toMatchObject({ status: 'fail', rule: 'R47' });
  });
});

describe('nccl.validation verdict on real NCCL logs', () => {
  const hostRun = (host: string, output: string, exitCode = 1) => ({
    host,
    commandLine: 'bash -s',
    exitCode,
    timedOut: false,
    durationMs: 1000,
    output,
  });
  const inter = (outputs: string[], exitCode = 1): BenchRun => ({
    kind: 'inter',
    hosts: outputs.map((o, i) => hostRun(`l20-n${i + 1}`, o, exitCode)),
    table: { 'l20-n1': parseTorchAllreduce(outputs[0] ?? '') },
  });
  const all = [
    { host: 'l20-n1', facts: facts() },
    { host: 'l20-n2', facts: facts('l20-n2', 1) },
  ];
  const verdict = (cluster: NcclCluster) => pair(validationCheck, all, cluster);

  it('ibv_modify_qp failed → fail on D05 with the line quoted', () => {
    const v = verdict({
      runs: [inter([corpus('nccl-debug__error-ibv_modify_qp-network-unreachable-dgxh100.txt'), ''])],
      skipped: [],
    });
    expect(v).toMatchObject({ status: 'fail', rule: 'D05', summary: expect.stringContaining('ibv_modify_qp failed') });
    expect(v.evidence).toContain('Call to ibv_modify_qp failed with error Network is unreachable');
  });
  it('the socket fallback (No device found) → fail on D01', () => {
    expect(
      verdict({ runs: [inter([corpus('nccl-debug__fallback-net-socket-no-ib-device-found.txt'), ''])], skipped: [] }),
    ).toMatchObject({ status: 'fail', rule: 'D01' });
  });
  it('a completion error → fail on D04', () => {
    expect(
      verdict({
        runs: [inter([corpus('nccl-debug__azure-ib-roce-got-completion-error-12-vendor-129.txt'), ''])],
        skipped: [],
      }),
    ).toMatchObject({ status: 'fail', rule: 'D04' });
  });
  it('a host without a 1 GiB row says so in the summary, never "?"', () => {
    const table = parseTorchAllreduce(H200_TORCH);
    const intra: BenchRun = {
      kind: 'intra',
      hosts: [hostRun('l20-n1', H200_TORCH, 0), hostRun('l20-n2', '', 1)],
      table: { 'l20-n1': table, 'l20-n2': parseTorchAllreduce('') },
    };
    const v = verdict({ runs: [intra], skipped: [] });
    expect(v.status).toBe('fail');
    expect(v.summary).toContain('intra-node l20-n1 326.40 GB/s, l20-n2 no 1 GiB result');
    expect(v.summary).not.toMatch(/ \?/);
  });

  it('no tool → fail naming the step; a run that timed out fails', () => {
    expect(verdict({ runs: [], skipped: ['no torchrun on l20-n2: apply nccl.bench-tools'] })).toMatchObject({
      status: 'fail',
      fix: 'apply nccl.bench-tools',
    });
    const timedOut = inter(['', '']);
    timedOut.hosts[0] = { ...timedOut.hosts[0]!, timedOut: true, exitCode: null };
    expect(verdict({ runs: [timedOut], skipped: [] }).evidence).toContain('no result within 10 min');
  });
  it('bandwidth thresholds: the fixture table of a finished run is read; below 2 GB/s fails (D20)', () => {
    const t = parseTorchAllreduce(H200_TORCH);
    expect(t).toMatchObject({ op: 'sum', dtype: 'float32', world: 2 });
    expect(t.rows).toHaveLength(10);
    expect(t.rows[0]).toMatchObject({ bytes: 8, timeUs: 31.5, algbwGBps: 0, busbwGBps: 0 });
    expect(peakBusbw(t, 256 * 1024 ** 2)).toMatchObject({ bytes: 1073741824, busbwGBps: 326.4 });
    const slow = `# all_reduce sum float32, world=16\n   268435456   300000.0us algbw     0.89 GB/s busbw     1.68 GB/s\n`;
    const run1: BenchRun = {
      kind: 'inter',
      hosts: [hostRun('l20-n1', slow, 0), hostRun('l20-n2', '', 0)],
      table: { 'l20-n1': parseTorchAllreduce(slow) },
    };
    const v = verdict({ runs: [run1], skipped: [] });
    expect(v).toMatchObject({ status: 'fail' });
    expect(v.evidence).toContain('busbw 1.68 GB/s at 268435456 B');
  });
});

describe('nccl facts', () => {
  it("reads conf blocks, torch versions and tools from the probe scripts' output", () => {
    expect(blocks('==> /etc/nccl.conf 644 <==\nA=1\n\n<== end\n')).toEqual([
      { head: '/etc/nccl.conf 644', body: 'A=1\n' },
    ]);
    expect(ncclVersionOf('(2, 27, 3)')).toBe('2.27.3');
    expect(ncclVersionOf('21903')).toBe('2.19.3');
    const f = collectNccl({
      host: 'l20-n1',
      results: {
        'nccl-conf': run(`==> /etc/nccl.conf 644 <==\n${TUTORIAL_CONF}\n<== end\n`),
        'nccl-env': run('NCCL_DEBUG=WARN\nPATH=/usr/bin\n'),
        'nccl-units': run(''),
        'nccl-version': run('== venv /opt/l20/venv\n2.8.0+cu128\n(2, 27, 3)\n== libnccl2\n'),
        'nccl-tools': run(
          `torchrun /opt/l20/venv/bin/torchrun\ndist vllm==0.11.0\ndist ray==2.49.2\n==> bench <==\n${BENCH_SCRIPT}\n<== end\n`,
        ),
        gdr: run('open-module\nkernel 5.15.0-126-generic\n'),
      },
    });
    expect(f.confFiles).toEqual([{ path: '/etc/nccl.conf', mode: '644', text: TUTORIAL_CONF }]);
    expect(f.envLines).toEqual(['NCCL_DEBUG=WARN', 'PATH=/usr/bin']);
    expect(f.torch).toEqual({ source: 'venv /opt/l20/venv', version: '2.8.0+cu128', nccl: '2.27.3' });
    expect(f.benchScript).toBe(BENCH_SCRIPT);
    expect(f.venvDists).toEqual({ vllm: '0.11.0', ray: '2.49.2' });
    expect(f.gdr).toEqual({ openModule: true, peermem: false, kernel: '5.15.0-126-generic' });
  });
});
