/**
 * The evidence bundle (`l20-setup bundle`): every host's outputs and configuration, the tool's own
 * read-only check results, and SUMMARY.md on top, in one .tar.gz. Nothing is written before it has
 * been redacted, and the finished archive is read back and scanned for every secret the redactor
 * learned before it is kept.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Engine, type StageOutcome } from '../engine/runner.js';
import type { CheckResult, AnyStageDef } from '../engine/types.js';
import type { ClusterConfig } from '../config/schema.js';
import type { Host } from '../transport/types.js';
import { jsonReport } from '../engine/run-output.js';
import { STAGES } from '../../checks/stages.js';
import { FACT_PAIR_CHECKS } from '../../checks/troubleshoot/symptoms.js';
import { packageVersion } from '../util/version.js';
import { heldSecretForms } from '../util/secrets.js';
import { collectHost, type HostCollection } from './collect.js';
import { Redactor, unredactedLabels } from './redact.js';
import { renderSummary } from './summary.js';
import { tarGz, untar, type TarEntry } from './tar.js';
import { parseVersionsText, type HostVersions } from './versions.js';

/** Stages whose cluster run is a benchmark (ib_write_bw, the all-reduce, vllm bench serve): left out here. */
export const BENCHMARK_STAGES = new Set(['rdma-link', 'nccl', 'vllm']);

export interface BundleOptions {
  config: ClusterConfig;
  hosts: readonly Host[];
  source: string;
  runId: string;
  /** Seconds between the two ethtool -S snapshots. */
  deltaSeconds?: number;
  /** Secrets known up front (a sudo password): redacted wherever they appear. */
  knownSecrets?: readonly string[];
  stages?: ReadonlyArray<AnyStageDef>;
  signal?: AbortSignal;
  now?: Date;
  /** Progress lines for the terminal (never secret: names and counts only). */
  progress?: (line: string) => void;
}

export interface Bundle {
  archive: Buffer;
  /** Member paths in archive order (SUMMARY.md first). */
  members: string[];
  summary: string;
  checks: CheckResult[];
  outcomes: StageOutcome[];
  versions: Map<string, HostVersions>;
  redactor: Redactor;
  collections: HostCollection[];
}

/**
 * Runs every stage's read-only checks. The benchmark stages' cluster runs are left out; their pair
 * checks that compare only the hosts' facts (GIDs, active MTU, versions) still run.
 */
export function readOnlyChecks(engine: Engine, stages: ReadonlyArray<AnyStageDef>): Promise<StageOutcome[]> {
  // One pass: each host is read once (Engine.runStages).
  return engine.runStages(stages, (s) =>
    BENCHMARK_STAGES.has(s.id) ? { skipCluster: true, pairChecksWithoutCluster: FACT_PAIR_CHECKS } : {},
  );
}

