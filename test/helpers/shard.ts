/**
 * One shard of a list of cases, so that one long table of lab runs can be spread over several test files,
 * which vitest runs in parallel (the cases of one file run one after another in one worker).
 */
export function shardOf<T>(items: readonly T[], index: number, count: number): T[] {
  if (!Number.isInteger(count) || count < 1 || !Number.isInteger(index) || index < 0 || index >= count) {
    throw new Error(`shard ${index} of ${count}: the index must be 0 … count-1`);
  }
  return items.filter((_, i) => i % count === index);
}
