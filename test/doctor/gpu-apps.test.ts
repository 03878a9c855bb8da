/** vLLM logs and benchmark results, Ray status and start, DCGM diag and discovery. */
import { describe, expect, it } from 'vitest';
import type { DcgmiDiagFacts } from '../../src/parse/dcgmi-diag.js';
import type { DcgmiDiscoveryFacts } from '../../src/parse/dcgmi-discovery.js';
import type { RayStartFacts } from '../../src/parse/ray-start.js';
import type { RayStatusFacts } from '../../src/parse/ray-status.js';
import type { VllmBenchFacts } from '../../src/parse/vllm-bench.js';
import type { VllmLogFacts } from '../../src/parse/vllm-log.js';
import { doctorInput, expectDetected, finding, rules, run } from './gpu-helpers.js';

const detectRun = <F>(kind: string, f: string) => {
  const text = doctorInput(f);
  expectDetected(text, kind);
  return run<F>(kind, text);
};

describe('vllm-log', () => {
  it('TP=2 on one node (mp executor): version, tp, pp, no errors', () => {
    const { facts, findings } = detectRun<VllmLogFacts>(
      'vllm-log',
      'corpus/vllm-serve__1node-tp2-mp-backend-qwen7b-a100-80gb.log.txt',
    );
    expect(facts).toMatchObject({
      version: '0.10.1.1',
      tp: 2,
      pp: 1,
      errors: [],
      executor: 'mp',
      ncclVersion: '2.26.2',
      model: 'Qwen2-7B-Instruct',
      kvCacheTokens: 450192,
      apiUrl: 'http://0.0.0.0:8081',
    });
    expect(findings).toEqual([]);
  });
  it('TP=2 across 2 nodes over Ray, hard-wrapped lines', () => {
    const { facts, findings } = detectRun<VllmLogFacts>(
      'vllm-log',
      'corpus/vllm-serve__2node-ray-tp2-qwen7b-a100-40gb.log.txt',
    );
    expect(facts).toMatchObject({ version: '0.10.1.1', tp: 2, pp: 1, executor: 'ray', workerIps: ['10.254.6.219'] });
    expect(findings).toEqual([]);
  });
  it('TP=4 over 4 Ray pods with ANSI colours; ERROR lines are errors', () => {
    const { facts } = detectRun<VllmLogFacts>(
      'vllm-log',
      'corpus/vllm-serve__4node-ray-tp4-gpt-oss-120b-a100-ansi-colors.log.txt',
    );
    expect(facts).toMatchObject({
      version: '0.10.1.1',
      tp: 4,
      pp: 1,
      model: 'gpt-oss-120b',
      rayAddress: '10.42.11.242:6379',
    });
    expect(facts.workerIps).toHaveLength(3);
    expect(facts.errors[0]).toMatch(/^Error retrieving safetensors: 'gpt-oss-120b' is not a safetensors repo/);
  });
  it('NCCL unhandled system / cuda error in Ray workers → D17 blocker; traceback code is not an error', () => {
    const { facts, findings } = detectRun<VllmLogFacts>(
      'vllm-log',
      'corpus/vllm-error__ray-multinode-nccl-unhandled-system-error-init_device.txt',
    );
    expect(facts.errors).toContain(
      'RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)',
    );
    expect(facts.errors).toContain(
      'RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)',
    );
    expect(facts.errors.some((e) => e.includes('torch.distributed.gather('))).toBe(false);
    expect(rules(findings)).toEqual(['D17']);
    const d17 = finding(findings, 'D17');
    expect(d17).toMatchObject({ severity: 'blocker', line: 6, title: 'NCCL unhandled system/CUDA error during init' });
    expect(d17.fix).toContain('NCCL_DEBUG=INFO');
  });
  it('D16 launch errors; D03 and D01 from NCCL lines inside a vLLM log', () => {
    const prefix = '(APIServer pid=1) INFO 09-03 00:35:55 [api_server.py:1805] vLLM API server version 0.10.1.1\n';
    const ws = run(
      'vllm-log',
      `${prefix}(EngineCore_0 pid=2) ERROR 09-03 00:36:27 [core.py:700] ValueError: World size (16) is larger than the number of available GPUs (8) in this node. If this is intentional and you are using:\n`,
    );
    expect(finding(ws.findings, 'D16')).toMatchObject({ severity: 'blocker', line: 2 });
    const pg = run(
      'vllm-log',
      `${prefix}INFO 09-03 00:36:27 [ray_utils.py:300] Started a local Ray instance.\n${Array.from({ length: 3 }, () => "INFO 09-03 00:36:47 [ray_utils.py:340] Waiting for creating a placement group of specs for 10 seconds. specs=[{'GPU': 1.0, 'node:10.0.0.1': 0.001}]").join('\n')}\n`,
    );
    expect(finding(pg.findings, 'D16').fix).toContain('RAY_ADDRESS');
    const args = run(
      'vllm-log',
      'usage: vllm serve [model_tag] [options]\nvllm serve: error: unrecognized arguments: --engine-use-ray --ray-address auto\n(APIServer pid=1) INFO 09-03 00:35:55 [api_server.py:1] vLLM API server version 0.6.0\n',
    );
    expect(finding(args.findings, 'D16').fix).toContain('R40');
    const nccl = run(
      'vllm-log',
      `${prefix}(RayWorkerWrapper pid=3, ip=10.0.0.2) n2:3:3 [0] NCCL WARN Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"\n`,
    );
    expect(rules(nccl.findings)).toEqual(['D03']);
  });
});

