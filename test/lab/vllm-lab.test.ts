/**
 * The vllm stage against the lab over real SSH: `ready` passes, a second apply changes nothing, the
 * model is re-fetched and copied over the fabric when it is gone, the lab's vLLM output reads with the
 * corpus parsers, and `vllm bench serve` is plausible and the same for the same seed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rayStage } from '../../checks/ray/index.js';
import { vllmStage } from '../../checks/vllm/index.js';
import { BENCH_SCRIPT } from '../../checks/vllm/pair-checks.js';
import { Engine } from '../../src/engine/runner.js';
import type { CheckResult, AnyStageDef } from '../../src/engine/types.js';
import { parseVllmBench } from '../../src/parse/vllm-bench.js';
import { parseVllmLog } from '../../src/parse/vllm-log.js';
import type { Host } from '../../src/transport/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, runScript, withLabTarget, type TextResult } from './helpers.js';

const show = (rs: readonly CheckResult[]): string[] =>
  rs.map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status} ${r.summary}`);

const sh = (h: Host, script: string, sudo = false): Promise<TextResult> =>
  runScript(h, script, { sudo, timeoutMs: 60_000 });

describe('vllm on the ready lab', () => {
  let t: LabTarget;
  let engine: Engine;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    engine = new Engine(t.hosts, { config: t.config });
  });
  afterAll(() => t.close());

  it('passes every vllm check; ray is skipped because the 8B model runs data parallel', async () => {
    const v = await engine.runStage(vllmStage);
    expect(show(v.results.filter((r) => r.status !== 'pass'))).toEqual([]);
    expect(v.results).toHaveLength(4 * 2 + 4);
    const r = await engine.runStage(rayStage);
    expect(r.results.every((x) => x.status === 'skip' && x.summary.includes('Ray unused: the layout is DP 16'))).toBe(
      true,
    );
    const bench = v.results.find((x) => x.id === 'vllm.bench')!;
    expect(bench.evidence).toContain('layout DP 16 (TP 1, 8 engines per node)');
    expect(bench.evidence).not.toMatch(/(?:L20|VLLM)_API_KEY=\w|Bearer [0-9a-f]{16}/);
  });

  it('a second apply of both stages changes nothing', async () => {
    for (const stage of [rayStage, vllmStage] as Array<AnyStageDef>) {
      const o = await applier(engine).applyStage(stage);
      expect(o.changed, stage.id).toBe(0);
    }
  });

  it('prints logs the corpus parsers read: the API server on node 1, headless engines on node 2', async () => {
    const [n1, n2] = t.hosts;
    const log1 = parseVllmLog((await sh(n1!, 'journalctl -u l20-vllm.service -o cat --no-pager', true)).out);
    expect(log1).toMatchObject({
      version: '0.11.0',
      tp: 1,
      pp: 1,
      dp: 16,
      startedApiServer: true,
      apiUrl: 'http://10.0.0.1:8000',
      errors: [],
    });
    expect(log1.kvCacheTokens).toBeGreaterThan(400_000);
    const j2 = (await sh(n2!, 'journalctl -u l20-vllm.service -o cat --no-pager', true)).out;
    expect(j2).toContain(
      'Launching 8 data parallel engine(s) in headless mode, with head node address tcp://192.168.101.1:13345.',
    );
    expect(j2).toMatch(/\(EngineCore_DP15 pid=\d+\) INFO .* GPU KV cache size: [\d,]+ tokens/);
    expect(parseVllmLog(j2).errors).toEqual([]);
    // The API key never reaches the journal.
    const key = (await sh(n1!, 'cut -d= -f2 /etc/l20/vllm.env', true)).out.trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect((await sh(n1!, 'journalctl -u l20-vllm.service -o cat --no-pager', true)).out).not.toContain(key);
  });

  it("vllm serve rejects the tutorial's removed flags and its nonexistent model as vLLM does", async () => {
    const h = t.hosts[0]!;
    const flags = await sh(
      h,
      '/opt/l20/venv/bin/vllm serve /opt/l20/models/Qwen2.5-7B-Instruct --tensor-parallel-size 16 --engine-use-ray --ray-address auto',
    );
    expect(flags.code).toBe(2);
    expect(flags.out).toMatch(/^INFO \d\d-\d\d [\d:]+ \[__init__\.py:216\] Automatically detected platform cuda\.\n$/);
    expect(flags.err).toBe(
      'usage: vllm serve [model_tag] [options]\nvllm serve: error: unrecognized arguments: --engine-use-ray --ray-address auto\n',
    );
    const model = await sh(h, '/opt/l20/venv/bin/vllm serve deepseek-ai/deepseek-v3-8b --port 8001');
    expect(model.code).toBe(1);
    expect(model.err).toContain(
      "ValueError: Invalid repository ID or local directory specified: 'deepseek-ai/deepseek-v3-8b'.",
    );
    const heads = await sh(h, '/opt/l20/venv/bin/vllm serve /opt/l20/models/Qwen2.5-7B-Instruct --port 8001 -tp 8');
    expect(heads.err).toContain(
      'ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).',
    );
    // The GPUs are taken by the running engines.
    const busy = await sh(h, '/opt/l20/venv/bin/vllm serve /opt/l20/models/Qwen2.5-7B-Instruct --port 8001');
    expect(busy.err).toMatch(
      /Free memory on device \([\d.]+\/44\.99 GiB\) on startup is less than desired GPU memory utilization \(0\.9, 40\.49 GiB\)/,
    );
    expect((await sh(h, '/opt/l20/venv/bin/vllm --version')).out).toBe('0.11.0\n');
  });

  it("the API wants its key on /v1 and serves /health and /metrics without it; node 2's firewall drops the port", async () => {
    const h = t.hosts[0]!;
    const r = await sh(
      h,
      'curl -sS -o /dev/null -w "%{http_code}\\n" http://10.0.0.1:8000/health; curl -sS -w "\\n%{http_code}\\n" http://10.0.0.1:8000/v1/models; curl -fsS http://10.0.0.1:8000/v1/models; echo "exit $?"; curl -sS http://10.0.0.1:8000/metrics | grep -c "^vllm:"; curl -sS -m 2 http://10.0.0.2:8000/health',
    );
    // /metrics: 16 engines (DP 16) × (6 gauges/counters + the TTFT histogram's 23 buckets, _count, _sum).
    expect(r.out).toBe('200\n{"error":"Unauthorized"}\n401\nexit 22\n496\n');
    expect(r.err).toBe(
      'curl: (22) The requested URL returned error: 401\ncurl: (28) Connection timed out after 2001 milliseconds\n',
    );
  });

  it('hf download refuses what the Hub would: an id that does not exist, a gated model without a token', async () => {
    const h = t.hosts[0]!;
    const missing = await sh(h, '/opt/l20/venv/bin/hf download deepseek-ai/deepseek-v3-8b --local-dir /tmp/m');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain(
      'Repository Not Found for url: https://huggingface.co/api/models/deepseek-ai/deepseek-v3-8b/revision/main.',
    );
    const gated = await sh(h, '/opt/l20/venv/bin/hf download meta-llama/Llama-3.1-8B-Instruct --local-dir /tmp/m');
    expect(gated.err).toContain('Access to model meta-llama/Llama-3.1-8B-Instruct is restricted.');
  });

  it('fetches the model again on node 1 and copies it to node 2 over the fabric with the cluster key', async () => {
    for (const h of t.hosts) expect((await sh(h, 'rm -rf /opt/l20/models', true)).code).toBe(0);
    const before = await engine.runStage(vllmStage);
    expect(before.results.find((r) => r.id === 'vllm.model')).toMatchObject({ status: 'fail', rule: 'R41' });
    const o = await applier(engine).applyStage(vllmStage);
    const sync = (o.steps ?? []).filter((s) => s.id === 'vllm.model-sync');
    expect(sync.map((s) => [s.host, s.status, s.changed])).toEqual([
      ['l20-n1', 'applied', true],
      ['l20-n2', 'applied', true],
    ]);
    expect(sync[1]!.commands.join('\n')).toContain(
      "rsync -a --delete --info=progress2 -e 'ssh -i ~/.ssh/l20_cluster -o BatchMode=yes -o StrictHostKeyChecking=accept-new' /opt/l20/models/Qwen2.5-7B-Instruct/ 192.168.101.2:/opt/l20/models/Qwen2.5-7B-Instruct/",
    );
    expect(show(o.results.filter((r) => r.status !== 'pass'))).toEqual([]);
    const [n1, n2] = t.hosts;
    const du = async (h: Host): Promise<string> =>
      (await sh(h, 'du -sb /opt/l20/models/Qwen2.5-7B-Instruct | cut -f1')).out;
    expect(await du(n1!)).toBe(await du(n2!));
    expect(Number(await du(n1!))).toBeGreaterThan(15_231_233_024);
    expect((await sh(n2!, 'cat ~/.ssh/authorized_keys')).out).toMatch(
      /^from="192\.168\.101\.1" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI\S+ l20-cluster@l20-n1\n$/m,
    );
    const again = await applier(engine).applyStage(vllmStage);
    expect(again.changed).toBe(0);
    // A damaged copy (a shard gone, a stray file) differs in size; the sync makes it exact again.
    await sh(
      n2!,
      'rm /opt/l20/models/Qwen2.5-7B-Instruct/model-00004-of-00004.safetensors && echo x > /opt/l20/models/Qwen2.5-7B-Instruct/stray',
    );
    const damaged = await engine.runStage(vllmStage);
    expect(damaged.results.find((r) => r.id === 'vllm.model')).toMatchObject({
      status: 'fail',
      summary: 'the copies of /opt/l20/models/Qwen2.5-7B-Instruct differ (size)',
    });
    const fixed = await applier(engine).applyStage(vllmStage);
    expect((fixed.steps ?? []).filter((s) => s.status === 'applied').map((s) => [s.id, s.host, s.changed])).toEqual([
      ['vllm.model-sync', 'l20-n1', false],
      ['vllm.model-sync', 'l20-n2', true],
    ]);
    expect(fixed.results.find((r) => r.id === 'vllm.model')?.status).toBe('pass');
    expect((await sh(n2!, 'ls /opt/l20/models/Qwen2.5-7B-Instruct/stray 2>&1')).code).toBe(2);
  });
});

describe('vllm bench serve', () => {
  const benchOnce = (seed: number): Promise<string> =>
    withLabTarget({ scenario: 'ready', seed }, async (t) => {
      const r = await t.hosts[0]!.run(
        {
          script: BENCH_SCRIPT,
          args: ['10.0.0.1', '8000', 'Qwen2.5-7B-Instruct', '/opt/l20/models/Qwen2.5-7B-Instruct', 'DP16'],
        },
        { sudo: true, timeoutMs: 60_000 },
      );
      expect(r.exitCode).toBe(0);
      const saved = await t.hosts[0]!.run(
        { script: 'ls /var/lib/l20-setup/bench/ && cat /var/lib/l20-setup/bench/*.json' },
        { sudo: true },
      );
      expect(saved.stdout).toMatch(
        /^vllm-infqps-concurrency64-Qwen2\.5-7B-Instruct-\d{8}-\d{6}\.json\n\{"date": "\d{8}-\d{6}", .*"layout": "DP16"\}$/,
      );
      return r.stdout.slice(r.stdout.indexOf('============ Serving Benchmark Result'));
    });

  it('prints a plausible result block, the same for the same seed', async () => {
    const a = await benchOnce(7);
    const b = await benchOnce(7);
    expect(a).toBe(b);
    const f = parseVllmBench(a);
    expect(f).toMatchObject({ successful: 640, failed: 0, maxConcurrency: 64, totalGeneratedTokens: 655_360 });
    expect(f.totalInputTokens).toBeGreaterThan(640 * 500);
    // 16 engines of batch 4 on L20s: memory-bound decode of 15 GB per step ≈ 20 ms.
    expect(f.medianTpotMs).toBeGreaterThan(15);
    expect(f.medianTpotMs).toBeLessThan(30);
    expect(f.outputTokThroughput).toBeGreaterThan(2_000);
    expect(f.outputTokThroughput).toBeLessThan(5_000);
    expect(f.p99TtftMs).toBeGreaterThan(f.medianTtftMs!);
    expect(a).toMatch(/^Successful requests: {21}640 {7}$/m);
    expect(a).toMatch(/^Peak concurrent requests: {16}64\.00 {5}$/m);
  }, 60_000);
});