export async function buildBundle(o: BundleOptions): Promise<Bundle> {
  const now = o.now ?? new Date();
  const stages = o.stages ?? STAGES;
  const say = o.progress ?? (() => undefined);
  const engine = new Engine(o.hosts, { config: o.config, runId: o.runId });
  const stop = () => engine.cancelAll();
  o.signal?.addEventListener('abort', stop, { once: true });
  say(`running the read-only checks of ${stages.length} stages on ${o.hosts.length} hosts`);
  const outcomes = await readOnlyChecks(engine, stages);
  o.signal?.removeEventListener('abort', stop);
  const checks = outcomes.flatMap((x) => x.results);
  say(`collecting outputs from ${o.hosts.map((h) => h.name).join(', ')}`);
  const collections = await Promise.all(
    o.hosts.map((h, i) =>
      collectHost(h, {
        deltaSeconds: o.deltaSeconds ?? 3,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.config.hosts[i]?.fabricPorts ? { fabricPorts: o.config.hosts[i]!.fabricPorts! } : {}),
      }),
    ),
  );
  const versions = new Map<string, HostVersions>();
  for (const c of collections) {
    const v = c.files.find((f) => f.file === 'versions.txt');
    versions.set(c.host, v ? parseVersionsText(v.text) : {});
  }

  const hostsInfo = o.config.hosts.map((h, i) => ({
    name: h.name,
    address: o.hosts[i]?.address ?? h.address,
    role: h.role,
  }));
  const report = jsonReport(hostsInfo, outcomes);
  const raw: Array<{ path: string; what: string; text: string }> = [];
  for (const c of collections) {
    if (c.error) raw.push({ path: `${c.host}/ERROR.txt`, what: `why ${c.host} is incomplete`, text: `${c.error}\n` });
    for (const f of c.files) raw.push({ path: `${c.host}/${f.file}`, what: f.what, text: f.text });
  }

  // Learn every secret from every file first, so each file is redacted with all of them.
  const redactor = new Redactor(o.knownSecrets ?? []);
  redactor.learnJson(report);
  for (const r of raw) redactor.learn(r.text);
  // checks.json is redacted string by string (a value is read as the evidence holds it, not JSON-escaped).
  const checksJson = `${JSON.stringify(redactor.redactJson(report), null, 2)}\n`;
  const clean = [
    {
      path: 'checks.json',
      what:
        'every read-only check of every stage: status, evidence, fix, rule ' +
        '(version-1 JSON report of `l20-setup check --json`)',
      text: checksJson,
    },
    ...raw.map((r) => ({ ...r, text: redactor.redact(r.text) })),
  ];
  const summaryRaw = renderSummary({
    runId: o.runId,
    created: now.toISOString(),
    toolVersion: packageVersion(),
    source: o.source,
    hosts: hostsInfo.map((h) => {
      const err = collections.find((c) => c.host === h.name)?.error;
      return { ...h, ...(err ? { error: err } : {}) };
    }),
    versions,
    checks,
    benchmarksSkipped: stages.filter((s) => BENCHMARK_STAGES.has(s.id)).map((s) => s.id),
    redaction: redactor.describe(),
    files: [{ path: 'SUMMARY.md', what: 'this file' }, ...clean.map((c) => ({ path: c.path, what: c.what }))],
  });
  const summary = redactor.redact(summaryRaw);

  const dirs = [...new Set(collections.map((c) => `${c.host}/`))];
  const entries: TarEntry[] = [
    { name: 'SUMMARY.md', content: summary },
    ...clean.filter((c) => !c.path.includes('/')).map((c) => ({ name: c.path, content: c.text })),
    ...dirs.flatMap((d) => [
      { name: d },
      ...clean.filter((c) => c.path.startsWith(d)).map((c) => ({ name: c.path, content: c.text })),
    ]),
  ];
  const archive = tarGz(entries, now.getTime());
  assertNoSecret(archive, [...redactor.known, ...(o.knownSecrets ?? [])]);
  return { archive, members: entries.map((e) => e.name), summary, checks, outcomes, versions, redactor, collections };
}

/**
 * Reads the archive back and refuses it if a redaction bug let anything through: a secret given or learned,
 * one the process holds (the sudo password, in every form a host may echo it in), searched literally; or a
 * labelled value (`PASSWORD=…`, `"api_key": …`) that is still not a redaction mark, whole or in part.
 */
export function assertNoSecret(archive: Buffer, secrets: readonly string[]): void {
  const members = untar(gunzipSync(archive));
  const literals = [...new Set([...secrets, ...heldSecretForms()])].filter((s) => s !== '');
  for (const m of members) {
    if (m.dir) continue;
    const text = m.content.toString('utf8');
    for (const s of literals) {
      if (text.includes(s)) throw new Error(`refusing to write the bundle: a secret survived redaction in ${m.name}`);
    }
    const left = m.name.endsWith('.json')
      ? jsonStrings(JSON.parse(text)).flatMap(unredactedLabels)
      : unredactedLabels(text);
    if (left.length > 0) {
      throw new Error(`refusing to write the bundle: a value after "${left[0]}" survived redaction in ${m.name}`);
    }
  }
}

function jsonStrings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(jsonStrings);
  if (v !== null && typeof v === 'object') return Object.values(v).flatMap(jsonStrings);
  return [];
}

/** Writes the archive next to its final name and renames it into place: readers never see half a file. */
export function writeBundleFile(path: string, archive: Buffer): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, archive, { mode: 0o600, flag: 'wx' });
    // The umask cannot widen 0600, but an existing ACL default could: set it explicitly.
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

export function defaultBundleName(runId: string): string {
  return `l20-bundle-${runId}.tar.gz`;
}
