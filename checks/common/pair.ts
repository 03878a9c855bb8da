/**
 * What every pair check says when the inventory holds a single host: a comparison across hosts, or a
 * measurement between them, has nothing to stand on — it skips instead of passing on one side alone.
 */
import type { Verdict } from '../../src/engine/types.js';

/** `hosts`: the inventory's host names (StageContext.hosts). */
export function oneHostSkip(hosts: readonly string[]): Verdict | undefined {
  if (hosts.length >= 2) return undefined;
  return {
    status: 'skip',
    summary: `one host (${hosts[0] ?? 'none'}): nothing to compare`,
    evidence: `hosts in the inventory: ${hosts.join(', ') || 'none'}`,
  };
}
