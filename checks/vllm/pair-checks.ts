/**
 * vllm checks across hosts (R41, R47) and the stage's cluster run: health of the API on node 1 and
 * `vllm bench serve` against it (docs/STAGES.md §3.11). The API key is read on the host from
 * /etc/l20/vllm.env inside the script: it never travels in a command line (ours, curl's or the bench's:
 * curl reads the header on stdin, the bench reads OPENAI_API_KEY), a result or evidence. A file still holding
 * the old name L20_API_KEY (before vllm.units renames it) is read as well.
 */
import type { CheckDef, ClusterRunContext, HostFacts } from '../../src/engine/types.js';
import { lintText } from '../../src/lint/index.js';
import { parseVllmBench, type VllmBenchFacts } from '../../src/parse/vllm-bench.js';
import { describeLayout } from './advisor.js';
import { modelName, modelPath } from './catalog.js';
import type { VllmFacts } from './facts.js';
import { decideLayout } from './plan.js';
import { unitStateWord, type Versions } from './shared-facts.js';

export const HEALTH_SCRIPT = `. /etc/l20/vllm.env 2>/dev/null
key=\${VLLM_API_KEY:-\${L20_API_KEY:-}}
echo "### health"; curl -sS -m 5 -o /dev/null -w '%{http_code}\\n' "http://$1:$2/health" 2>&1
echo "### models"
printf 'Authorization: Bearer %s\\n' "$key" | curl -fsS -m 5 -H @- "http://$1:$2/v1/models" 2>&1; echo
`;

/** The workload of §3.11; the previous result of the same layout (the `layout` metadata) is printed first. */
export const BENCH_SCRIPT = `. /etc/l20/vllm.env
key=\${VLLM_API_KEY:-\${L20_API_KEY:-}}
mkdir -p /var/lib/l20-setup/bench
echo "### previous"
for f in $(ls -t /var/lib/l20-setup/bench/*.json 2>/dev/null); do
  if grep -q "\\"layout\\": \\"$5\\"" "$f"; then cat "$f"; echo; break; fi
done
echo "### bench"
OPENAI_API_KEY=$key /opt/l20/venv/bin/vllm bench serve --backend vllm --base-url "http://$1:$2" --model "$3" \\
  --tokenizer "$4" --dataset-name random --random-input-len 512 --random-output-len 1024 --max-concurrency 64 \\
  --num-prompts 640 --seed 0 --save-result --result-dir /var/lib/l20-setup/bench --metadata "layout=$5" 2>&1
`;

export const BENCH = { inputLen: 512, outputLen: 1024, concurrency: 64, prompts: 640 } as const;
/** The tutorial's unverifiable claim (R50), shown beside every measurement. */
export const TUTORIAL_CLAIM =
  'the tutorial claims 1,200 → 2,300 tok/s (+91 %) from 8 to 16 GPUs, with no real model, lengths, concurrency or tool (R50): not comparable';

export interface VllmCluster {
  apiHost?: string;
  apiIp?: string;
  layout?: string;
  health?: { code?: number; models: string[]; evidence: string };
  bench?: { facts: VllmBenchFacts; exitCode: number | null; evidence: string; previousOutputTokS?: number };
  skipped?: string;
}

