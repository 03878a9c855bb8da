/**
 * Scenarios: named starting states applied to a freshly built cluster (docs/STAGES.md §4.4). They compose
 * with `+` (`ready+link-down`), applied left to right. `ready` is the files recorded from the stages'
 * own apply (ready/) and the running state one part per stage sets; `tutorial` is built from one part
 * per stage (the files beside this one, in stage order); each fault scenario starts from `ready`
 * (applied once, however many faults are composed) and changes what its row of §4.4 says.
 */
import type { Cluster } from '../model/cluster.js';
import * as os from './os.js';
import * as nicStack from './nic-stack.js';
import * as network from './network.js';
import * as qos from './qos.js';
import * as rdma from './rdma.js';
import * as gpu from './gpu.js';
import * as nccl from './nccl.js';
import * as rayVllm from './ray-vllm.js';
import { putReadyFiles } from './ready/index.js';
import { bare as removeProbeTools } from './bare.js';

export interface Scenario {
  name: string;
  description: string;
  apply(cluster: Cluster): void;
}

/** Stage order: later parts may rely on earlier ones (names after rdma-core, addresses before GIDs). */
const PARTS = [os, nicStack, network, qos, rdma, gpu, nccl, rayVllm];

/** Clusters a starting state (fresh, and so ready and tutorial) was applied to: modifiers (bare, networkmanager) apply on top. */
const based = new WeakSet<Cluster>();

const fresh: Scenario = {
  name: 'fresh',
  description:
    'Ubuntu 22.04 minimal; eno1 from 01-netcfg.yaml; fabric ports down and unconfigured; no rdma-core, no NVIDIA driver (nouveau); straight cabling',
  apply(cluster) {
    based.add(cluster);
    for (const m of cluster.machines) {
      for (const d of m.netdevs) {
        if (d.driver === 'mlx5_core') {
          d.adminUp = false;
          d.addresses = [];
          d.mtu = 1500;
        }
      }
      m.revision++;
    }
    for (const c of cluster.cables) c.plugged = true;
  },
};

const readyClusters = new WeakSet<Cluster>();

const ready: Scenario = {
  name: 'ready',
  description:
    'every stage applied for design A: inbox stack with rocep… names, QoS unit, 580 open driver, DMA-BUF GDR, ACS off, nccl.conf, venv, Ray, vLLM serving an 8B model in DP 16',
  apply(cluster) {
    if (readyClusters.has(cluster)) return;
    readyClusters.add(cluster);
    fresh.apply(cluster);
    // The files are data recorded from the stages' own apply (ready/); the parts set the running state.
    putReadyFiles(cluster);
    for (const part of PARTS) part.ready(cluster);
    for (const m of cluster.machines) m.revision++;
  },
};

const tutorial: Scenario = {
  name: 'tutorial',
  description:
    'the recipe as written: MLNX_OFED 23.10, 4-port balance-xor bond0, runtime-only mlnx_qos, nvidia-driver-535, peermem via /etc/modules, its nccl.conf, Ray on 0.0.0.0, its start_vllm.sh',
  apply(cluster) {
    fresh.apply(cluster);
    for (const part of PARTS) part.tutorial(cluster);
    for (const m of cluster.machines) m.revision++;
  },
};

const bare: Scenario = {
  name: 'bare',
  description:
    'no pciutils, iproute2, ethtool, systemd or nvidia-utils: lspci, ip, rdma, ethtool, systemctl, ' +
    'nvidia-smi are not found (after fresh, or composed: ready+bare)',
  apply(cluster) {
    if (!based.has(cluster)) fresh.apply(cluster);
    removeProbeTools(cluster);
    for (const m of cluster.machines) m.revision++;
  },
};

function fault(name: string, description: string, change: (cluster: Cluster) => void): Scenario {
  return {
    name,
    description: `ready; ${description}`,
    apply(cluster) {
      ready.apply(cluster);
      change(cluster);
      for (const m of cluster.machines) m.revision++;
    },
  };
}

/** Changes one aspect of whatever base came before it (`fresh` when alone). */
const modifiers = new WeakSet<Scenario>();

function modifier(name: string, description: string, change: (cluster: Cluster) => void): Scenario {
  const s: Scenario = {
    name,
    description: `${description} (on top of the scenario before it; alone: fresh)`,
    apply(cluster) {
      if (!based.has(cluster)) fresh.apply(cluster);
      change(cluster);
      for (const m of cluster.machines) m.revision++;
    },
  };
  modifiers.add(s);
  return s;
}

const REGISTRY: readonly Scenario[] = [
  fresh,
  ready,
  tutorial,
  bare,
  fault('pfc-mismatch', 'node 2 PFC off on all four ports (trust dscp kept)', qos.pfcMismatch),
  fault('mtu-mismatch', 'node 2 ens1f1 MTU 1500 (active_mtu 1024)', network.mtuMismatch),
  fault('link-down', 'cable 4 (ens2f1 ↔ ens2f1) unplugged', network.linkDown),
  fault('no-peermem', 'DOCA-OFED with the proprietary driver, nvidia-peermem not loaded: no GDR path', gpu.noPeermem),
  fault('acs-enabled', "node 1's downstream ports above GPUs and NIC 1 have ACSCtl: SrcValid+", gpu.acsEnabled),
  fault(
    'wrong-gid',
    'node 2 ens1f0 has an IPv6 ULA before its IPv4 (IPv4 v2 GID at index 5) and nccl.conf pins NCCL_IB_GID_INDEX=3',
    rdma.wrongGid,
  ),
  fault('driver-mismatch', 'node 2 runs a 570.x open driver, node 1 580.x', gpu.driverMismatch),
  modifier(
    'networkmanager',
    'management rendered by NetworkManager, as on Ubuntu desktop/cloud images: ' +
      '01-network-manager-all.yaml (renderer: NetworkManager) and the management ethernet without a renderer of its' +
      ' own',
    network.networkManager,
  ),
  fault(
    'tutorial-serving',
    "no vLLM units; the tutorial's hand-started Ray (head on 0.0.0.0 without --node-ip-address) and its start_vllm.sh",
    rayVllm.tutorialOnReady,
  ),
];

export const SCENARIOS: readonly string[] = REGISTRY.map((s) => s.name);
/** Scenarios that change one aspect of the one before them (`ready+networkmanager`). */
export const MODIFIER_SCENARIOS: readonly string[] = REGISTRY.filter((s) => modifiers.has(s)).map((s) => s.name);

/** Resolves `a+b+c`; throws with the list of known names for an unknown one. */
export function resolveScenario(spec: string): Scenario[] {
  return spec.split('+').map((name) => {
    const s = REGISTRY.find((x) => x.name === name.trim());
    if (!s) throw new Error(`unknown lab scenario "${name}"; known scenarios: ${SCENARIOS.join(', ')}`);
    return s;
  });
}
