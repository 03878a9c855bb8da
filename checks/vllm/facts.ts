/** What the vllm stage reads about one host. */
import { probeProblems, type ProbeProblem } from '../../src/engine/probe-health.js';
import type { ProbeOutputs } from '../../src/engine/types.js';
import { buildFile } from '../../src/lint/build.js';
import { launchesOf, type Launch } from '../../src/rules/cfg/launch.js';
import { blocks, collectShared, collectUnit, type SharedFacts, type UnitFacts } from './shared-facts.js';
import { API_KEY_VAR, OLD_API_KEY_VAR, VLLM_ENV_FILE, vllmProbes } from './probes.js';

/** A vLLM launch found on the host: the unit's ExecStart, or a start script / Python launcher. */
export interface Deployed {
  /** `l20-vllm.service` or the script's path. */
  source: string;
  text: string;
  launch: Launch;
  /** `--name` → value ('' for switches), for the flags the checks read. */
  flags: Map<string, string>;
  headless: boolean;
}

export interface VllmFacts extends SharedFacts {
  unit: UnitFacts & { evidence: string };
  journal: string;
  journalEvidence: string;
  /** Why the journal could not be read (sudo refused, journalctl missing): an empty journal then says nothing. */
  journalUnreadable: ProbeProblem[];
  /** `key`: VLLM_API_KEY is set; `oldKey`: only the old L20_API_KEY is (vLLM does not read it by itself). */
  envFile: { present: boolean; mode?: string; owner?: string; key: boolean; oldKey: boolean; evidence: string };
  launchers: Array<{ path: string; text: string }>;
  /** Every option `vllm serve --help=all` lists; undefined when it could not run. */
  helpFlags?: string[];
  helpEvidence: string;
  /** The unit's launch when installed, else the first launcher's. */
  deployed?: Deployed;
}

/** `--flag=value` / `--flag value` / `-tp 8` of a parsed launch. */
function flagMap(l: Launch): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of l.cli?.flags ?? []) m.set(f.name, f.value ?? '');
  return m;
}

export function deployedFrom(source: string, text: string): Deployed | undefined {
  const launch = launchesOf(buildFile(source, text))[0];
  if (!launch) return undefined;
  const flags = flagMap(launch);
  return { source, text, launch, flags, headless: flags.has('--headless') };
}

/** Option names of an argparse help text (`  --data-parallel-size DATA_PARALLEL_SIZE, -dp DATA_PARALLEL_SIZE`). */
export function helpFlags(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split('\n')) {
    if (!/^\s{2,}-/.test(line)) continue;
    const spec = line.trim().split(/\s{2,}/)[0] ?? '';
    for (const m of spec.matchAll(/(?:^|[\s,])(--?[A-Za-z][\w-]*)/g)) out.add(m[1]!.replace(/=.*$/, ''));
  }
  return [...out];
}

export function collectVllm(outputs: ProbeOutputs): VllmFacts {
  const r = outputs.results;
  const shared = collectShared(outputs);

  const unit: VllmFacts['unit'] = {
    ...collectUnit(
      vllmProbes.find((p) => p.id === 'unit'),
      r.unit,
    ),
    evidence: r.unit ? `systemctl is-active/show l20-vllm.service → exit ${r.unit.exitCode}` : 'not run',
  };

  const env = (r['env-file']?.stdout ?? '').trim();
  const mode = /^mode (\d+) (\S+)$/m.exec(env);
  const key = /^key set$/m.test(env);
  const oldKey = !key && /^key under the old name$/m.test(env);
  const keyText = key
    ? `${API_KEY_VAR} set (value not shown)`
    : oldKey
      ? `the key is under the old name ${OLD_API_KEY_VAR} (value not shown), which vLLM does not read`
      : `no ${API_KEY_VAR}`;
  const envFile: VllmFacts['envFile'] = {
    present: !!mode,
    ...(mode ? { mode: mode[1], owner: mode[2] } : {}),
    key,
    oldKey,
    evidence: `${VLLM_ENV_FILE}: ${mode ? `mode ${mode[1]}, owner ${mode[2]}, ${keyText}` : 'absent'}`,
  };

  const launchers = blocks(r.launchers?.stdout ?? '')
    .filter((b) => b.name === 'launcher')
    .map((b) => ({ path: b.rest, text: `${b.body}\n` }));
  const help = r.help;
  const flags = help?.exitCode === 0 ? helpFlags(help.stdout) : undefined;
  const helpEvidence = help
    ? `${help.commandLine} → exit ${help.exitCode}${help.exitCode === 0 ? `, ${flags?.length ?? 0} options` : `\n${`${help.stdout}${help.stderr}`.trim().split('\n').slice(-3).join('\n')}`}`
    : 'not run';

  const deployed =
    (unit.file ? deployedFrom('l20-vllm.service', unit.file) : undefined) ??
    launchers.map((l) => deployedFrom(l.path, l.text)).find((d) => d !== undefined);
  const j = r.journal;
  const journalProbe = vllmProbes.find((p) => p.id === 'journal');
  return {
    ...shared,
    unit,
    journal: j?.exitCode === 0 ? j.stdout : '',
    journalEvidence: j ? `${j.commandLine} → exit ${j.exitCode}` : 'not run',
    journalUnreadable: j && journalProbe ? probeProblems(journalProbe, j) : [],
    envFile,
    launchers,
    ...(flags ? { helpFlags: flags } : {}),
    helpEvidence,
    ...(deployed ? { deployed } : {}),
  };
}
