/**
 * Doctor kinds for RDMA, NIC and host-software outputs (docs/DOCTOR.md "Kinds"): recognised by structure,
 * parsed by the src/parse parsers, checked by the output rules in src/rules/output. Detectors are cheap,
 * linear-time regex counts over the text; each scores by how much of the tool's fixed structure is present,
 * lowered slightly the later it starts (so the first output of a multi-output paste wins among equals).
 *
 * The kinds live under `rdma/` by tool family (ib ports, GIDs and netdev maps, QoS and bonding, ethtool,
 * perftest, host software, sysfs/ip/roce-validate); this index lists them in detection order.
 */
import type { KindDef } from '../types.js';
import { ethtool, ethtoolI, ethtoolS } from './rdma/ethtool.js';
import { ibdev2netdev, rdmaLink, showGids } from './rdma/gids-netdev.js';
import { cmaRoceMode, dkmsStatus, lsmod, lspci, modinfo, mstStatus, ofedInfo } from './rdma/host-software.js';
import { ibstat, ibstatus, ibvDevices, ibvDevinfo } from './rdma/ib-ports.js';
import { perftest } from './rdma/perftest.js';
import { bonding, mlnxQos } from './rdma/qos-bonding.js';
import { ipLink, roceValidate, showCounters, sysfsInfiniband } from './rdma/sysfs-ip.js';

export const rdmaKinds: KindDef[] = [
  ibstat,
  ibstatus,
  ibvDevices,
  ibvDevinfo,
  showGids,
  ibdev2netdev,
  rdmaLink,
  mlnxQos,
  bonding,
  ethtool,
  ethtoolS,
  ethtoolI,
  ofedInfo,
  lspci,
  perftest,
  lsmod,
  showCounters,
  sysfsInfiniband,
  modinfo,
  mstStatus,
  dkmsStatus,
  cmaRoceMode,
  ipLink,
  roceValidate,
] as KindDef[];
