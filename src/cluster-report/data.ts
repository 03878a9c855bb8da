/**
 * What `l20-setup report` shows, gathered once and rendered as Markdown or HTML: every stage's checks
 * run with their benchmarks (each stage's cluster run is captured as it returns, so the measured
 * numbers come from the run itself, not from re-reading verdict text), the hosts' configurations
 * side by side, and the performance next to the tutorial's claims. Evidence and configuration pass
 * through the bundle's redaction, since reports get pasted into tickets as readily as bundles.
 */
import { Engine, type StageOutcome } from '../engine/runner.js';
import {
  worstStatus,
  type CheckResult,
  type CheckStatus,
  type StageDef,
  type StageId,
  type AnyStageDef,
} from '../engine/types.js';
import type { ClusterConfig } from '../config/schema.js';
import type { Host } from '../transport/types.js';
import { STAGES, STAGE_TITLES } from '../../checks/stages.js';
import { packageVersion } from '../util/version.js';
import { collectHost, type HostCollection } from '../bundle/collect.js';
import { Redactor } from '../bundle/redact.js';
import { parseVersionsText, VERSION_ROWS } from '../bundle/versions.js';
import type { RdmaLinkCluster } from '../../checks/rdma-link/cluster.js';
import type { NcclCluster } from '../../checks/nccl/validation.js';
import type { VllmCluster } from '../../checks/vllm/pair-checks.js';
import { section, type ConfigSection } from './side-by-side.js';
import { ncclRows, rdmaRows, vllmRows, type PerfRow } from './perf.js';

export interface StageReport {
  id: StageId;
  title: string;
  status: CheckStatus;
  checks: CheckResult[];
}

export interface ReportData {
  runId: string;
  created: string;
  toolVersion: string;
  source: string;
  hosts: Array<{ name: string; address: string; role: string }>;
  verdict: CheckStatus;
  counts: Record<CheckStatus, number>;
  stages: StageReport[];
  /** Node 1 against node 2 (the first two hosts); empty with one host. */
  configs: ConfigSection[];
  perf: PerfRow[];
  /** What the redaction removed, as counts. */
  redaction: string;
}

export interface GatherOptions {
  config: ClusterConfig;
  hosts: readonly Host[];
  source: string;
  runId: string;
  stages?: ReadonlyArray<AnyStageDef>;
  signal?: AbortSignal;
  now?: Date;
  progress?: (line: string) => void;
}

/** The stage with its cluster run recorded into `into` as it returns. */
function capturing<F, C>(stage: StageDef<F, C>, into: Map<StageId, unknown>): StageDef<F, C> {
  if (!stage.cluster) return stage;
  const run = stage.cluster.bind(stage);
  return {
    ...stage,
    async cluster(ctx) {
      const c = await run(ctx);
      into.set(stage.id, c);
      return c;
    },
  };
}

function outputOf(c: HostCollection | undefined, file: string): string | undefined {
  return c?.files.find((f) => f.file === file)?.output;
}

function versionsText(c: HostCollection | undefined): string {
  const raw = outputOf(c, 'versions.txt');
  if (raw === undefined) return '';
  const v = parseVersionsText(raw);
  return VERSION_ROWS.map(([k, label]) => `${label}: ${v[k] ?? '—'}`).join('\n');
}

/** The configurations compared: versions, nccl.conf, netplan, then QoS port by port (ports paired in discovery order). */
export function configSections(a: HostCollection, b: HostCollection): ConfigSection[] {
  const out: ConfigSection[] = [
    section('driver, OFED and software versions', a.host, b.host, versionsText(a), versionsText(b)),
    section(
      'NCCL configuration (nccl.conf)',
      a.host,
      b.host,
      outputOf(a, 'nccl-conf.txt') ?? '',
      outputOf(b, 'nccl-conf.txt') ?? '',
    ),
    section('netplan', a.host, b.host, outputOf(a, 'netplan.txt') ?? '', outputOf(b, 'netplan.txt') ?? ''),
  ];
  const qosFile = (c: HostCollection, port: string) =>
    c.files.find((f) => f.file === `mlnx_qos-${port}.txt` || f.file === `dcb-${port}.txt`);
  const n = Math.max(a.ports.length, b.ports.length);
  for (let i = 0; i < n; i++) {
    const pa = a.ports[i];
    const pb = b.ports[i];
    const fa = pa ? qosFile(a, pa) : undefined;
    const fb = pb ? qosFile(b, pb) : undefined;
    const tool = (fa ?? fb)?.file.startsWith('mlnx_qos') ? 'mlnx_qos -i' : 'dcb';
    out.push(
      section(
        `QoS, fabric port ${i + 1}`,
        `${a.host}: ${tool} ${pa ?? '(none)'}`,
        `${b.host}: ${tool} ${pb ?? '(none)'}`,
        fa?.output ?? '',
        fb?.output ?? '',
      ),
    );
  }
  return out;
}