describe('vllm-bench', () => {
  it('benchmark_serving.py result block', () => {
    const { facts, findings } = detectRun<VllmBenchFacts>(
      'vllm-bench',
      'corpus/benchmark_serving__vllm-0.10-qwen7b-2node-a100-40gb.txt',
    );
    expect(facts).toMatchObject({
      successful: 10,
      requestThroughput: 0.21,
      outputTokThroughput: 218.04,
      totalTokThroughput: 436.07,
      meanTtftMs: 2111.51,
      medianTtftMs: 2244.91,
      p99TtftMs: 3346.14,
      meanTpotMs: 43.77,
      numPrompts: 10,
      inputLen: 1024,
      outputLen: 1024,
    });
    expect(facts.failed).toBeUndefined();
    expect(findings).toEqual([]);
  });
  it('vllm bench serve (newer): failed requests, max concurrency, peak throughput', () => {
    const text = [
      '============ Serving Benchmark Result ============',
      'Successful requests:                     1000      ',
      'Failed requests:                         2         ',
      'Maximum request concurrency:             64        ',
      'Benchmark duration (s):                  120.31    ',
      'Request throughput (req/s):              8.31      ',
      'Output token throughput (tok/s):         2127.50   ',
      'Peak output token throughput (tok/s):    3072.00   ',
      'Peak concurrent requests:                64.00     ',
      'Total Token throughput (tok/s):          10637.60  ',
      '---------------Time to First Token----------------',
      'Mean TTFT (ms):                          85.20     ',
      'Median TTFT (ms):                        80.10     ',
      'P99 TTFT (ms):                           210.40    ',
      '==================================================',
    ].join('\r\n');
    expectDetected(text, 'vllm-bench');
    expect(run<VllmBenchFacts>('vllm-bench', text).facts).toMatchObject({
      successful: 1000,
      failed: 2,
      maxConcurrency: 64,
      peakOutputTokThroughput: 3072,
      totalTokThroughput: 10637.6,
      p99TtftMs: 210.4,
    });
  });
});

