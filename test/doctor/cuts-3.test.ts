/** doctor reads every fixture cut at every 97th byte (shard 3 of 3; the shard files run in parallel). */
import { describe, it } from 'vitest';
import { readCutsOfShard } from './robustness-helpers.js';

describe('doctor on truncated outputs', () => {
  it('reads every fixture of shard 3/3 cut at every 97th byte', { timeout: 300_000 }, () => readCutsOfShard(2, 3));
});
