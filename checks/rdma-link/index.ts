/**
 * Stage 6, `rdma-link` (docs/STAGES.md §3.6): proves each cable carries RoCE v2 at line rate in the lossless
 * class. No apply steps — a failure points to the stage that fixes it (network, qos, cabling).
 */
import type { StageDef } from '../../src/engine/types.js';
import { activeMtuCheck, gidsCheck, portsCheck } from './checks.js';
import { aggregateCheck, bwCheck, countersCheck, crossPairCheck, lagCheck } from './bw-checks.js';
import { runRdmaLinkCluster, type RdmaLinkCluster } from './cluster.js';
import { collectRdmaLink, type RdmaLinkFacts } from './facts.js';
import { rdmaLinkProbes } from './probes.js';

export const rdmaLinkStage: StageDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link',
  title: 'ports, GIDs, MTU, ib_write_bw per cable',
  purpose:
    'Checks that every fabric RDMA device is ACTIVE on its netdev with one RoCE v2 IPv4 GID and active_mtu 4096, then measures ib_write_bw per cable (server on node 2, client on node 1, --tclass from qos.dscp so the test runs in the lossless class) and all cables at once, with ethtool -S and hw_counters read before and after. The tutorial expects the wrong device count from ibstat and never measures a link.',
  probes: rdmaLinkProbes,
  collect: collectRdmaLink,
  cluster: runRdmaLinkCluster,
  checks: [portsCheck, gidsCheck, activeMtuCheck, bwCheck, aggregateCheck, lagCheck, crossPairCheck, countersCheck],
};