describe('ray-status / ray-start', () => {
  it('Active / Usage layouts: 2 nodes, 0/16 GPU, no finding', () => {
    for (const f of [
      'corpus/ray-status__2node-16gpu-usage-format-verl-docs.txt',
      'corpus/ray-status__2node-16gpu-with-demands-parser-fixture.txt',
      'corpus/ray-status__total-usage-total-constraints-format-masked.txt',
    ]) {
      const { facts, findings } = detectRun<RayStatusFacts>('ray-status', f);
      expect(facts).toMatchObject({ nodesActive: 2, gpusUsed: 0, gpusTotal: 16, pending: [], failures: [] });
      expect(findings).toEqual([]);
    }
  });
  it('Healthy (2023, -v): per-node Usage blocks are not the cluster counters', () => {
    const { facts } = detectRun<RayStatusFacts>(
      'ray-status',
      'corpus/ray-status-v__2023-healthy-format-verbose-truncated.txt',
    );
    expect(facts).toMatchObject({ nodesActive: 3, cpusUsed: 0, cpusTotal: 6 });
    expect(facts.gpusTotal).toBeUndefined();
    expect(Object.keys(facts.usage)).toEqual(['CPU', 'memory', 'object_store_memory']);
  });
  it('legacy format with Pending and Recent failures → D24 high', () => {
    const { facts, findings } = detectRun<RayStatusFacts>(
      'ray-status',
      'corpus/ray-status__legacy-format-gpu-SYNTHETIC-test-string.txt',
    );
    expect(facts).toMatchObject({ nodesActive: 22, gpusUsed: 2, gpusTotal: 2 });
    expect(facts.failures).toEqual(['p3.2xlarge: RayletUnexpectedlyDied (ip: 1.2.3.6)']);
    expect(finding(findings, 'D24')).toMatchObject({ severity: 'high', line: 11 });
  });
  it('ray start --head: 2022 and 2023 next steps; a worker', () => {
    const old = detectRun<RayStartFacts>(
      'ray-start',
      'corpus/ray-start-head__2022-ray1x-old-next-steps-truncated.txt',
    ).facts;
    expect(old).toMatchObject({ head: true, nodeIp: '127.0.0.1', dashboardUrl: 'http://127.0.0.1:8265' });
    const neu = detectRun<RayStartFacts>('ray-start', 'corpus/ray-start-head__2023-ray2x-new-next-steps.txt').facts;
    expect(neu).toMatchObject({ head: true, nodeIp: '127.0.0.1' });
    const worker = run<RayStartFacts>(
      'ray-start',
      'ray start --address=10.0.0.1:6379 --node-ip-address=10.0.0.2\nLocal node IP: 10.0.0.2\n\n--------------------\nRay runtime started.\n--------------------\n\nTo terminate the Ray runtime, run\n  ray stop\n',
    );
    expect(worker.facts).toMatchObject({ head: false, nodeIp: '10.0.0.2', address: '10.0.0.1:6379' });
  });
});

describe('DCGM', () => {
  it('DCGM 3.1.8 -r 1: Persistence Mode Fail with the wrapped Error text joined → D18 high', () => {
    const { facts, findings } = detectRun<DcgmiDiagFacts>(
      'dcgmi-diag',
      'corpus/dcgmi-diag-r1__8x-h200-dcgm-3.1.8-persistence-fail.txt',
    );
    expect(facts).toMatchObject({ dcgmVersion: '3.1.8', driverVersion: '550.127.08' });
    expect(facts.deviceIds).toHaveLength(8);
    expect(facts.results.map((r) => [r.test, r.result])).toEqual([
      ['Denylist', 'Pass'],
      ['NVML Library', 'Pass'],
      ['CUDA Main Library', 'Pass'],
      ['Permissions and OS Blocks', 'Pass'],
      ['Persistence Mode', 'Fail'],
      ['Environment Variables', 'Pass'],
      ['Page Retirement/Row Remap', 'Pass'],
      ['Graphics Processes', 'Pass'],
      ['Inforom', 'Pass'],
    ]);
    expect(facts.results[4]?.message).toMatch(
      /^Persistence mode for GPU 0 is currently disabled\. The DCGM diagnostic requires peristence mode to be enabled\. Enable persistence mode by running "nvidia-smi -i <gpuId> -pm 1 " as root\., Persistence mode for GPU 1 is currently disabled\./,
    );
    const d18 = finding(findings, 'D18');
    expect(d18).toMatchObject({ severity: 'high', line: 15 });
    expect(d18.fix).toContain('nvidia-smi -pm 1');
  });
  it('DCGM 3.3.9 all Skip (pasted twice): no finding, rows not doubled', () => {
    const { facts, findings } = detectRun<DcgmiDiagFacts>(
      'dcgmi-diag',
      'corpus/dcgmi-diag-r3__2x-rtx-pro-6000-dcgm-3.3.9-570-all-skip.txt',
    );
    expect(facts.results).toHaveLength(15);
    expect(facts.results.find((r) => r.test === 'Targeted Stress')).toMatchObject({
      result: 'Skip',
      raw: 'Skip - All',
      section: 'Stress',
    });
    expect(findings).toEqual([]);
  });
  it('DCGM 4.0 per-GPU rows; a GPUn: Fail sub-row fires D18', () => {
    const { facts, findings } = detectRun<DcgmiDiagFacts>(
      'dcgmi-diag',
      'corpus/dcgmi-diag-r3__dcgm-4.0-per-gpu-format-nvidia-docs.txt',
    );
    expect(facts.dcgmVersion).toBe('4.0.0');
    expect(facts.results.map((r) => r.test)).toEqual([
      'software',
      'memory',
      'diagnostic',
      'pcie',
      'memory_bandwidth',
      'targeted_stress',
      'targeted_power',
    ]);
    expect(facts.results[3]?.gpus).toHaveLength(4);
    expect(findings).toEqual([]);
    const lines = doctorInput('corpus/dcgmi-diag-r3__dcgm-4.0-per-gpu-format-nvidia-docs.txt').split('\n');
    const pcie = lines.findIndex((l) => l.startsWith('| pcie '));
    lines[pcie + 2] = (lines[pcie + 2] ?? '').replace('GPU1: Pass', 'GPU1: Fail');
    const bad = run('dcgmi-diag', lines.join('\n'));
    expect(finding(bad.findings, 'D18').evidence).toContain('pcie: Pass (GPU1)');
  });
  it('dcgmi discovery -l: 8 × H800; <<<NULL>>> names kept', () => {
    const h800 = detectRun<DcgmiDiscoveryFacts>('dcgmi-discovery', 'corpus/dcgmi-discovery-l__8x-h800.txt').facts;
    expect(h800).toMatchObject({ gpusFound: 8, nvSwitchesFound: 0 });
    expect(h800.gpus[7]).toEqual({
      id: 7,
      name: 'NVIDIA H800',
      busId: '00000000:E2:00.0',
      uuid: 'GPU-474d838c-171f-d249-4f45-bbc01a8eb74a',
    });
    const nul = detectRun<DcgmiDiscoveryFacts>(
      'dcgmi-discovery',
      'corpus/dcgmi-discovery-l__4x-h100-name-null-trailing-spaces.txt',
    ).facts;
    expect(nul.gpusFound).toBe(4);
    expect(nul.gpus[0]).toEqual({
      id: 0,
      name: '<<<NULL>>>',
      busId: '00000000:4C:00.0',
      uuid: 'GPU-d6a2c177-4cd8-8d01-0310-79f2720f37de',
    });
  });
});

