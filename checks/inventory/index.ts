/** Stage 1, `inventory`: reads everything, changes nothing (docs/STAGES.md §3.1). */
import type { StageDef } from '../../src/engine/types.js';
import type { InventoryFacts } from './facts.js';
import { inventoryProbes } from './probes.js';
import { collectInventory } from './collect.js';
import { inventoryChecks } from './checks.js';

export const inventoryStage: StageDef<InventoryFacts> = {
  id: 'inventory',
  title: 'hardware, OS, NICs, GPUs, topology, cabling',
  purpose:
    'Reads OS, CPU, memory, GPUs, ConnectX functions, PCIe links, netdevs, RDMA devices, topology and cabling; changes nothing. Names found here are re-discovered by every later stage.',
  probes: inventoryProbes,
  collect: collectInventory,
  checks: inventoryChecks,
};
