/**
 * NCCL echoes every variable it read in its INFO log (`NCCL INFO NCCL_ALGO set by environment to Ring`,
 * `NCCL_IB_HCA set to mlx5_0`), whether it came from the environment or an nccl.conf. Those values are
 * judged here by the same cfg rules `lint` runs on nccl.conf, with the NCCL version the log states.
 *
 * Only the rules that judge a value by itself run: where it was set (R11 debug output in system files, R12
 * conf syntax, R13 sourcing) is not in the log, and the rules that need other files (netplan for R14's
 * interface match and R15, QoS commands for R09) stay silent without them anyway.
 */
import type { EnvEchoHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { R01, R02 } from './nccl-algo.js';
import { R14 } from './nccl-env.js';
import { R03, R04, R05, R06, R10 } from './nccl-vars.js';

const VALUE_RULES: readonly CfgRule[] = [R01, R02, R03, R04, R05, R06, R10, R14];

/**
 * The cfg findings on the values a log echoed. Each finding points at the echo line (`line`) and its
 * evidence starts with that line verbatim, then the rule's reading of `KEY=value`.
 */
export function envEchoFindings(
  echoes: readonly EnvEchoHit[],
  opts: { ncclVersion?: string; source: string },
): Finding[] {
  if (echoes.length === 0) return [];
  const file: CfgFile = {
    name: opts.source,
    kind: 'env',
    lines: [],
    settings: echoes.map((e) => ({
      key: e.key,
      value: e.value,
      line: e.line,
      raw: `${e.key}=${e.value}`,
      origin: 'export' as const,
    })),
    confMalformed: [],
    netplans: [],
    commands: [],
    proseEvidence: new Map(),
    python: [],
    units: [],
  };
  const ctx: CfgContext = { files: [file], versions: opts.ncclVersion ? { nccl: opts.ncclVersion } : {} };
  const byLine = new Map(echoes.map((e) => [e.line, e.text.trim()]));
  const out: Finding[] = [];
  for (const rule of VALUE_RULES) {
    for (const f of rule.check(file, ctx)) {
      const echo = f.line !== undefined ? byLine.get(f.line) : undefined;
      out.push({ ...f, evidence: echo ? `line ${f.line}: ${echo}\n${f.evidence}` : f.evidence, source: opts.source });
    }
  }
  return out;
}