describe('format variants seen in other releases', () => {
  it('Ray placement-group GPU counters; DCGM 4 Error sub-rows; Windows driver model column', () => {
    const ray = run<RayStatusFacts>(
      'ray-status',
      '======== Autoscaler status: 2025-01-01 00:00:00 ========\nNode status\n-----\nActive:\n 1 node_a\nIdle:\n 1 node_b\nPending:\n (no pending nodes)\nRecent failures:\n (no failures)\n\nResources\n-----\nUsage:\n 8.0/256.0 CPU\n 8.0/16.0 GPU (8.0 used of 8.0 reserved in placement groups)\n',
    );
    expect(ray.facts).toMatchObject({ nodesActive: 1, nodesIdle: 1, gpusUsed: 8, gpusTotal: 16 });
    const dcgm = run<DcgmiDiagFacts>(
      'dcgmi-diag',
      '| Diagnostic | Result |\n|-----  Hardware  ----------+------------------------------------------------|\n| memory                    | Fail                                           |\n|                           | GPU0: Fail                                     |\n|                           | Error: GPU 0 had an uncorrectable memory err   |\n|                           | or and is excluded.                            |\n',
    );
    expect(dcgm.facts.results[0]).toMatchObject({
      test: 'memory',
      result: 'Fail',
      gpus: [{ gpu: 0, result: 'Fail' }],
      message: 'GPU 0 had an uncorrectable memory error and is excluded.',
    });
    expect(finding(dcgm.findings, 'D18').fix).toContain('hardware');
    const win = run<{ gpus: Array<{ name?: string }> }>(
      'nvidia-smi',
      '| NVIDIA-SMI 546.12                 Driver Version: 546.12       CUDA Version: 12.3     |\n|   0  NVIDIA GeForce RTX 3090      WDDM  |   00000000:01:00.0  On |                  N/A |\n|  0%   45C    P8              25W / 350W |   1200MiB / 24576MiB |      3%      Default |\n',
    );
    expect(win.facts.gpus[0]?.name).toBe('NVIDIA GeForce RTX 3090');
  });
});