export async function vllmClusterRun(ctx: ClusterRunContext<VllmFacts>): Promise<VllmCluster> {
  const head = ctx.facts[0];
  if (!head) return { skipped: 'no hosts' };
  const apiIp = head.facts.mgmtAddress;
  const port = String(ctx.config.vllm.port);
  const d = decideLayout(ctx.config, head.facts, ctx.hosts.length);
  const layout = d.layout
    ? describeLayout(d.layout)
        .replace(/ \(.*$/, '')
        .replace(/×/g, 'x')
        .replace(/\s+/g, '')
    : 'unknown';
  if (!apiIp) return { apiHost: head.host, skipped: `${head.host}: management address unknown` };
  if (head.facts.unit.active !== 'active')
    return {
      apiHost: head.host,
      apiIp,
      layout,
      skipped: `l20-vllm.service is ${unitStateWord(head.facts.unit)} on ${head.host}`,
    };
  const h = await ctx.run(
    head.host,
    'vllm.health',
    { script: HEALTH_SCRIPT, args: [apiIp, port] },
    { sudo: true, timeoutMs: 30_000 },
  );
  const parts = new Map<string, string>();
  for (const block of h.stdout.split(/^### /m).slice(1)) {
    const nl = block.indexOf('\n');
    parts.set(block.slice(0, nl).trim(), block.slice(nl + 1).trim());
  }
  const code = Number(parts.get('health')?.split('\n').pop());
  let models: string[];
  try {
    const j = JSON.parse(parts.get('models') ?? '') as { data?: Array<{ id?: string }> };
    models = (j.data ?? []).map((m) => String(m.id));
  } catch {
    models = [];
  }
  const health = {
    ...(Number.isFinite(code) && code > 0 ? { code } : {}),
    models,
    evidence:
      `curl -sS -m 5 http://${apiIp}:${port}/health → ${parts.get('health') ?? h.stderr.trim()}\n` +
      `curl -fsS -m 5 -H @- (Authorization: Bearer $VLLM_API_KEY) http://${apiIp}:${port}/v1/models → ` +
      (parts.get('models') ?? '').slice(0, 400),
  };
  const served = modelName(ctx.config.vllm.model);
  if (code !== 200 || !models.includes(served)) return { apiHost: head.host, apiIp, layout, health };
  const b = await ctx.run(
    head.host,
    'vllm.bench',
    { script: BENCH_SCRIPT, args: [apiIp, port, served, modelPath(ctx.config.vllm.model), layout] },
    { sudo: true, timeoutMs: 60 * 60_000 },
  );
  const [prevText = '', benchText = ''] = b.stdout.split(/^### bench$/m);
  let previousOutputTokS: number | undefined;
  const prev = prevText.replace(/^### previous\n?/m, '').trim();
  if (prev) {
    try {
      const p = JSON.parse(prev) as { output_throughput?: number };
      if (typeof p.output_throughput === 'number') previousOutputTokS = p.output_throughput;
    } catch {
      previousOutputTokS = undefined;
    }
  }
  const facts = parseVllmBench(benchText);
  const tail = benchText.trim().split('\n');
  const block = tail
    .slice(
      Math.max(
        0,
        tail.findIndex((l) => /Serving Benchmark Result/.test(l)),
      ),
    )
    .join('\n');
  return {
    apiHost: head.host,
    apiIp,
    layout,
    health,
    bench: {
      facts,
      exitCode: b.exitCode,
      evidence: `vllm bench serve → exit ${b.exitCode}\n${block || tail.slice(-15).join('\n')}`,
      ...(previousOutputTokS !== undefined ? { previousOutputTokS } : {}),
    },
  };
}

const KEYS: Array<[keyof Versions, string]> = [
  ['python', 'Python'],
  ['ray', 'Ray'],
  ['vllm', 'vLLM'],
  ['vllmCli', 'vllm --version'],
  ['torch', 'torch'],
  ['nccl', 'NCCL (torch)'],
];

/** Version parity (R47) of the cluster venv; shared with the ray stage. */
export function versionParity<F extends { versions: Versions }>(
  all: ReadonlyArray<HostFacts<F>>,
  keys: ReadonlyArray<[keyof Versions, string]> = KEYS,
): { status: 'pass' | 'fail'; summary: string; evidence: string; fix?: string } {
  const line = (h: HostFacts<F>): string =>
    `${h.host}: ${keys.map(([k, n]) => `${n} ${(h.facts.versions[k] as string | undefined) ?? '—'}`).join(', ')}${h.facts.versions.driver ? `, driver ${h.facts.versions.driver}` : ''}`;
  const evidence = all.map(line).join('\n');
  const missing = all.filter((h) => keys.some(([k]) => h.facts.versions[k] === undefined));
  if (missing.length > 0) {
    const why = missing
      .map(
        (h) =>
          `${h.host} (${keys
            .filter(([k]) => h.facts.versions[k] === undefined)
            .map(([, n]) => n)
            .join(', ')})`,
      )
      .join('; ');
    const raw = missing.map((h) => `${h.host}: ${h.facts.versions.raw.python ?? ''}`.trim()).join('\n');
    return {
      status: 'fail',
      summary: `the cluster venv is missing or incomplete on ${why}`,
      evidence: `${evidence}\n${raw}`,
      fix: 'apply nccl.bench-tools: /opt/l20/venv with the pinned vllm and ray[default] on every host (never the system Python)',
    };
  }
  const differ = keys.filter(([k]) => new Set(all.map((h) => h.facts.versions[k])).size > 1).map(([, n]) => n);
  const self = all.filter(
    (h) => h.facts.versions.vllmCli && h.facts.versions.vllm && h.facts.versions.vllmCli !== h.facts.versions.vllm,
  );
  if (differ.length > 0 || self.length > 0) {
    return {
      status: 'fail',
      summary: `versions differ: ${[...differ, ...self.map((h) => `${h.host} vllm CLI ≠ import`)].join(', ')}`,
      evidence,
      fix: 'reinstall /opt/l20/venv with the same pins everywhere (apply nccl.bench-tools)',
    };
  }
  const f = all[0]?.facts.versions;
  return {
    status: 'pass',
    summary: `same on ${all.length} hosts: Python ${f?.python}, vLLM ${f?.vllm}, Ray ${f?.ray}, torch ${f?.torch}, NCCL ${f?.nccl}`,
    evidence,
  };
}

export const versionsCheck: CheckDef<VllmFacts, VllmCluster> = {
  id: 'vllm.versions',
  title: 'Python, Ray, vLLM, torch, NCCL equal on every host',
  scope: 'pair',
  needs: ['versions'],
  evaluate(all) {
    if (all.length < 2)
      return {
        status: 'skip',
        rule: 'R47',
        summary: `one host (${all[0]?.host ?? 'none'}): nothing to compare`,
        evidence: `hosts: ${all.map((h) => h.host).join(', ')}`,
      };
    return { ...versionParity(all), rule: 'R47' };
  },
};

export const modelCheck: CheckDef<VllmFacts, VllmCluster> = {
  id: 'vllm.model',
  title: 'the model is on every host, identical',
  scope: 'pair',
  needs: ['models'],
  evaluate(all, ctx) {
    const id = ctx.config.vllm.model;
    const path = modelPath(id);
    const rows = all.map((h) => ({ host: h.host, dir: h.facts.models.find((m) => m.path === path), facts: h.facts }));
    const sha = (v: string | undefined, what: string) => (v ? `${what} sha256 ${v.slice(0, 16)}…` : `no ${what}`);
    const lines = rows.map((r) =>
      r.dir
        ? `${r.host}: ${path} ${r.dir.du !== undefined ? `du -sb ${r.dir.du} B` : 'du printed no size'}, ` +
          `${sha(r.dir.configSha, 'config.json')}, ${sha(r.dir.indexSha, 'safetensors index')}`
        : `${r.host}: ${path} absent`,
    );
    // A start script that serves another (nonexistent) model is what runs when no unit is installed.
    const bad = rows.flatMap((r) =>
      r.facts.deployed && r.facts.deployed.source !== 'l20-vllm.service'
        ? lintText(r.facts.deployed.text, r.facts.deployed.source)
            .findings.filter((x) => x.rule === 'R41')
            .map((x) => `${r.host}:${r.facts.deployed!.source}: ${x.evidence}`)
        : [],
    );
    const evidence = [...lines, ...bad].join('\n');
    const fix = `apply vllm.model-sync: \`hf download ${id} --local-dir ${path}\` on ${all[0]?.host ?? 'node 1'}, then rsync over the fabric to the others`;
    const missing = rows.filter((r) => !r.dir?.configSha);
    if (missing.length > 0)
      return {
        status: 'fail',
        rule: 'R41',
        summary: `${id} is not at ${path} on ${missing.map((r) => r.host).join(', ')}`,
        evidence,
        fix,
      };
    const diff = (k: 'configSha' | 'indexSha' | 'du'): boolean => new Set(rows.map((r) => r.dir?.[k])).size > 1;
    const differs = (['configSha', 'indexSha', 'du'] as const).filter(diff);
    if (differs.length > 0)
      return {
        status: 'fail',
        rule: 'R41',
        summary: `the copies of ${path} differ (${differs.map((k) => (k === 'du' ? 'size' : k === 'configSha' ? 'config.json' : 'safetensors index')).join(', ')})`,
        evidence,
        fix,
      };
    if (bad.length > 0)
      return {
        status: 'fail',
        rule: 'R41',
        summary: `${rows.find((r) => r.facts.deployed)?.facts.deployed?.source} serves a model that does not exist`,
        evidence,
        fix: 'apply vllm.units (serves the configured model from its local path)',
      };
    const size = rows[0]?.dir?.du !== undefined ? ` (${rows[0].dir.du.toLocaleString('en-US')} B)` : '';
    if (rows.length < 2)
      return {
        status: 'pass',
        rule: 'R41',
        summary: `${path} is on ${rows[0]!.host}${size}; one host: no copy to compare`,
        evidence,
      };
    return { status: 'pass', rule: 'R41', summary: `${path} identical on ${rows.length} hosts${size}`, evidence };
  },
};

export const healthCheck: CheckDef<VllmFacts, VllmCluster> = {
  id: 'vllm.health',
  title: 'the API answers /health and lists the model',
  scope: 'pair',
  // Whether the unit runs decides whether there is an API to ask.
  needs: ['unit'],
  evaluate(_all, ctx) {
    const c = ctx.cluster;
    const served = modelName(ctx.config.vllm.model);
    const why = c?.skipped ?? 'the cluster run did not happen';
    if (!c?.health) return { status: 'fail', summary: `no API to ask: ${why}`, evidence: why, fix: 'apply vllm.units' };
    const ok = c.health.code === 200 && c.health.models.includes(served);
    if (ok)
      return {
        status: 'pass',
        summary: `http://${c.apiIp}:${ctx.config.vllm.port}: /health 200, /v1/models lists ${served}`,
        evidence: c.health.evidence,
      };
    return {
      status: 'fail',
      summary:
        c.health.code === 200
          ? `/v1/models does not list ${served} (${c.health.models.join(', ') || 'none'})`
          : `/health → ${c.health.code ?? 'no answer'}`,
      evidence: c.health.evidence,
      fix: 'check vllm.units (start-up, errors in the journal); apply vllm.units',
    };
  },
};

const n = (x: number | undefined, d = 2): string =>
  x === undefined
    ? 'not reported'
    : x.toLocaleString('en-US', {
        maximumFractionDigits: d,
        minimumFractionDigits: d,
      });

const BENCH_VERSION_NAMES = { vllm: 'vLLM', torch: 'torch', nccl: 'NCCL', driver: 'driver' } as const;

export const benchCheck: CheckDef<VllmFacts, VllmCluster> = {
  id: 'vllm.bench',
  title: `vllm bench serve: ${BENCH.prompts} prompts, ${BENCH.inputLen} in / ${BENCH.outputLen} out, concurrency ${BENCH.concurrency}`,
  scope: 'pair',
  evaluate(all, ctx) {
    const c = ctx.cluster;
    const why = c?.skipped ?? 'the API is not healthy (vllm.health)';
    if (!c?.bench) return { status: 'skip', summary: `not run: ${why}`, evidence: c?.health?.evidence ?? why };
    const b = c.bench.facts;
    const head = all[0]?.facts;
    const d = head ? decideLayout(ctx.config, head, ctx.hosts.length) : undefined;
    const quant = d?.advice?.ok ? 'none (BF16 weights)' : 'not advised (see vllm.layout)';
    const report = [
      `model ${ctx.config.vllm.model} (${modelPath(ctx.config.vllm.model)}), quantization ${quant}, ` +
        `layout ${d?.layout ? describeLayout(d.layout) : 'not decided'}`,
      `workload: random dataset, ${BENCH.inputLen} input / ${BENCH.outputLen} output tokens, max concurrency ${BENCH.concurrency}, ${BENCH.prompts} prompts, seed 0`,
      `requests: ${b.successful !== undefined ? `${b.successful} ok` : 'no count of successful requests'}, ` +
        `${b.failed ?? 0} failed in ${n(b.durationS)} s; ${n(b.requestThroughput)} req/s`,
      `tokens: output ${n(b.outputTokThroughput)} tok/s (peak ${n(b.peakOutputTokThroughput)}), total ${n(b.totalTokThroughput)} tok/s`,
      `TTFT mean ${n(b.meanTtftMs)} / median ${n(b.medianTtftMs)} / P99 ${n(b.p99TtftMs)} ms; TPOT mean ${n(b.meanTpotMs)} / median ${n(b.medianTpotMs)} / P99 ${n(b.p99TpotMs)} ms; ITL mean ${n(b.meanItlMs)} / median ${n(b.medianItlMs)} / P99 ${n(b.p99ItlMs)} ms`,
      ...all.map(
        (h) =>
          `${h.host}: ${(['vllm', 'torch', 'nccl', 'driver'] as const)
            .map((k) => `${BENCH_VERSION_NAMES[k]} ${h.facts.versions[k] ?? 'not read'}`)
            .join(', ')}`,
      ),
      c.bench.previousOutputTokS !== undefined && b.outputTokThroughput !== undefined
        ? `previous run of this layout: ${n(c.bench.previousOutputTokS)} tok/s output (${b.outputTokThroughput >= c.bench.previousOutputTokS ? '+' : ''}${n((100 * (b.outputTokThroughput - c.bench.previousOutputTokS)) / c.bench.previousOutputTokS, 1)} %)`
        : 'previous run of this layout: none (results are kept in /var/lib/l20-setup/bench)',
      TUTORIAL_CLAIM,
    ].join('\n');
    const evidence = `${report}\n${c.bench.evidence}`;
    if (b.successful === undefined)
      return {
        status: 'fail',
        summary: `vllm bench serve printed no result (exit ${c.bench.exitCode})`,
        evidence,
        fix: 'read the output above; check vllm.units and vllm.health',
      };
    if ((b.failed ?? 0) > 0 || b.successful < BENCH.prompts)
      return {
        status: 'fail',
        summary: `${b.failed ?? BENCH.prompts - b.successful} of ${BENCH.prompts} requests failed`,
        evidence,
        fix: 'read `journalctl -u l20-vllm.service` on node 1 for the failed requests',
      };
    return {
      status: 'pass',
      summary: `${b.successful}/${BENCH.prompts} ok: ${n(b.outputTokThroughput, 0)} tok/s output, TTFT median ${n(b.medianTtftMs, 0)} ms, TPOT median ${n(b.medianTpotMs, 1)} ms (${c.layout})`,
      evidence,
    };
  },
};

export const vllmPairChecks = [versionsCheck, modelCheck, healthCheck, benchCheck] as const;