/**
 * A stage's state for the report: the worst of its checks that ran. A check skipped because it does
 * not apply (no bond in design A) must not turn a passing stage grey; all skipped stays skip.
 */
export function stageStatus(results: readonly CheckResult[]): CheckStatus {
  const ran = results.filter((r) => r.status !== 'skip');
  return ran.length > 0 ? worstStatus(ran.map((r) => r.status)) : 'skip';
}

export async function gatherReport(o: GatherOptions): Promise<ReportData> {
  const now = o.now ?? new Date();
  const stages = o.stages ?? STAGES;
  const say = o.progress ?? (() => undefined);
  const clusters = new Map<StageId, unknown>();
  const engine = new Engine(o.hosts, { config: o.config, runId: o.runId });
  const stop = () => engine.cancelAll();
  o.signal?.addEventListener('abort', stop, { once: true });
  const withCluster = new Set(stages.filter((s) => s.cluster).map((s) => s.id));
  const unsubscribe = engine.subscribe((e) => {
    if (e.type === 'stage.state' && e.state === 'running')
      say(`stage ${e.stage}${withCluster.has(e.stage) ? ' (with its cluster run)' : ''}`);
  });
  let outcomes: StageOutcome[];
  try {
    // One pass: each host is read once (Engine.runStages).
    outcomes = await engine.runStages(stages.map((s) => capturing(s, clusters)));
  } finally {
    unsubscribe();
    o.signal?.removeEventListener('abort', stop);
  }
  say("reading the hosts' configuration");
  const collections = await Promise.all(
    o.hosts.map((h) =>
      collectHost(h, { deltaSeconds: 0, configOnly: true, ...(o.signal ? { signal: o.signal } : {}) }),
    ),
  );

  const redactor = new Redactor();
  const all = outcomes.flatMap((x) => x.results);
  for (const r of all) redactor.learn(`${r.summary}\n${r.evidence}\n${r.fix ?? ''}`);
  for (const c of collections) for (const f of c.files) redactor.learn(f.output);
  const clean = (r: CheckResult): CheckResult => ({
    ...r,
    summary: redactor.redact(r.summary),
    evidence: redactor.redact(r.evidence),
    ...(r.fix !== undefined ? { fix: redactor.redact(r.fix) } : {}),
  });
  const cleanCollections = collections.map((c) => ({
    ...c,
    files: c.files.map((f) => ({ ...f, output: redactor.redact(f.output) })),
  }));

  const stageReports: StageReport[] = outcomes.map((x) => ({
    id: x.stage,
    title: STAGE_TITLES[x.stage],
    status: stageStatus(x.results),
    checks: x.results.map(clean),
  }));
  const counts: Record<CheckStatus, number> = { pass: 0, warn: 0, fail: 0, error: 0, skip: 0 };
  for (const r of all) counts[r.status]++;
  const perf = [
    ...rdmaRows(clusters.get('rdma-link') as RdmaLinkCluster | undefined),
    ...ncclRows(clusters.get('nccl') as NcclCluster | undefined),
    ...vllmRows(clusters.get('vllm') as VllmCluster | undefined),
  ].map((p) => ({ ...p, measured: redactor.redact(p.measured) }));
  return {
    runId: o.runId,
    created: now.toISOString(),
    toolVersion: packageVersion(),
    source: o.source,
    hosts: o.config.hosts.map((h, i) => ({ name: h.name, address: o.hosts[i]?.address ?? h.address, role: h.role })),
    verdict: stageStatus(all),
    counts,
    stages: stageReports,
    configs: cleanCollections.length >= 2 ? configSections(cleanCollections[0]!, cleanCollections[1]!) : [],
    perf,
    redaction: redactor.describe(),
  };
}
