/**
 * The symptom catalog (issue 6): how an operator meets each known bring-up failure, which stages'
 * read-only checks tell its causes apart, the reasoning from a not-passing check to a cause with its
 * rule ids (docs/RULES.md), and the stages whose plan/apply/verify path repairs it. Causes are listed from
 * the root cause to its consequences: the first one whose checks show wins (src/troubleshoot/match.ts).
 * Check ids and rules are the ones the stages produce (checks/<stage>/); nothing here re-implements a check.
 */
import type { StageId } from '../../src/engine/types.js';
import type { SymptomDef } from '../../src/troubleshoot/types.js';

/**
 * Pair checks that read only the hosts' facts, never their stage's cluster run: troubleshoot evaluates
 * them even when it leaves the benchmarks out (an MTU or GID table compared across hosts needs no ping).
 */
export const FACT_PAIR_CHECKS: readonly string[] = [
  'inventory.cabling',
  'inventory.pair-hardware',
  'nic-stack.parity',
  'nic-stack.firmware-parity',
  'network.cabling',
  'network.addresses',
  'network.mtu',
  'qos.pair',
  'qos.tc-chain',
  'rdma-link.gids',
  'rdma-link.active-mtu',
  'gpu-driver.parity',
  'nccl.conf-parity',
  'nccl.version',
  'ray.versions',
  'vllm.versions',
  'vllm.model',
];

const IB_PORTS = {
  stage: 'rdma-link',
  probe: 'ibdev2netdev',
  label: 'ibdev2netdev (RDMA device → netdev, state)',
} as const;
const NCCL_CONF = { stage: 'nccl', probe: 'nccl-conf', label: '/etc/nccl.conf' } as const;
const GID_TABLE = { stage: 'rdma-link', probe: 'gids', label: 'GID tables (device index type netdev gid)' } as const;
const LSMOD_PEERMEM = {
  stage: 'gpudirect',
  probe: 'modules',
  label: '/proc/modules (nvidia, peer memory, ib_core)',
  match: '^(nvidia|ib_core|ib_uverbs|mlx5_ib)',
} as const;

