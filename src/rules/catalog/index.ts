/**
 * The expert rules, one record each (R01–R51, D01–D26): what `l20-setup rules` prints, what docs/RULES.md is
 * generated from, and what every finding's `rule` id resolves to. The data lives in one file per family.
 */
import { DRIVER_RULES } from './drivers.js';
import { NCCL_RULES } from './nccl.js';
import { NETWORK_RULES } from './network.js';
import { FABRIC_OUTPUT_RULES } from './output-fabric.js';
import { GPU_SERVING_OUTPUT_RULES } from './output-gpu-serving.js';
import { NCCL_OUTPUT_RULES } from './output-nccl.js';
import { QOS_RULES } from './qos.js';
import type { RuleFamily, RuleRecord } from './schema.js';
import { SERVING_RULES } from './serving.js';

/** The headings docs/RULES.md groups the families under. */
export const FAMILY_TITLES: Readonly<Record<RuleFamily, string>> = {
  nccl: 'NCCL configuration',
  network: 'Network design, netplan, bonding',
  qos: 'QoS / lossless',
  drivers: 'Drivers and GPU platform',
  serving: 'Ray, vLLM, model',
  output: 'Diagnostic output',
};

/** R rules before D rules, each by number: the order of the spec. */
function catalogOrder(a: RuleRecord, b: RuleRecord): number {
  return a.id[0] === b.id[0] ? Number(a.id.slice(1)) - Number(b.id.slice(1)) : a.id[0] === 'R' ? -1 : 1;
}

const ALL: readonly RuleRecord[] = [
  ...NCCL_RULES,
  ...NETWORK_RULES,
  ...QOS_RULES,
  ...DRIVER_RULES,
  ...SERVING_RULES,
  ...NCCL_OUTPUT_RULES,
  ...FABRIC_OUTPUT_RULES,
  ...GPU_SERVING_OUTPUT_RULES,
].sort(catalogOrder);

const BY_ID = new Map(ALL.map((r) => [r.id, r]));

/** Every rule, retired and not-yet-implemented ones included, in catalog order. */
export function allRules(): readonly RuleRecord[] {
  return ALL;
}

/** The rule with this id, typed in any case and with surrounding blanks (`r21`, ` D03`); else undefined. */
export function ruleById(id: string): RuleRecord | undefined {
  return BY_ID.get(id.trim().toUpperCase());
}

/** The ids the catalog spans, for messages: `R01–R51, D01–D26`. */
export function ruleIdRange(): string {
  return (['R', 'D'] as const)
    .map((prefix) => ALL.filter((r) => r.id.startsWith(prefix)).map((r) => r.id))
    .filter((ids) => ids.length > 0)
    .map((ids) => `${ids[0]}–${ids[ids.length - 1]}`)
    .join(', ');
}

/** `high, graded · cfg+host`; D rules leave out their scope (it is always output). */
export function severityLine(rule: RuleRecord): string {
  const severity = `${rule.severity}${rule.graded ? ', graded' : ''}`;
  const note = rule.severityNote ? ` (${rule.severityNote})` : '';
  const scope = rule.id.startsWith('R') ? ` · ${rule.scope.join('+')}` : '';
  return `${severity}${note}${scope}`;
}
