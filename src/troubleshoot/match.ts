/**
 * From check results to a diagnosis, without I/O: which not-passing checks a symptom's causes
 * recognise (first cause wins), the hosts it shows on, the evidence and fix, and the probes' raw
 * outputs side by side with the differing lines marked. The engine (engine.ts) runs the stages and
 * hands their outcomes here; the screen and the CLI only read the result.
 */
import type { CheckResult, StageId } from '../engine/types.js';
import type { RunResult } from '../transport/types.js';
import { sanitize } from '../util/sanitize.js';
import type { CauseDef, CompareDef, Comparison, Diagnosis, SymptomDef } from './types.js';

/** What one stage run left for the diagnosis: its verdicts, and every host's raw probe results. */
export interface StageRun {
  stage: StageId;
  results: readonly CheckResult[];
  outputs?: ReadonlyMap<string, Readonly<Record<string, RunResult>>>;
  /** Whether its cluster run (benchmarks, pings) ran, so checks reading it are in `results`. */
  cluster: boolean;
}

const DEFAULT_STATUSES: ReadonlyArray<CheckResult['status']> = ['fail', 'warn'];

/** `checks` entries are check ids, or prefixes ending in '.' for a whole stage ('qos.'): rdma-link.bw is not rdma-link.bw-aggregate. */
function idMatches(prefixes: readonly string[], id: string): boolean {
  return prefixes.some((p) => id === p || (p.endsWith('.') && id.startsWith(p)));
}

/** Whether a check is one this cause looks at, whatever its status: by id, by rule, or by both when both are given. */
export function looksAt(cause: CauseDef, r: CheckResult): boolean {
  const { checks, rules } = cause.when;
  if (!checks && !rules) return false;
  const byId = !checks || idMatches(checks, r.id);
  const byRule = !rules || (r.rule !== undefined && rules.includes(r.rule));
  return byId && byRule;
}

/** Whether this not-passing check shows the cause (id and rule as `looksAt`, status in `statuses`). */
export function matchesCause(cause: CauseDef, r: CheckResult): boolean {
  const statuses = cause.when.statuses ?? DEFAULT_STATUSES;
  return (statuses as readonly string[]).includes(r.status) && looksAt(cause, r);
}

/**
 * Checks any cause of the symptom reads (status aside): the symptom's probes. A rule another symptom
 * owns takes a check out (rdma-link.gids failing with R05 is the GID symptom's, not the bond one's,
 * which reads it for R16); a check without a rule (an error, a plain pass) stays in.
 */
function probesOf(symptom: SymptomDef, results: readonly CheckResult[]): CheckResult[] {
  return results.filter((r) =>
    symptom.causes.some((c) => {
      const { checks, rules } = c.when;
      if (!checks) return looksAt(c, r);
      return idMatches(checks, r.id) && (!rules || r.rule === undefined || rules.includes(r.rule));
    }),
  );
}

/** Hosts a diagnosis shows on: host checks' hosts, else the hosts a cluster check's summary names. */
export function hostsOf(checks: readonly CheckResult[], hosts: readonly string[]): string[] {
  const named = new Set(checks.filter((c) => c.host !== null).map((c) => c.host!));
  if (named.size === 0) {
    for (const c of checks) {
      for (const h of hosts) {
        const re = new RegExp(`(^|[^\\w.-])${h.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w-])`);
        if (re.test(c.summary)) named.add(h);
      }
    }
  }
  return hosts.filter((h) => named.has(h));
}

function line(r: CheckResult): string {
  return `${r.host ?? 'cluster'} ${r.id}${r.rule ? ` (${r.rule})` : ''} ${r.status}: ${r.summary}`;
}

function evidenceOf(checks: readonly CheckResult[]): string {
  return [
    ...checks.map(line),
    ...checks.filter((c) => c.evidence.trim()).map((c) => `\n── ${c.host ?? 'cluster'} ${c.id}\n${c.evidence.trim()}`),
  ].join('\n');
}

/** Indexes of lines that are not the same on every host (a line one host lacks differs). */
export function differingLines(byHost: Readonly<Record<string, readonly string[]>>): number[] {
  const all = Object.values(byHost);
  if (all.length < 2) return [];
  const n = Math.max(0, ...all.map((l) => l.length));
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const first = all[0]![i];
    if (all.some((l) => l[i] === undefined || l[i] !== first)) out.push(i);
  }
  return out;
}