export const SYMPTOMS: readonly SymptomDef[] = [
  {
    id: 'nccl-sockets',
    title: 'NCCL silently on TCP sockets',
    observed:
      'all_reduce crawls at about 1 GB/s and NCCL_DEBUG=INFO says `Using network Socket` (NET/Socket) instead of NET/IB',
    stages: ['rdma-link', 'nccl'],
    benchmarks: true,
    causes: [
      {
        id: 'ports-down',
        when: { checks: ['rdma-link.ports'] },
        rules: ['D08'],
        cause:
          'the RDMA ports are not ACTIVE: NCCL finds no usable IB device and falls back to sockets without an error',
        fix: 'bring the fabric ports up and check the cables at both ends (network.apply sets the ports up)',
        fixStages: ['network'],
      },
      {
        id: 'hca-unresolved',
        when: { checks: ['nccl.hca-resolve'], statuses: ['fail'] },
        rules: ['R06', 'R07'],
        cause: 'NCCL_IB_HCA selects no live RDMA device on this host, so NCCL has no IB transport to use',
        fix: 'apply nccl.conf: /etc/nccl.conf written from the names `rdma link show` reports now',
      },
      {
        id: 'socket-in-log',
        when: { checks: ['nccl.validation'], rules: ['D01'] },
        rules: ['D01'],
        cause: "NCCL's own log says NET/Socket: the all-reduce ran over TCP on the control interface",
        fix: 'make NCCL_IB_HCA name the live RDMA devices (apply nccl.conf), then re-run the validation',
      },
    ],
    fixStages: ['nccl'],
    compare: [NCCL_CONF, IB_PORTS],
  },
  {
    id: 'wrong-gid',
    title: 'wrong RoCE GID index (completion error 12, ibv_modify_qp failed)',
    observed:
      'NCCL WARN NET/IB : Got completion with error 12 (or ibv_modify_qp failed: Network is unreachable) although ib_write_bw works',
    stages: ['rdma-link', 'nccl'],
    benchmarks: true,
    causes: [
      {
        id: 'pinned-index',
        when: { checks: ['rdma-link.gids', 'nccl.conf-lint'], rules: ['R05'] },
        rules: ['R05'],
        cause:
          'NCCL_IB_GID_INDEX pins a GID index that is not the RoCE v2 IPv4 GID on every device of every host (the GID tables differ)',
        fix: 'delete NCCL_IB_GID_INDEX (apply nccl.conf): NCCL ≥ 2.21 selects the RoCE v2 IPv4 GID on each device itself',
      },
      {
        id: 'no-v2-gid',
        when: { checks: ['rdma-link.gids'], statuses: ['fail'] },
        rules: ['D19'],
        cause: 'a device has no RoCE v2 GID carrying its IPv4 address: its port has no address on its own netdev',
        fix: 'give each fabric port its per-cable IPv4 address (network.write and network.apply)',
        fixStages: ['network'],
      },
      {
        id: 'qp-errors',
        when: { checks: ['nccl.validation'], rules: ['D05', 'D04'] },
        rules: ['D05', 'D04'],
        cause: "the all-reduce's queue pairs failed to connect or complete: the two ends disagree on GID (or MTU)",
        fix: 'compare the GID tables below; unset NCCL_IB_GID_INDEX (apply nccl.conf) and check MTU parity (network.mtu)',
      },
    ],
    fixStages: ['nccl'],
    compare: [GID_TABLE, NCCL_CONF],
  },
  {
    id: 'gdr-disabled',
    title: 'GPUDirect RDMA off',
    observed: "NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0' (no /GDRDMA on the NET/IB channels)",
    stages: ['gpudirect', 'nccl'],
    benchmarks: true,
    causes: [
      {
        id: 'no-gdr-path',
        when: { checks: ['gpudirect.path', 'gpudirect.peermem-dmesg'], rules: ['R34'] },
        rules: ['R34'],
        cause:
          'no GPUDirect RDMA path on the host: neither DMA-BUF (open kernel module, kernel ≥ 5.12) nor a loaded nvidia-peermem',
        fix: 'apply gpudirect (loads and persists nvidia-peermem where the driver needs it; DMA-BUF needs no module)',
      },
      {
        id: 'gdr-off-in-log',
        when: { checks: ['nccl.validation'], rules: ['D02'] },
        rules: ['D02'],
        cause: "a path exists but NCCL's log shows no GDRDMA channel: GPU data is staged through host memory",
        fix: 'remove NCCL_DMABUF_ENABLE=0 / NCCL_NET_GDR_LEVEL overrides (apply nccl.conf) and re-run the validation',
      },
    ],
    fixStages: ['gpudirect'],
    compare: [LSMOD_PEERMEM, { stage: 'gpudirect', probe: 'nvidia-version', label: '/proc/driver/nvidia/version' }],
  },
  {
    id: 'acs',
    title: 'PCIe ACS halving bandwidth or hanging NCCL',
    observed: 'all_reduce reaches about half the expected busbw, or hangs inside a node, on a PCIe-only server',
    stages: ['gpudirect'],
    causes: [
      {
        id: 'acs-on',
        when: { checks: ['gpudirect.acs'], rules: ['R36'] },
        rules: ['R36'],
        cause:
          'ACS redirect is on on the PCIe bridges above the GPUs and NICs: P2P and GPUDirect traffic detours through the root complex',
        fix: 'apply gpudirect.acs-off (turns ACS off at every boot from a unit; pci=noacs or the BIOS are the alternatives)',
      },
      {
        id: 'iommu-translated',
        when: { checks: ['gpudirect.iommu'], rules: ['R36'] },
        rules: ['R36'],
        cause: 'the IOMMU translates every DMA (not in passthrough): GPU and NIC transfers pay IOTLB lookups',
        fix: 'apply gpudirect.iommu-pt (iommu=pt on the kernel command line, then a reboot)',
      },
    ],
    fixStages: ['gpudirect'],
    compare: [
      {
        stage: 'gpudirect',
        probe: 'pcie',
        label: 'ACS control on the bridges (lspci -vv)',
        match: '^[0-9a-f]{4}:|ACSCtl',
      },
    ],
  },
  {
    id: 'mtu-mismatch',
    title: 'MTU different at the two ends of a cable',
    observed:
      'NCCL ≥ 2.20 hangs or fails with "local access violation work queue error"; jumbo pings are lost while small ones pass',
    stages: ['network', 'rdma-link', 'nccl'],
    causes: [
      {
        id: 'mtu-differs',
        when: {
          checks: ['network.mtu', 'rdma-link.active-mtu', 'network.reachability', 'rdma-link.bw'],
          rules: ['R24'],
        },
        rules: ['R24'],
        cause: 'the interface MTU (and so the RDMA active_mtu) differs at the two ends of a cable',
        fix: 'set mtu: 9000 on both ends of every cable (apply network: network.write and network.apply)',
      },
      {
        id: 'completion-errors',
        when: { checks: ['nccl.validation'], rules: ['D04'] },
        rules: ['D04'],
        cause:
          'queue pairs fail with completion errors during the all-reduce: compare MTU at both ends of the rail in the evidence',
        fix: 'make the MTU equal at both ends (apply network), then re-run the validation',
      },
    ],
    fixStages: ['network'],
    compare: [
      {
        stage: 'rdma-link',
        probe: 'devinfo',
        label: 'ibv_devinfo (active_mtu per port)',
        match: 'hca_id|active_mtu|max_mtu|state:',
      },
    ],
  },
  {
    id: 'pfc-one-side',
    title: 'PFC configured on one side only',
    observed: 'ib_write_bw reaches 60–70 % of line rate with retransmissions; pause frames go out from one end only',
    stages: ['qos', 'rdma-link'],
    causes: [
      {
        id: 'pfc-differs',
        when: { checks: ['qos.pair', 'qos.pfc'], rules: ['R26'] },
        rules: ['R26'],
        cause:
          "PFC on the RoCE priority is on at one end of the cables and off at the other: the lossless end's pause frames are ignored and RoCE drops under load",
        fix: 'apply qos on the host whose PFC is off (qos.persist: trust dscp, PFC on priority 3, re-applied at every boot)',
      },
      {
        id: 'trust-differs',
        when: { checks: ['qos.pair', 'qos.trust', 'qos.dscp2prio', 'qos.tc-chain'], rules: ['R08'] },
        rules: ['R08'],
        cause: 'trust or the DSCP → priority map differs between the ends: RoCE leaves one end in a lossy class',
        fix: 'apply qos on both hosts (qos.persist) so NCCL_IB_TC → DSCP → priority 3 → PFC closes on every port',
      },
      {
        id: 'dcbx-owner',
        when: { checks: ['qos.dcbx'], rules: ['R28'] },
        rules: ['R28'],
        cause: 'a DCBX agent (lldpad or the NIC firmware) owns the QoS settings and can overwrite them on one end',
        fix: 'apply qos (stops lldpad, hands DCBX to the OS)',
      },
      {
        id: 'drops-under-load',
        when: { checks: ['rdma-link.bw', 'rdma-link.counters'], rules: ['R26', 'R29'] },
        rules: ['R26', 'R29'],
        cause:
          'the benchmark saw drops and retransmissions in the lossless class: the ends do not pause for each other',
        fix: 'compare the two mlnx_qos outputs below and apply qos on both hosts',
      },
    ],
    fixStages: ['qos'],
    // mlnx_qos where an OFED installed it, iproute2's dcb on the inbox stack: the same facts, either tool's lines.
    compare: [
      {
        stage: 'qos',
        probe: 'qos',
        label: 'mlnx_qos / dcb per port (trust, PFC, DSCP map)',
        match: '^### (?!exit)|trust|enabled|dscp|prio|pfc|PFC|dcbx|DCBX',
      },
    ],
  },
  {
    id: 'mgmt-bound',
    title: 'Gloo / NCCL / Ray bound to the management NIC',
    observed:
      'Gloo connectFullMesh fails or times out, NCCL bootstraps over the wrong network, Ray shows the nodes at their management addresses',
    stages: ['nccl', 'ray'],
    causes: [
      {
        id: 'bootstrap-ifname',
        when: { checks: ['nccl.socket-ifname'], rules: ['R14'] },
        rules: ['R14'],
        cause:
          'NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME do not select the control interface: bootstrap and Gloo pick another network',
        fix: 'apply nccl.conf (NCCL_SOCKET_IFNAME and GLOO_SOCKET_IFNAME set to the control interface)',
      },
      {
        id: 'ray-node-ip',
        when: { checks: ['ray.node-ips'], rules: ['R45'] },
        rules: ['R45'],
        cause:
          "Ray registered a node outside the control subnet (no --node-ip-address: it took the default route's address)",
        fix: 'apply ray.units (ray start --node-ip-address=<control address> on every node)',
        fixStages: ['ray'],
      },
    ],
    fixStages: ['nccl', 'ray'],
    compare: [{ stage: 'nccl', probe: 'nccl-env', label: 'exported NCCL_* / GLOO_SOCKET_IFNAME' }, NCCL_CONF],
  },
  {
    id: 'bond-one-port',
    title: "a bond giving one port's bandwidth",
    observed:
      "nccl-tests over the bond reach one port's bandwidth (or half of it); ib_write_bw works only between some port pairs",
    stages: ['network', 'rdma-link'],
    causes: [
      {
        id: 'no-roce-lag',
        when: { checks: ['network.bond-lag', 'network.design', 'network.lacp'], rules: ['R16'] },
        rules: ['R16'],
        cause:
          "the RDMA ports are slaves of a Linux bond that is no RoCE LAG: one queue pair uses one port, and the bond's GIDs spill onto every device",
        fix: 'migrate to design A (apply network: one subnet per cable, no bond over RDMA ports), or a RoCE LAG of the two PFs of one card',
        // The migration needs the cabling map, which over a bond only LLDP gives: lldpd comes with os.install-base.
        fixStages: ['os', 'network'],
      },
      {
        id: 'lag-one-member',
        when: { checks: ['rdma-link.lag', 'rdma-link.cross-pair', 'rdma-link.gids'], rules: ['R16'] },
        rules: ['R16'],
        cause:
          'traffic over the bond uses one member (or only the cabled pairs work): GIDs of one address on several devices',
        fix: 'apply network (design A), then NCCL_IB_HCA names each port (apply nccl.conf)',
      },
    ],
    fixStages: ['network'],
    compare: [{ stage: 'network', probe: 'bonding', label: '/proc/net/bonding' }, IB_PORTS],
  },
  {
    id: 'peermem-broken',
    title: 'nvidia-peermem broken after a kernel or OFED upgrade',
    observed:
      "modprobe nvidia-peermem: could not insert 'nvidia_peermem': Invalid argument; NCCL then runs without GPUDirect RDMA",
    stages: ['gpudirect'],
    causes: [
      {
        id: 'load-refused',
        when: { checks: ['gpudirect.peermem-dmesg'], rules: ['R34'] },
        rules: ['R34', 'D14'],
        cause: 'the kernel refused nvidia_peermem (unknown symbols: built against another ib_core than the one loaded)',
        fix: "rebuild the module against the running OFED (reinstall the driver's DKMS package after OFED), then apply gpudirect.peermem",
        fixStages: ['gpu-driver', 'gpudirect'],
      },
      {
        id: 'not-loaded',
        when: { checks: ['gpudirect.path'], rules: ['R34'] },
        rules: ['R34', 'D14'],
        cause: 'nvidia-peermem is not loaded and the proprietary driver has no DMA-BUF path: no GPUDirect RDMA',
        fix: 'apply gpudirect.peermem (modprobe nvidia-peermem and /etc/modules-load.d/nvidia-peermem.conf)',
      },
    ],
    fixStages: ['gpudirect'],
    compare: [
      LSMOD_PEERMEM,
      { stage: 'gpudirect', probe: 'dmesg', label: 'kernel log (peermem)' },
      { stage: 'gpudirect', probe: 'ofed-info', label: 'ofed_info -s' },
    ],
  },
  {
    id: 'link-flap-gids',
    title: 'a link flap that changed the GIDs',
    observed:
      'after a port went down and up, NCCL jobs fail with GID errors while ib_write_bw with auto GID works (NIC recovery failure)',
    stages: ['rdma-link', 'nccl'],
    causes: [
      {
        id: 'pinned-stale',
        when: { checks: ['rdma-link.gids', 'nccl.conf-lint'], rules: ['R05'] },
        rules: ['R05'],
        cause: 'NCCL_IB_GID_INDEX pins an index the re-registered GID table no longer holds the RoCE v2 IPv4 GID at',
        fix: 'delete NCCL_IB_GID_INDEX (apply nccl.conf): NCCL then picks the RoCE v2 IPv4 GID at every start',
      },
      {
        id: 'conf-stale',
        when: { checks: ['nccl.conf-names'], statuses: ['fail'] },
        rules: ['R07'],
        cause:
          '/etc/nccl.conf no longer matches the live device and interface names (re-registration after a flap, reboot or stack change)',
        fix: 'apply nccl.conf (rewrites the file from the names `rdma link show` reports now)',
      },
      {
        id: 'port-down',
        when: { checks: ['rdma-link.ports'] },
        rules: ['D08'],
        cause: 'a port is down right now: its GIDs are gone until the link returns',
        fix: 'check the cable and the switch/peer port; network.apply brings ports up',
        fixStages: ['network'],
      },
      {
        id: 'index-differs',
        when: { checks: ['rdma-link.gids'], statuses: ['warn'] },
        rules: ['R05'],
        cause:
          'the RoCE v2 IPv4 GID sits at different indexes on different devices or hosts: harmless while NCCL selects it, fatal for any pinned index',
        fix: 'keep NCCL_IB_GID_INDEX unset (the nccl stage never writes it)',
      },
    ],
    fixStages: ['nccl'],
    compare: [GID_TABLE],
  },
  {
    id: 'link-down',
    title: 'a fabric link down',
    observed:
      'one rail is missing: ibstat shows State: Down, NCCL uses fewer NICs, ib_write_bw on that port never connects',
    stages: ['inventory', 'network', 'rdma-link'],
    causes: [
      {
        id: 'port-down',
        when: { checks: ['rdma-link.ports', 'inventory.links'] },
        rules: ['D08', 'D09'],
        cause:
          'a fabric port has no link: the cable, transceiver or far-end port is out, or the port is administratively down',
        fix: 'reseat or replace the cable at both ends (ethtool <port> must say Link detected: yes); network.apply sets the ports up',
      },
      {
        id: 'no-peer',
        when: { checks: ['network.cabling', 'network.reachability', 'inventory.cabling'] },
        rules: ['R17'],
        cause: 'a fabric port has no peer on the other host: its cable subnet is unreachable',
        fix: 'check the cabling map (inventory.cabling) and re-apply network once every cable has link',
      },
    ],
    fixStages: ['network'],
    compare: [
      IB_PORTS,
      {
        stage: 'inventory',
        probe: 'ethtool',
        label: 'ethtool (Speed, Link detected)',
        match: '^###|Speed:|Link detected',
      },
    ],
  },
  {
    id: 'driver-mismatch',
    title: 'driver or library versions differ between the hosts',
    observed:
      'one NCCL job across the hosts fails during init or with "unhandled cuda error"; nvidia-smi shows different driver versions',
    stages: ['gpu-driver', 'nic-stack', 'nccl'],
    causes: [
      {
        id: 'gpu-driver-differs',
        when: { checks: ['gpu-driver.parity'], rules: ['R47'] },
        rules: ['R47'],
        cause:
          'the hosts run different NVIDIA drivers (version or open/proprietary flavour): one NCCL job needs one driver',
        fix: 'apply gpu-driver on the host that differs (the pinned driver branch, open kernel modules)',
      },
      {
        id: 'nic-stack-differs',
        when: { checks: ['nic-stack.parity', 'nic-stack.firmware-parity'] },
        rules: ['R47'],
        cause: 'the NIC software stack or firmware differs between the hosts',
        fix: 'apply nic-stack on the host that differs',
        fixStages: ['nic-stack'],
      },
      {
        id: 'nccl-differs',
        when: { checks: ['nccl.version'], rules: ['R47'] },
        rules: ['R47'],
        cause: 'the hosts load different NCCL versions',
        fix: 'install the same pinned venv everywhere (apply nccl.bench-tools)',
        fixStages: ['nccl'],
      },
    ],
    fixStages: ['gpu-driver'],
    compare: [{ stage: 'gpu-driver', probe: 'nvidia-version', label: '/proc/driver/nvidia/version' }],
  },
];

export function symptomById(id: string): SymptomDef | undefined {
  return SYMPTOMS.find((s) => s.id === id);
}

export const SYMPTOM_IDS: readonly string[] = SYMPTOMS.map((s) => s.id);

/** The stages a symptom's fix may run: the symptom's own, and every cause's where it differs. */
export function allFixStages(s: SymptomDef): StageId[] {
  return [...new Set([...s.fixStages, ...s.causes.flatMap((c) => c.fixStages ?? [])])];
}
