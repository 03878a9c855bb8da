/** A StageContext for evaluating checks without an engine: the schema's defaults for the given hosts. */
import { clusterSchema, type ClusterInput } from '../../src/config/schema.js';
import type { StageContext } from '../../src/engine/types.js';

export function testContext(
  hosts: readonly string[] = ['l20-n1', 'l20-n2'],
  settings: Partial<Omit<ClusterInput, 'hosts'>> = {},
): StageContext {
  const config = clusterSchema.parse({
    ...settings,
    hosts: hosts.map((name, i) => ({ name, address: '127.0.0.1', role: i === 0 ? 'head' : 'worker' })),
  });
  return { config, hosts, runId: '20261129T120000Z' };
}