function outputLines(r: RunResult | undefined, match: RegExp | undefined): string[] {
  if (!r) return ['(probe did not run on this host)'];
  const text = r.stdout.trim() ? r.stdout : r.stderr;
  const lines = sanitize(text)
    .replace(/\s+$/, '')
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''));
  const kept = match ? lines.filter((l) => match.test(l)) : lines;
  return kept.length === 1 && kept[0] === '' ? [] : kept;
}

/** Per host, the lines some other host does not print at all (outputs of different lengths still line up by content). */
export function linesMissingElsewhere(byHost: Readonly<Record<string, readonly string[]>>): Record<string, number[]> {
  const entries = Object.entries(byHost);
  const sets = new Map(entries.map(([h, l]) => [h, new Set(l)]));
  const out: Record<string, number[]> = {};
  for (const [h, lines] of entries) {
    out[h] =
      entries.length < 2
        ? []
        : lines.flatMap((l, i) => (entries.some(([o]) => o !== h && !sets.get(o)!.has(l)) ? [i] : []));
  }
  return out;
}

/** One probe's output per host (hosts in inventory order), differing lines marked. */
export function buildComparison(
  def: CompareDef,
  runs: readonly StageRun[],
  hosts: readonly string[],
): Comparison | undefined {
  const run = runs.find((r) => r.stage === def.stage);
  if (!run?.outputs) return undefined;
  const match = def.match ? new RegExp(def.match) : undefined;
  const byHost: Record<string, string[]> = {};
  for (const h of hosts) byHost[h] = outputLines(run.outputs.get(h)?.[def.probe], match);
  return {
    label: def.label,
    byHost,
    differing: differingLines(byHost),
    differingByHost: linesMissingElsewhere(byHost),
  };
}

/**
 * The diagnosis of one symptom from the stage runs: found (the first cause whose checks show), clear
 * (every probe passes) or inconclusive (a probe fails or errored and no cause explains it).
 */
export function diagnoseSymptom(symptom: SymptomDef, runs: readonly StageRun[], hosts: readonly string[]): Diagnosis {
  const mine = runs.filter((r) => symptom.stages.includes(r.stage));
  const results = mine.flatMap((r) => r.results);
  const comparisons = (symptom.compare ?? [])
    .map((c) => buildComparison(c, runs, hosts))
    .filter((c): c is Comparison => c !== undefined);
  const base = { symptom: symptom.id, title: symptom.title, comparisons };
  for (const cause of symptom.causes) {
    const checks = results.filter((r) => matchesCause(cause, r));
    if (checks.length === 0) continue;
    return {
      ...base,
      status: 'found',
      cause: cause.cause,
      causeId: cause.id,
      rules: [...cause.rules],
      hosts: hostsOf(checks, hosts),
      evidence: evidenceOf(checks),
      fix: cause.fix,
      fixStages: [...(cause.fixStages ?? symptom.fixStages)],
      checks,
    };
  }
  const probes = probesOf(symptom, results);
  const unexplained = probes.filter((r) => r.status === 'fail' || r.status === 'error');
  const fixStages = [...symptom.fixStages];
  if (unexplained.length > 0) {
    return {
      ...base,
      status: 'inconclusive',
      cause: null,
      causeId: null,
      rules: [...new Set(unexplained.flatMap((r) => (r.rule ? [r.rule] : [])))],
      hosts: hostsOf(unexplained, hosts),
      evidence: `no known cause of "${symptom.title}" explains these:\n${evidenceOf(unexplained)}`,
      fix:
        [...new Set(unexplained.flatMap((r) => (r.fix ? [r.fix] : [])))].join('\n') ||
        'read the evidence; re-run the stages it names (l20-setup check --stage …)',
      fixStages,
      checks: unexplained,
    };
  }
  const skippedBench = symptom.benchmarks === true && mine.some((r) => !r.cluster);
  const passing = [...new Set(probes.filter((r) => r.status === 'pass').map((r) => r.id))];
  return {
    ...base,
    status: 'clear',
    cause: null,
    causeId: null,
    rules: [],
    hosts: [],
    evidence: `${passing.length ? `every probe passes: ${passing.join(', ')}` : 'no probe of this symptom reported anything'}${skippedBench ? `\nthe benchmarks were not run (only \`troubleshoot ${symptom.id}\` runs them): causes that only show under load are not ruled out` : ''}`,
    fix: '',
    fixStages,
    checks: [],
  };
}
